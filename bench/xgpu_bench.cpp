// xgpu-bench: the runtime's costs on the selected backend and device (XGPU_BACKEND, XGPU_DEVICE):
// host-side launch overhead, cold compile, warm (disk cache) load, and copy bandwidth.
// Each figure is the median of several runs after a warm-up; bandwidth counts each byte read
// once and each byte written once, timed with device events.
//
//   xgpu-bench [--size-mib N] [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <xgpu/xgpu.hpp>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string unique_tag() {
    static std::mt19937_64 rng{std::random_device{}()};
    return std::to_string(rng());
}

const char* empty_src = "XGPU_KERNEL void empty(XGPU_GLOBAL float* a) { (void)a; }\n";

const char* copy_src = R"(
XGPU_KERNEL void copy_f64(XGPU_GLOBAL const double* XGPU_RESTRICT src, XGPU_GLOBAL double* XGPU_RESTRICT dst,
                          const uint64_t n) {
    const size_t i = XGPU_GLOBAL_ID(0);
    if (i < n) dst[i] = src[i];
}
)";

void row(const char* what, double value, const char* unit) {
    std::printf("| %s | %.3g %s |\n", what, value, unit);
}

} // namespace

int main(int argc, char** argv) try {
    std::size_t size_mib = 0;
    int reps = 21;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--size-mib"))
            size_mib = std::strtoull(argv[i + 1], nullptr, 10);
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: xgpu-bench [--size-mib N] [--reps N]\n");
            return 2;
        }
    }
    auto ctx = xgpu::Context::from_env();
    auto q = ctx.queue();
    const auto& dev = ctx.device().info();
    std::printf("xgpu-bench: %s on %s (%s, driver %s, %s)\n\n", ctx.backend().c_str(), dev.name.c_str(),
                dev.platform.c_str(), dev.driver_version.c_str(), dev.compiler_version.c_str());
    std::printf("| measure | value |\n|---|---|\n");

    // Launch overhead: host time per launch of an empty kernel, many in a row, then one finish.
    {
        auto k = ctx.compile(empty_src).kernel("empty");
        auto buf = ctx.alloc(256);
        const int batch = 2000;
        std::vector<double> per_launch_us;
        for (int r = 0; r < reps + 2; ++r) {
            q.finish();
            const auto t0 = Clock::now();
            for (int i = 0; i < batch; ++i)
                k.launch(q, xgpu::Grid{32, 32}, buf);
            q.finish();
            if (r >= 2) per_launch_us.push_back(ms_since(t0) * 1e3 / batch); // first two are warm-up
        }
        row("launch, host side (empty kernel, 2000 in a row, then finish)", median(per_launch_us), "us");
    }

    // Cold compile of a tiny kernel (cache off, new source each time) and warm load from the
    // disk cache into a fresh context (the memory cache is per context).
    {
        const char* old_cache = std::getenv("XGPU_CACHE");
        const std::string saved = old_cache ? old_cache : "";
        ::setenv("XGPU_CACHE", "off", 1);
        std::vector<double> cold;
        for (int r = 0; r < 5; ++r) {
            const std::string src = std::string(empty_src) + "// " + unique_tag() + "\n";
            const auto t0 = Clock::now();
            ctx.compile(src).kernel("empty");
            cold.push_back(ms_since(t0));
        }
        old_cache ? (void)::setenv("XGPU_CACHE", saved.c_str(), 1) : (void)::unsetenv("XGPU_CACHE");
        row("compile, cold (tiny kernel, cache off)", median(cold), "ms");

        std::vector<double> warm;
        bool from_disk = true;
        for (int r = 0; r < 7; ++r) {
            const std::string src = std::string(empty_src) + "// " + unique_tag() + "\n";
            ctx.compile(src); // compiles and stores to disk
            auto fresh = xgpu::Context::create(ctx.device());
            const auto t0 = Clock::now();
            auto p = fresh.compile(src);
            p.kernel("empty");
            warm.push_back(ms_since(t0));
            from_disk = from_disk && p.origin() == xgpu::ProgramOrigin::disk_cache;
        }
        if (from_disk)
            row("load, warm (disk cache, fresh context, kernel lookup included)", median(warm), "ms");
        else
            std::printf("| load, warm | cache not usable here (XGPU_CACHE=off or unwritable) |\n");
    }

    // Copy bandwidth: a queue copy and a one-element-per-work-item kernel copy, f64.
    {
        std::size_t bytes = size_mib ? size_mib << 20
                                     : std::size_t(std::min<std::uint64_t>(
                                           {std::uint64_t(1) << 30, dev.max_allocation, dev.global_memory / 4}));
        bytes = bytes / 4096 * 4096;
        auto a = ctx.alloc(bytes), b = ctx.alloc(bytes);
        std::vector<double> init(bytes / 8);
        std::mt19937_64 rng(42);
        std::uniform_real_distribution<double> u(-1, 1);
        for (auto& v : init)
            v = u(rng); // never time zeros
        q.write(a, init.data(), bytes);
        const double counted = 2.0 * double(bytes); // read once, written once

        std::vector<double> gbs;
        for (int r = 0; r < reps + 2; ++r) {
            auto e0 = q.marker();
            q.copy_async(a, b, bytes);
            auto e1 = q.marker();
            if (r >= 2) gbs.push_back(counted / (e0.elapsed_ms(e1) * 1e6));
        }
        char label[128];
        std::snprintf(label, sizeof label, "copy, queue (%zu MiB, read + write counted)", bytes >> 20);
        row(label, median(gbs), "GB/s");

        if (dev.fp64) {
            auto k = ctx.compile(copy_src).kernel("copy_f64");
            const std::uint64_t n = bytes / 8;
            const std::size_t wg = 256, global = (n + wg - 1) / wg * wg;
            gbs.clear();
            for (int r = 0; r < reps + 2; ++r) {
                auto e0 = q.marker();
                k.launch(q, xgpu::Grid{global, wg}, a, b, n);
                auto e1 = q.marker();
                if (r >= 2) gbs.push_back(counted / (e0.elapsed_ms(e1) * 1e6));
            }
            std::snprintf(label, sizeof label, "copy, kernel f64 (%zu MiB, one element per work-item)", bytes >> 20);
            row(label, median(gbs), "GB/s");
        }
    }
    return 0;
} catch (const xgpu::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
