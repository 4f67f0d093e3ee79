// algorithm-bench: sorts and the algorithms on them, and reductions along axes, on the selected
// backend and device. Sorts in GKeys/s (keys sorted per second) and as a fraction of the traffic
// bound: a one-sweep LSD radix sort reads the keys once for its digit histograms and reads and
// writes keys (and values) once per 8-bit digit, at the bandwidth of a copy measured in the same
// run; unique, histogram and the reductions as a fraction of that copy's bandwidth, bytes counted
// as each input read once. Medians of timed runs after a warm-up, device time from events, on fresh
// random data (uniform bits; floats uniform in [-1, 1]).
//
//   algorithm-bench [--n N] [--reps N]
//
// --n: the keys of the 1-D sorts of uint32, float32 and uint64 and of the histogram (default 2^28
// on GPUs, 2^24 on CPUs); sort_by_key, argsort and unique take n / 4, the rows n / 256 rows of 64
// float32 keys, the reductions a square float32 matrix of n / 1 elements (16384^2 at the default).
// bench/peers/cupy_algorithms.py and bench/peers/cub_sort.cu measure the same rows with CuPy and
// CUB; bench/peers/pyopencl_sort.py PyOpenCL's RadixSort and numpy's stable sort on the CPU.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cmath>

#include "timing.hpp"

#include <xgpu/algorithm.hpp>
#include <xgpu/array.hpp>
#include <xgpu/random.hpp>
#include <xgpu/reduction.hpp>
#include <xgpu/sort.hpp>

namespace {

using xgpu::bench::median;

// Median device time of `work` in ms, after a warm-up.
double time_ms(const xgpu::Context& ctx, int reps, const std::function<void()>& work) {
    return xgpu::bench::median_ms(ctx.queue(), reps, work, 2);
}

struct Row {
    std::string work;
    double n, ms, bytes; // keys, time, the one-sweep bound's bytes
};

} // namespace

int main(int argc, char** argv) {
    auto ctx = xgpu::Context::from_env();
    const bool cpu = ctx.device().info().type == xgpu::DeviceType::cpu;
    std::size_t n = cpu ? std::size_t(1) << 24 : std::size_t(1) << 28;
    int reps = cpu ? 5 : 15;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--n" && i + 1 < argc)
            n = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--reps" && i + 1 < argc)
            reps = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: algorithm-bench [--n N] [--reps N]\n");
            return 2;
        }
    }
    xgpu::Philox gen(ctx, 2026);
    std::printf("algorithm-bench: %s, %s\n", ctx.backend().c_str(), ctx.device().name().c_str());

    // The copy's bandwidth: the traffic bound's speed.
    const auto big = gen.uniform<double>({n / 2});
    auto copy = xgpu::empty<double>(ctx, {n / 2});
    const double copy_ms = time_ms(ctx, reps, [&] { copy.assign(big); });
    const double copy_gbs = 2.0 * 8 * double(n / 2) / (copy_ms * 1e6);

    std::vector<Row> rows;
    const auto bound = [](double keys, double key_bytes, double value_bytes, int passes) {
        return keys * (key_bytes + passes * 2 * (key_bytes + value_bytes));
    };
    {
        const auto k = gen.integers<std::uint32_t>({n}, 0u, 0xffffffffu);
        rows.push_back({"sort uint32", double(n), time_ms(ctx, reps, [&] { (void)xgpu::sort(k); }), bound(n, 4, 0, 4)});
    }
    {
        const auto k = gen.uniform<float>({n}, -1.0f, 1.0f);
        rows.push_back(
            {"sort float32", double(n), time_ms(ctx, reps, [&] { (void)xgpu::sort(k); }), bound(n, 4, 0, 4)});
    }
    {
        const auto k = gen.integers<std::uint64_t>({n}, 0u, ~std::uint64_t(0));
        rows.push_back({"sort uint64", double(n), time_ms(ctx, reps, [&] { (void)xgpu::sort(k); }), bound(n, 8, 0, 8)});
    }
    const std::size_t m = n / 4;
    {
        const auto k0 = gen.integers<std::uint32_t>({m}, 0u, 0xffffffffu);
        const auto v0 = gen.integers<std::uint32_t>({m}, 0u, 0xffffffffu);
        auto k = xgpu::empty<std::uint32_t>(ctx, {m}), v = xgpu::empty<std::uint32_t>(ctx, {m});
        // The copies back to the unsorted keys and values are timed apart and taken out.
        const double reset = time_ms(ctx, reps, [&] {
            k.assign(k0);
            v.assign(v0);
        });
        const double ms = time_ms(ctx, reps, [&] {
            k.assign(k0);
            v.assign(v0);
            xgpu::sort_by_key(k, v);
        });
        rows.push_back({"sort_by_key uint32 -> uint32", double(m), ms - reset, bound(m, 4, 4, 4)});
    }
    {
        const auto k = gen.uniform<float>({m}, -1.0f, 1.0f);
        rows.push_back({"argsort float32 (int64)", double(m), time_ms(ctx, reps, [&] { (void)xgpu::argsort(k); }),
                        bound(m, 4, 8, 4)});
    }
    {
        const std::size_t r = n / 256;
        const auto k = gen.uniform<float>({r, 64}, -1.0f, 1.0f);
        // Rows sorted in local memory: each key read and written once.
        rows.push_back({"sort " + std::to_string(r) + " rows of 64 float32", double(r * 64),
                        time_ms(ctx, reps, [&] { (void)xgpu::sort(k, -1); }), double(r * 64) * 8});
    }

    std::printf(
        "copy: %.0f GB/s\n\n| work | keys | ms | GKeys/s | fraction of the traffic bound |\n|---|---|---|---|---|\n",
        copy_gbs);
    for (const Row& r : rows)
        std::printf("| %s | %.0f | %.3f | %.2f | %.2f |\n", r.work.c_str(), r.n, r.ms, r.n / (r.ms * 1e6),
                    r.bytes / (r.ms * 1e6) / copy_gbs);

    // Built on sort and scan, and reductions along axes: GB/s of the input read once.
    std::vector<Row> more;
    {
        const auto k = gen.integers<std::int32_t>({m}, 0, 1 << 16);
        more.push_back({"unique int32, 2^16 values, return_counts", double(m),
                        time_ms(ctx, reps, [&] { (void)xgpu::unique(k, {.counts = true}); }), double(m) * 4});
    }
    {
        const auto x = gen.uniform<float>({n}, 0.0f, 1.0f);
        more.push_back({"histogram float32, 256 bins", double(n),
                        time_ms(ctx, reps, [&] { (void)xgpu::histogram(x, 256, 0.0, 1.0); }), double(n) * 4});
    }
    {
        const auto side = std::size_t(std::sqrt(double(n)) + 0.5);
        const auto a = gen.uniform<float>({side, side}, -1.0f, 1.0f);
        const double bytes = double(side) * double(side) * 4;
        for (const std::int64_t axis : {0, 1}) {
            const std::string shape = std::to_string(side) + "^2 along axis " + std::to_string(axis);
            more.push_back({"sum float32 " + shape, double(side * side),
                            time_ms(ctx, reps, [&] { (void)xgpu::sum(a, xgpu::Axes{axis}); }), bytes});
            more.push_back({"max float32 " + shape, double(side * side),
                            time_ms(ctx, reps, [&] { (void)xgpu::max(a, xgpu::Axes{axis}); }), bytes});
        }
    }
    std::printf("\n| work | elements | ms | GB/s | fraction of the copy |\n|---|---|---|---|---|\n");
    for (const Row& r : more)
        std::printf("| %s | %.0f | %.3f | %.0f | %.2f |\n", r.work.c_str(), r.n, r.ms, r.bytes / (r.ms * 1e6),
                    r.bytes / (r.ms * 1e6) / copy_gbs);
    return 0;
}
