// viennacl-spmv: ViennaCL 1.7's SpMV (compressed_matrix, OpenCL backend) on the 2-D 5-point
// Poisson matrix, f64, counted as spmv-bench counts (values and column indices once, row
// pointers once, x and y once each), median of 21 samples of about 10 ms after a warm-up of about
// half a second, wall time around a finished queue. Built when Debian's header-only
// libviennacl-dev is installed; run it beside spmv-bench on the same device (ViennaCL takes
// OpenCL's first GPU, else its first device); scripts/pocl-spmv-bench.sh does.
//
//   viennacl-spmv [N]      (N x N grid, default 1024)
#define VIENNACL_WITH_OPENCL
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <viennacl/compressed_matrix.hpp>
#include <viennacl/linalg/prod.hpp>
#include <viennacl/ocl/backend.hpp>
#include <viennacl/vector.hpp>

#include "viennacl_poisson.hpp"

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 1024, rows = n * n;
    const std::size_t m = std::size_t(rows);
    const viennacl::compressed_matrix<double> a = viennacl_poisson(n);
    viennacl::vector<double> x = viennacl::scalar_vector<double>(m, 1.0);
    viennacl::vector<double> y(m);
    // Warm-up: 3 products, then about half a second of them (the machine's clock and scheduling
    // ramp up under load); then 21 samples of `batch` products each (about 10 ms a sample).
    for (int r = 0; r < 3; ++r)
        y = viennacl::linalg::prod(a, x);
    viennacl::backend::finish();
    int batch = 1;
    {
        const auto t0 = std::chrono::steady_clock::now();
        int calls = 0;
        double spent = 0;
        while (spent < 500) {
            y = viennacl::linalg::prod(a, x);
            viennacl::backend::finish();
            ++calls;
            spent = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        }
        batch = std::max(1, int(10.0 / (spent / calls) + 0.5));
    }
    std::vector<double> ms;
    for (int r = 0; r < 21; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < batch; ++k)
            y = viennacl::linalg::prod(a, x);
        viennacl::backend::finish();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / batch);
    }
    std::sort(ms.begin(), ms.end());
    const double t = ms[ms.size() / 2], nnz = double(a.nnz()), lo = ms.front(), hi = ms.back();
    const double bytes = nnz * (8 + 4) + double(rows + 1) * 4 + double(rows) * 16;
    std::printf("viennacl-spmv: ViennaCL 1.7 on %s, 2-D Poisson %ldx%ld (f64)\n\n| work | ms | GB/s | GFLOP/s |\n"
                "|---|---|---|---|\n| ViennaCL compressed_matrix SpMV | %.3f | %.1f | %.2f |\n\n"
                "spread: %.3f-%.3f ms, %d products a sample\nresult: viennacl_spmv_gbps=%.3f\n",
                viennacl::ocl::current_device().name().c_str(), n, n, t, bytes / (t * 1e6), 2 * nnz / (t * 1e6), lo, hi,
                batch, bytes / (t * 1e6));
    return 0;
}
