// spgemm-bench: the sparse matrix-matrix product C = A * B (sparse::multiply) on the products a
// multigrid setup makes: A * A of the Poisson matrix, and the finest level's Galerkin products
// A * P and R * (A P) of the smoothed aggregation hierarchy (xgpu/amg.hpp), on the default device.
//
//   spgemm-bench [--2d N | --3d N] [--repeat R] [--save DIR]
//
// Each product runs once untimed, then R times; the median's wall time (the host's clock around
// the call, the device finished before and after: both passes, the allocation of C, the host's
// read of C's size) is printed with C's size and the multiply-adds per second (one per pair of an
// entry a_ik and an entry of B's row k). --save DIR writes the operands (row pointers, columns and
// values as raw int32 / float64 files) for bench/peers/cupy_spgemm.py, cuSPARSE's figures on the
// same matrices.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <xgpu/amg.hpp>
#include <xgpu/sparse.hpp>

using namespace xgpu;

namespace {

// Multiply-adds of A * B: for each entry a_ik, the length of B's row k.
double products(const sparse::HostCsr<double>& a, const sparse::HostCsr<double>& b) {
    double n = 0;
    for (const std::int32_t k : a.col_idx)
        n += double(b.row_ptr[std::size_t(k) + 1] - b.row_ptr[std::size_t(k)]);
    return n;
}

template <class V> void write(const std::string& path, const std::vector<V>& v) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(V)));
    if (!f) throw Error("spgemm-bench: cannot write " + path);
}

void save(const std::string& dir, const std::string& name, const sparse::HostCsr<double>& m) {
    write(dir + "/" + name + ".row_ptr", m.row_ptr);
    write(dir + "/" + name + ".col_idx", m.col_idx);
    write(dir + "/" + name + ".values", m.values);
    std::ofstream(dir + "/" + name + ".shape") << m.rows << " " << m.cols << "\n";
}

void time_product(const Context& ctx, const char* label, const sparse::Csr<double>& a, const sparse::Csr<double>& b,
                  int repeat) {
    const double count = products(a.to_host(), b.to_host());
    sparse::Csr<double> c = sparse::multiply(a, b); // warm-up: kernels compiled, memory pooled
    std::vector<double> times;
    for (int k = 0; k < repeat; ++k) {
        ctx.current_queue().finish();
        const auto t0 = std::chrono::steady_clock::now();
        c = sparse::multiply(a, b);
        ctx.current_queue().finish();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const double t = times[times.size() / 2];
    std::printf("| %s | %lld x %lld | %zu | %lld x %lld | %zu | %.3f | %.2f |\n", label, (long long)a.rows(),
                (long long)a.cols(), a.nnz(), (long long)c.rows(), (long long)c.cols(), c.nnz(), t * 1e3,
                count / t * 1e-9);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    std::int64_t n2 = 0, n3 = 0;
    int repeat = 11;
    std::string dir;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!value) {
            std::fprintf(stderr, "spgemm-bench: %s needs a value\n", arg.c_str());
            return 1;
        }
        if (arg == "--2d")
            n2 = std::atoll(value);
        else if (arg == "--3d")
            n3 = std::atoll(value);
        else if (arg == "--repeat")
            repeat = std::max(1, std::atoi(value));
        else if (arg == "--save")
            dir = value;
        else {
            std::fprintf(stderr, "spgemm-bench: unknown option %s\n", arg.c_str());
            return 1;
        }
        ++i;
    }
    try {
        const Context ctx = Context::from_env();
        if (!n2 && !n3) n2 = ctx.device().type() == DeviceType::cpu ? 1024 : 4096;
        const sparse::Csr<double> a(ctx, n2 ? sparse::poisson<double>(n2, n2) : sparse::poisson<double>(n3, n3, n3));
        const amg::SmoothedAggregation<double> ml(a);
        const sparse::Csr<double> p = ml.prolongator_at(0), r = ml.restriction_at(0);
        const sparse::Csr<double> ap = sparse::multiply(a, p);
        std::printf("%s, %s: %s Poisson %lld^%d, f64, median of %d after a warm-up\n\n", ctx.backend().c_str(),
                    ctx.device().name().c_str(), n2 ? "2-D" : "3-D", (long long)(n2 ? n2 : n3), n2 ? 2 : 3, repeat);
        std::printf(
            "| product | left | left nnz | C | C nnz | ms | G multiply-adds/s |\n|---|---|---|---|---|---|---|\n");
        time_product(ctx, "A * A", a, a, repeat);
        time_product(ctx, "A * P", a, p, repeat);
        time_product(ctx, "R * (A P)", r, ap, repeat);
        if (!dir.empty()) {
            std::filesystem::create_directories(dir);
            save(dir, "A", a.to_host());
            save(dir, "P", p.to_host());
            save(dir, "R", r.to_host());
            save(dir, "AP", ap.to_host());
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "spgemm-bench: %s\n", e.what());
        return 1;
    }
}
