// spmv-bench: y = A*x on the selected backend and device, f64 with int32 indices, in each format
// and the automatic choice, in effective GB/s (values, column indices, row pointers, x and y each
// counted once) and GFLOP/s (2 per entry), median of timed runs after a warm-up, timed with device
// events; beside a streaming kernel in the same run; the time to build each matrix and each
// format's layout (sell, packeted: partition included), and the packeted remainder's share.
//
// Matrices:
//   poisson   the 2-D 5-point Laplacian on an N x N grid (Dirichlet), rows in natural order; and the
//             same operator matrix-free (xgpu::Laplacian2D), counted as its vectors only;
//   powerlaw  2^P rows whose lengths follow a Pareto law (shape 1.5, at least 2 entries: mean
//             about 6, the longest tens of thousands), columns uniform at random, values in
//             [-1, 1), all from a fixed seed (std::mt19937_64, so every run builds the same one).
//
//   spmv-bench [--n N] [--p P] [--reps R] [--save DIR]
//     N: grid side (default 4096 on GPUs, 1024 on CPUs); P: log2 of the power-law rows (default
//     24 on GPUs, 20 on CPUs; 0 skips it); --save: write each matrix's CSR arrays as raw files
//     DIR/<name>.{row_ptr,col_idx,values} for the CuPy peer (bench/peers/cupy_spmv.py).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <xgpu/array.hpp>
#include <xgpu/codegen.hpp>
#include <xgpu/operator.hpp>
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
        work(); // untimed, ahead: the start marker then waits for the device, not for the host's launch
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

// Pareto row lengths (shape 1.5, scale 2), capped at the column count; uniform random columns,
// sorted and distinct within a row.
xgpu::sparse::HostCsr<double> powerlaw(std::int64_t rows) {
    std::mt19937_64 rng(20261201);
    std::uniform_real_distribution<double> unit(0.0, 1.0), value(-1.0, 1.0);
    std::uniform_int_distribution<std::int64_t> column(0, rows - 1);
    xgpu::sparse::HostCsr<double> h;
    h.rows = h.cols = rows;
    h.row_ptr.assign(1, 0);
    h.row_ptr.reserve(std::size_t(rows + 1));
    std::vector<std::int32_t> cols;
    for (std::int64_t r = 0; r < rows; ++r) {
        const double u = 1.0 - unit(rng); // (0, 1]
        const auto len = std::int64_t(std::min(double(rows), std::floor(2.0 / std::pow(u, 1.0 / 1.5))));
        cols.clear();
        for (std::int64_t k = 0; k < len; ++k)
            cols.push_back(std::int32_t(column(rng)));
        std::sort(cols.begin(), cols.end());
        cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
        for (auto c : cols) {
            h.col_idx.push_back(c);
            h.values.push_back(value(rng));
        }
        h.row_ptr.push_back(std::int32_t(h.col_idx.size()));
    }
    return h;
}

template <class V> void save(const std::string& path, const std::vector<V>& v) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(V)));
    if (!out) throw std::runtime_error("spmv-bench: cannot write " + path);
}

// One matrix: the streaming kernel, each format and the automatic choice, the build times.
void run(const xgpu::Context& ctx, const std::string& name, const xgpu::sparse::HostCsr<double>& h, double host_ms,
         int reps, const std::string& save_dir) {
    const auto st = xgpu::sparse::row_stats(h);
    std::printf("\n%s: %lld rows, %lld entries, row length min %lld mean %.1f max %lld (sd %.1f)\n\n", name.c_str(),
                (long long)h.rows, (long long)h.nnz(), (long long)st.min, st.mean, (long long)st.max, st.stddev);
    if (!save_dir.empty()) {
        save(save_dir + "/" + name + ".row_ptr", h.row_ptr);
        save(save_dir + "/" + name + ".col_idx", h.col_idx);
        save(save_dir + "/" + name + ".values", h.values);
    }
    const auto t0 = std::chrono::steady_clock::now();
    xgpu::sparse::Csr<double> a(ctx, h);
    ctx.queue().finish();
    const double upload_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double rows = double(h.rows), nnz = double(h.nnz());
    auto x = xgpu::full<double>(ctx, {std::size_t(h.cols)}, 1.0), y = xgpu::empty<double>(ctx, {std::size_t(h.rows)});
    // Counted bytes: values and indices once, row pointers once, x and y once each.
    const double bytes = nnz * (8 + 4) + (rows + 1) * 4 + (double(h.cols) + rows) * 8;
    std::printf("| work | ms | GB/s | GFLOP/s |\n|---|---|---|---|\n");
    const double triad = time_ms(ctx, reps, [&] { y = x + 0.5 * x; });
    std::printf("| streaming `y = x + 0.5*x` (2 vectors counted) | %.3f | %.0f | |\n", triad,
                rows * 16 / (triad * 1e6));
    for (auto f : {xgpu::sparse::Format::csr_scalar, xgpu::sparse::Format::csr_vector, xgpu::sparse::Format::merge_path,
                   xgpu::sparse::Format::sell, xgpu::sparse::Format::packeted, xgpu::sparse::Format::automatic}) {
        const auto plan = xgpu::sparse::plan_spmv(a, f);
        const double ms = time_ms(ctx, reps, [&] { xgpu::sparse::spmv(a, x, y, 1.0, 0.0, f); });
        char shape[96]; // packeted: the packet size and the share of entries left to the remainder
        if (plan.format == xgpu::sparse::Format::packeted)
            std::snprintf(shape, sizeof shape, "packets of <= %lld rows, remainder %.2f%%", (long long)plan.packet_rows,
                          100 * a.remainder_share().value_or(0));
        else
            std::snprintf(shape, sizeof shape, "%u lanes", plan.lanes);
        std::printf("| spmv %s (%s, %s) | %.3f | %.0f | %.1f |\n", xgpu::sparse::name(f),
                    xgpu::sparse::name(plan.format), shape, ms, bytes / (ms * 1e6), 2 * nnz / (ms * 1e6));
    }
    std::printf("\nbuild: host CSR %.0f ms, upload (with row statistics and diagonal) %.0f ms", host_ms, upload_ms);
    for (auto f : {xgpu::sparse::Format::sell, xgpu::sparse::Format::packeted})
        if (const auto ms = a.build_ms(f)) std::printf(", %s layout %.0f ms", xgpu::sparse::name(f), *ms);
    std::printf("\n");
}

template <class F> double ms_of(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char** argv) try {
    auto ctx = xgpu::Context::from_env();
    const bool cpu = ctx.device().type() == xgpu::DeviceType::cpu;
    std::int64_t n = cpu ? 1024 : 4096;
    int p = cpu ? 20 : 24, reps = 21;
    std::string save_dir;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--n"))
            n = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--p"))
            p = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--save"))
            save_dir = argv[i + 1];
    }
    std::printf("spmv-bench: %s on %s (f64 values, int32 indices)\n", ctx.backend().c_str(),
                ctx.device().name().c_str());

    xgpu::sparse::HostCsr<double> h;
    double host_ms = ms_of([&] { h = poisson(n); });
    run(ctx, "poisson" + std::to_string(n), h, host_ms, reps, save_dir);
    {
        // The same operator matrix-free: x read and y written once each (neighbours come from cache).
        xgpu::Laplacian2D<double> lap(ctx, n, n);
        auto x = xgpu::full<double>(ctx, {std::size_t(n * n)}, 1.0), y = xgpu::empty<double>(ctx, {std::size_t(n * n)});
        const double ms = time_ms(ctx, reps, [&] { lap.apply(x, y); });
        std::printf("| matrix-free 5-point stencil (x and y counted) | %.3f | %.0f | %.1f |\n", ms,
                    double(n * n) * 16 / (ms * 1e6), double(h.nnz()) * 2 / (ms * 1e6));
        if (!cpu) // the same kernel under other shapes: work-group size, points walked per work-item
            for (unsigned g : {128u, 256u, 512u})
                for (unsigned walk : {1u, 2u, 4u, 8u, 16u}) {
                    xgpu::LaunchShape shape;
                    shape.group_size = g;
                    shape.items = walk;
                    xgpu::LaunchShapeScope scope(xgpu::KernelFamily::stencil, shape);
                    const double t = time_ms(ctx, reps, [&] { lap.apply(x, y); });
                    std::printf("| matrix-free 5-point stencil, shape %s | %.3f | %.0f | %.1f |\n", shape.key().c_str(),
                                t, double(n * n) * 16 / (t * 1e6), double(h.nnz()) * 2 / (t * 1e6));
                }
    }
    if (p > 0) {
        host_ms = ms_of([&] { h = powerlaw(std::int64_t(1) << p); });
        run(ctx, "powerlaw" + std::to_string(p), h, host_ms, reps, save_dir);
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
