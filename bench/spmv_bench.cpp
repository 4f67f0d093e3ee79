// spmv-bench: y = A*x on the selected backend and device for the 2-D 5-point Poisson matrix in
// CSR (f64, int32 indices), in each format and the automatic choice, in effective GB/s (values,
// column indices, row pointers, x and y each counted once) and GFLOP/s (2 per entry), median of
// timed runs after a warm-up, timed with device events; beside the raw triad z = x + a*y in the
// same run; and the time to build the matrix on the host and upload it.
//
//   spmv-bench [--n N] [--reps N]      (N x N grid; default 4096 on GPUs, 1024 on CPUs)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include <xgpu/array.hpp>
#include <xgpu/sparse.hpp>

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median milliseconds of `work` on the device.
double time_ms(const xgpu::Context& ctx, int reps, const std::function<void()>& work) {
    auto q = ctx.queue();
    for (int r = 0; r < 3; ++r)
        work();
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        auto e0 = q.marker();
        work();
        auto e1 = q.marker();
        ms.push_back(e0.elapsed_ms(e1));
    }
    return median(ms);
}

// The 5-point Laplacian on an n x n grid (Dirichlet boundary), rows in natural order.
xgpu::sparse::HostCsr<double> poisson(std::int64_t n) {
    xgpu::sparse::HostCsr<double> h;
    h.rows = h.cols = n * n;
    h.row_ptr.assign(1, 0);
    h.row_ptr.reserve(std::size_t(n * n + 1));
    h.col_idx.reserve(std::size_t(5 * n * n));
    h.values.reserve(std::size_t(5 * n * n));
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t r = i * n + j;
            auto put = [&](std::int64_t c, double v) {
                h.col_idx.push_back(std::int32_t(c));
                h.values.push_back(v);
            };
            if (i > 0) put(r - n, -1);
            if (j > 0) put(r - 1, -1);
            put(r, 4);
            if (j + 1 < n) put(r + 1, -1);
            if (i + 1 < n) put(r + n, -1);
            h.row_ptr.push_back(std::int32_t(h.col_idx.size()));
        }
    return h;
}

} // namespace

int main(int argc, char** argv) try {
    auto ctx = xgpu::Context::from_env();
    const bool cpu = ctx.device().type() == xgpu::DeviceType::cpu;
    std::int64_t n = cpu ? 1024 : 4096;
    int reps = 21;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--n"))
            n = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
    }
    std::printf("spmv-bench: %s on %s, 2-D Poisson %lldx%lld (f64, int32)\n\n", ctx.backend().c_str(),
                ctx.device().name().c_str(), (long long)n, (long long)n);

    const auto t0 = std::chrono::steady_clock::now();
    const auto h = poisson(n);
    const auto t1 = std::chrono::steady_clock::now();
    xgpu::sparse::Csr<double> a(ctx, h);
    ctx.queue().finish();
    const auto t2 = std::chrono::steady_clock::now();
    const double rows = double(h.rows), nnz = double(h.nnz());
    auto x = xgpu::full<double>(ctx, {std::size_t(h.rows)}, 1.0), y = xgpu::empty<double>(ctx, {std::size_t(h.rows)});

    // Counted bytes: values and indices once, row pointers once, x and y once each.
    const double bytes = nnz * (8 + 4) + (rows + 1) * 4 + rows * 8 * 2;
    std::printf("| work | ms | GB/s | GFLOP/s |\n|---|---|---|---|\n");
    const double triad = time_ms(ctx, reps, [&] { y = x + 0.5 * x; });
    std::printf("| raw triad-like `y = x + 0.5*x` (2 vectors counted) | %.3f | %.0f | |\n", triad,
                rows * 16 / (triad * 1e6));
    for (auto f : {xgpu::sparse::Format::csr_scalar, xgpu::sparse::Format::csr_vector, xgpu::sparse::Format::merge_path,
                   xgpu::sparse::Format::sell, xgpu::sparse::Format::automatic}) {
        const auto plan = xgpu::sparse::plan_spmv(a, f);
        const double ms = time_ms(ctx, reps, [&] { xgpu::sparse::spmv(a, x, y, 1.0, 0.0, f); });
        std::printf("| spmv %s (%s, %u lanes) | %.3f | %.0f | %.1f |\n", xgpu::sparse::name(f),
                    xgpu::sparse::name(plan.format), plan.lanes, ms, bytes / (ms * 1e6), 2 * nnz / (ms * 1e6));
    }
    std::printf("\nbuild: host CSR %.0f ms, upload (with row statistics and diagonal) %.0f ms\n",
                std::chrono::duration<double, std::milli>(t1 - t0).count(),
                std::chrono::duration<double, std::milli>(t2 - t1).count());
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
