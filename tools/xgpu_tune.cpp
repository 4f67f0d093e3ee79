// xgpu-tune: tunes the library's own kernel families (elementwise, reduction and scan launch
// shapes, for float32 and float64 where the device has it) on the selected device (XGPU_BACKEND, XGPU_DEVICE)
// within a budget, stores the winners in the tuning database, and prints a markdown table of
// winners against the defaults; exports and imports the database.
//
//   xgpu-tune [--budget SECONDS] [--n ELEMENTS] [--export FILE] [--import FILE]
//
// --budget: the whole run's tuning time, shared among the families (default 20; 0 tunes nothing,
// for a plain --import or --export). --n: the problem size tuned for (default 2^24, less where
// the device's memory is small). --import merges FILE into the database before tuning; --export
// writes the database to FILE after it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <xgpu/tune.hpp>
#include <xgpu/xgpu.hpp>

namespace {

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "xgpu-tune: %s\nusage: xgpu-tune [--budget SECONDS] [--n ELEMENTS] [--export FILE] [--import FILE]\n",
                 why);
    std::exit(2);
}

double gbs(double bytes, double ms) {
    return ms > 0 ? bytes / (ms * 1e6) : 0;
}

} // namespace

int main(int argc, char** argv) try {
    double budget = 20;
    std::uint64_t n = 0;
    std::string export_file, import_file;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (!std::strcmp(argv[i], "--budget") && has_value) {
            char* end = nullptr;
            budget = std::strtod(argv[++i], &end);
            if (*end || budget < 0) usage("--budget takes a number of seconds");
        } else if (!std::strcmp(argv[i], "--n") && has_value) {
            n = std::strtoull(argv[++i], nullptr, 10);
            if (!n) usage("--n takes a positive number of elements");
        } else if (!std::strcmp(argv[i], "--export") && has_value) {
            export_file = argv[++i];
        } else if (!std::strcmp(argv[i], "--import") && has_value) {
            import_file = argv[++i];
        } else {
            usage((std::string("unknown argument ") + argv[i]).c_str());
        }
    }
    if (!import_file.empty()) {
        std::ifstream in(import_file, std::ios::binary);
        if (!in) usage(("cannot read " + import_file).c_str());
        // Read no more than a database may hold (one byte more tells it is too large), so that
        // naming a device or a huge file costs no memory.
        std::string text(xgpu::tune::database_size_limit + 1, '\0');
        in.read(text.data(), std::streamsize(text.size()));
        if (in.bad()) usage(("cannot read " + import_file).c_str());
        text.resize(std::size_t(in.gcount()));
        xgpu::tune::import_database(text);
        std::printf("imported %s into %s\n", import_file.c_str(), xgpu::tune::database_path().c_str());
    }
    if (budget > 0) {
        auto ctx = xgpu::Context::from_env();
        const auto& dev = ctx.device().info();
        if (!n) n = std::min<std::uint64_t>({std::uint64_t(1) << 24, dev.max_allocation / 8, dev.global_memory / 64});
        std::vector<std::pair<xgpu::KernelFamily, xgpu::DType>> work;
        for (auto f : {xgpu::KernelFamily::elementwise, xgpu::KernelFamily::reduction, xgpu::KernelFamily::scan})
            for (auto t : {xgpu::DType::float32, xgpu::DType::float64})
                if (t != xgpu::DType::float64 || dev.fp64) work.emplace_back(f, t);
        std::printf("xgpu-tune: %s on %s (%s), n = %llu, budget %.1f s, database %s\n\n", ctx.backend().c_str(),
                    dev.name.c_str(), dev.driver_version.c_str(), static_cast<unsigned long long>(n), budget,
                    xgpu::tune::database_path().empty() ? "(memory only: XGPU_CACHE=off)"
                                                        : xgpu::tune::database_path().c_str());
        std::printf("| family | type | default | GB/s | winner | GB/s | speed-up | evaluated | rejected | strategy | "
                    "seconds |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < work.size(); ++i) {
            const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            xgpu::tune::Options o;
            o.budget.seconds = std::max((budget - spent) / double(work.size() - i), 0.01);
            const auto [family, type] = work[i];
            const auto t = xgpu::tune::tune_shape(ctx, family, type, n, o);
            const auto& r = t.result;
            std::printf("| %s | %s | %s | %.1f | %s | %.1f | %.2f | %zu | %zu | %s | %.1f |\n", xgpu::name(family),
                        xgpu::name(type), xgpu::tune::to_shape(r.start).key().c_str(), gbs(t.bytes, r.start_ms),
                        xgpu::tune::to_shape(r.best).key().c_str(), gbs(t.bytes, r.best_ms),
                        r.best_ms > 0 ? r.start_ms / r.best_ms : 0.0, r.evaluations.size(), r.failed.size(),
                        r.strategy == xgpu::tune::Strategy::exhaustive ? "exhaustive" : "search", r.seconds);
            for (const auto& f : r.failed)
                std::printf("\nrejected %s: %s\n", xgpu::tune::to_string(f.point).c_str(), f.reason.c_str());
        }
        std::printf("\ntuning took %.1f s\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (!export_file.empty()) {
        std::ofstream out(export_file);
        out << xgpu::tune::export_database();
        if (!out) usage(("cannot write " + export_file).c_str());
        std::printf("exported the database to %s\n", export_file.c_str());
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "xgpu-tune: %s\n", e.what());
    return 1;
}
