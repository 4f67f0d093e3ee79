// viennacl-cg: ViennaCL 1.7's CG (viennacl::linalg::cg_tag, no preconditioner, f64; for a
// compressed_matrix ViennaCL runs its pipelined CG: 2 kernels and one host read of the partial
// dot products an iteration) on the 2-D 5-point Poisson matrix N x N (rows in natural order, 4 on
// the diagonal, -1 for each neighbour, Dirichlet: the matrix examples/poisson builds), on OpenCL's
// device (ViennaCL takes the first GPU, else the first device: PoCL on a CPU machine); beside the
// raw triad bandwidth of the same device, measured with a plain OpenCL kernel, and the time to
// stream a classic CG iteration's bytes once at that bandwidth. Built when Debian's header-only
// libviennacl-dev is installed; scripts/pocl-cg-bench.sh runs it beside examples/poisson.
//
//   viennacl-cg [N] [iterations] [solves] [triad-log2]
//     N: grid side (default 1024); iterations: per timed solve (default 200; the tolerance is 0,
//     so every solve runs them all); solves: timed pairs (default 3; 0: the triad alone); triad-log2: the triad's
//     vector length (default 25: 2^25 doubles, 768 MiB over three vectors, far beyond the caches).
//
// Timing (wall clock around a finished queue, after a warm-up solve): each timed pair is a solve
// of `short` = 20 iterations and one of 20 + iterations; the figure per iteration is the
// difference over `iterations` (the setup, a product and three reductions and the allocation of
// the solver's vectors, cancels), median of the pairs; the long solve's whole time over its
// iterations is printed too.
//
// Triad: a[i] = b[i] + s*c[i], one element per work-item, work-groups of 256 (the fastest shape on
// PoCL, as `array-bench --sweep` shows), 3 vectors counted (b, c read, a written), median of 11 after 3 warm-ups.
//
// Streaming bound of a CG iteration: the matrix once (values 8 and column indices 4 bytes per
// entry, row pointers 4 bytes per row + 4) plus the 11 vector passes a classic CG iteration must
// make with p.q fused into q = A p (p read and q written by the product; x, p, r, q read and x, r
// written by the update with r.r; r, p read and p written by the new direction), at the triad's
// bandwidth; and the same without the matrix (the matrix-free stencil: its 11 vector passes).
#define VIENNACL_WITH_OPENCL
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <viennacl/compressed_matrix.hpp>
#include <viennacl/linalg/cg.hpp>
#include <viennacl/linalg/prod.hpp>
#include <viennacl/ocl/backend.hpp>
#include <viennacl/vector.hpp>

#include "viennacl_poisson.hpp"

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class F> double wall_ms(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    viennacl::backend::finish();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

const char* triad_source = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                           "__kernel void triad(__global double* a, __global const double* b,\n"
                           "                    __global const double* c, double s) {\n"
                           "    const size_t i = get_global_id(0);\n"
                           "    a[i] = b[i] + s * c[i];\n"
                           "}\n";

} // namespace

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 1024, rows = n * n;
    const unsigned iterations = argc > 2 ? unsigned(std::atol(argv[2])) : 200u, shortrun = 20;
    const int solves = argc > 3 ? std::atoi(argv[3]) : 3;
    const int triad_log2 = argc > 4 ? std::atoi(argv[4]) : 25;

    // The triad first, on vectors far beyond the caches.
    const std::size_t tn = std::size_t(1) << triad_log2;
    double triad_ms = 0;
    {
        viennacl::ocl::context& ctx = viennacl::ocl::current_context();
        ctx.add_program(triad_source, "xgpu_peer_triad");
        viennacl::ocl::kernel& k = ctx.get_kernel("xgpu_peer_triad", "triad");
        k.local_work_size(0, 256);
        k.global_work_size(0, tn);
        viennacl::vector<double> a = viennacl::scalar_vector<double>(tn, 0.0);
        viennacl::vector<double> b = viennacl::scalar_vector<double>(tn, 1.0);
        viennacl::vector<double> c = viennacl::scalar_vector<double>(tn, 2.0);
        std::vector<double> ms;
        for (int r = 0; r < 14; ++r) {
            const double t = wall_ms([&] { viennacl::ocl::enqueue(k(a, b, c, 0.5)); });
            if (r >= 3) ms.push_back(t);
        }
        triad_ms = median(ms);
        if (double(a[tn - 1]) != 2.0) {
            std::fprintf(stderr, "viennacl-cg: the triad computed %g, not 2\n", double(a[tn - 1]));
            return 1;
        }
    }
    const double triad_gbps = 3.0 * 8.0 * double(tn) / (triad_ms * 1e6);
    if (solves <= 0) { // the triad alone
        std::printf("viennacl-cg: triad `a = b + s*c` on %s, 2^%d doubles (3 vectors counted): %.3f ms, %.1f GB/s\n"
                    "\nresult: triad_gbps=%.3f\n",
                    viennacl::ocl::current_device().name().c_str(), triad_log2, triad_ms, triad_gbps, triad_gbps);
        return 0;
    }

    const std::size_t m = std::size_t(rows);
    const viennacl::compressed_matrix<double> a = viennacl_poisson(n);
    // b = A * ones: any right-hand side will do, the iterations run to the count either way.
    viennacl::vector<double> ones = viennacl::scalar_vector<double>(m, 1.0);
    viennacl::vector<double> b = viennacl::linalg::prod(a, ones);
    viennacl::vector<double> x(m);

    unsigned taken = 0;
    const auto solve = [&](unsigned its) {
        viennacl::linalg::cg_tag tag(0.0, its);
        return wall_ms([&] {
            x = viennacl::linalg::solve(a, b, tag);
            taken = tag.iters();
        });
    };
    solve(shortrun); // warm-up: the programs are compiled here
    std::vector<double> diff, whole;
    for (int r = 0; r < solves; ++r) {
        const double t0 = solve(shortrun);
        const double t1 = solve(shortrun + iterations);
        if (taken != shortrun + iterations) {
            std::fprintf(stderr, "viennacl-cg: the solve stopped after %u iterations, not %u\n", taken,
                         shortrun + iterations);
            return 1;
        }
        diff.push_back((t1 - t0) / iterations);
        whole.push_back(t1 / (shortrun + iterations));
    }
    const double per_it = median(diff), per_it_whole = median(whole);

    const double nnz = double(a.nnz());
    const double matrix_bytes = nnz * (8 + 4) + double(rows + 1) * 4, vector_bytes = 11.0 * 8.0 * double(rows);
    const double stream_ms = (matrix_bytes + vector_bytes) / (triad_gbps * 1e6);
    const double stream_free_ms = vector_bytes / (triad_gbps * 1e6);

    std::printf("viennacl-cg: ViennaCL 1.7 on %s, 2-D Poisson %ldx%ld (f64), %u iterations a solve\n\n",
                viennacl::ocl::current_device().name().c_str(), n, n, shortrun + iterations);
    std::printf("| work | ms | GB/s |\n|---|---|---|\n");
    std::printf("| triad `a = b + s*c`, 2^%d doubles (3 vectors counted) | %.3f | %.1f |\n", triad_log2, triad_ms,
                triad_gbps);
    std::printf("| ViennaCL CG, per iteration (difference of %u- and %u-iteration solves) | %.3f | |\n", shortrun,
                shortrun + iterations, per_it);
    std::printf("| ViennaCL CG, per iteration (whole %u-iteration solve) | %.3f | |\n", shortrun + iterations,
                per_it_whole);
    std::printf("| CG iteration streamed once at the triad's bandwidth: matrix %.1f MB + 11 vectors %.1f MB | %.3f | "
                "|\n",
                matrix_bytes * 1e-6, vector_bytes * 1e-6, stream_ms);
    std::printf("| the same without the matrix (matrix-free: 11 vectors) | %.3f | |\n", stream_free_ms);
    std::printf("\nspread of the per-iteration differences: %.3f to %.3f ms\n",
                *std::min_element(diff.begin(), diff.end()), *std::max_element(diff.begin(), diff.end()));
    // One line for scripts: key=value.
    std::printf("\nresult: triad_gbps=%.3f viennacl_cg_ms=%.4f viennacl_cg_whole_ms=%.4f stream_ms=%.4f "
                "stream_free_ms=%.4f\n",
                triad_gbps, per_it, per_it_whole, stream_ms, stream_free_ms);
    return 0;
}
