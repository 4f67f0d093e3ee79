// array-bench: fused array expressions on the selected backend and device, in GB/s against
// counted bytes (each input array read once, the output written once), median of timed runs
// after a warm-up, timed with device events. Each figure is also given as a fraction of the
// fused f64 triad `z = a*x + b*y` measured in the same run (the machine's streaming bandwidth as
// xgpu reaches it): the first table's rows against the triad at its top, the Philox rows and each
// dtype's row of reductions (sum, max, min, dot, norm) against a triad measured just before them,
// so that a machine shared with other work drifts less between the two.
//
//   array-bench [--n N] [--reps N] [--sweep] [--latency] [--types float64,int32,...]
//
// --types: the reduction table's rows for those dtypes only (names as xgpu::name gives them).
// --sweep: the streaming rows again under each elementwise launch shape (items per work-item
// 1, 2, 4, 8, work-groups of 128, 256, 512), chosen from outside with xgpu::LaunchShapeScope.
// --latency: where the time of a small dot read on the host goes (wall times, medians).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "timing.hpp"
#include <chrono>
#include <complex>

#include <xgpu/array.hpp>
#include <xgpu/codegen.hpp>
#include <xgpu/random.hpp>
#include <xgpu/reduction.hpp>

namespace {

using xgpu::bench::median;

// Median GB/s of `work`, which moves `bytes` bytes (the median time's).
double measure(const xgpu::Context& ctx, double bytes, int reps, const std::function<void()>& work) {
    return bytes / (xgpu::bench::median_ms(ctx.queue(), reps, work) * 1e6);
}

// Median wall time of `work` in microseconds, after a warm-up.
double wall_us(const std::function<void()>& work) {
    for (int r = 0; r < 300; ++r) // long enough for the clocks of an idle host and device to rise
        work();
    std::vector<double> us;
    for (int r = 0; r < 1001; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        work();
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(us);
}

void latency(const xgpu::Context& ctx, xgpu::Philox& gen) {
    auto x = gen.uniform<double>({10000}), y = gen.uniform<double>({10000});
    auto q = ctx.queue();
    double h = 0;
    std::printf("\n| dot of 1e4 f64, wall time | us |\n|---|---|\n");
    std::printf("| read 8 bytes (Array::get of a 1-element array) | %.1f |\n", wall_us([&] { h = x[0].get()[0]; }));
    std::printf("| dot, then finish | %.1f |\n", wall_us([&] {
                    xgpu::dot(x, y);
                    q.finish();
                }));
    std::printf("| dot, .get() | %.1f |\n", wall_us([&] { h = xgpu::dot(x, y).get(); }));
    {
        // The parts: the host's enqueue alone, the device time, an empty launch's round trip.
        std::vector<double> host, device;
        for (int r = 0; r < 221; ++r) {
            auto e0 = q.marker();
            const auto t0 = std::chrono::steady_clock::now();
            auto d = xgpu::dot(x, y);
            const auto t1 = std::chrono::steady_clock::now();
            auto e1 = q.marker();
            q.finish();
            if (r < 20) continue;
            host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            device.push_back(1e3 * e0.elapsed_ms(e1));
        }
        std::printf("| dot, enqueue only (host) | %.1f |\n", median(host));
        std::printf("| dot, device time (markers) | %.1f |\n", median(device));
        auto k = ctx.compile("XGPU_KERNEL void xgpu_bench_nothing(XGPU_GLOBAL double* a, const uint64_t n) {"
                             " if (XGPU_GLOBAL_ID(0) >= n) a[0] = 0; }")
                     .kernel("xgpu_bench_nothing");
        const xgpu::Grid grid{256, 256};
        std::vector<double> launch_host;
        for (int r = 0; r < 221; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            k.launch(q, grid, x.buffer(), std::uint64_t(0));
            const auto t1 = std::chrono::steady_clock::now();
            q.finish();
            if (r >= 20) launch_host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
        std::printf("| empty launch, enqueue only (host) | %.1f |\n", median(launch_host));
        std::printf("| empty launch, then finish | %.1f |\n", wall_us([&] {
                        k.launch(q, grid, x.buffer(), std::uint64_t(0));
                        q.finish();
                    }));
    }
    {
        // The host's cost of a launch in a long run of them (the queue's backlog growing, as in a
        // solver's loop), by the kernel's number of buffer parameters: 1, 6 or 12 distinct buffers.
        std::vector<xgpu::Array<double>> bufs;
        for (int i = 0; i < 12; ++i)
            bufs.push_back(xgpu::zeros<double>(ctx, {256}));
        const auto params = [](int n) {
            std::string s;
            for (int i = 0; i < n; ++i)
                s += "XGPU_GLOBAL double* a" + std::to_string(i) + ", ";
            return s;
        };
        auto k1 = ctx.compile("XGPU_KERNEL void xgpu_bench_b1(" + params(1) +
                              "const uint64_t n) { if (XGPU_GLOBAL_ID(0) >= n) a0[0] = 0; }")
                      .kernel("xgpu_bench_b1");
        auto k6 = ctx.compile("XGPU_KERNEL void xgpu_bench_b6(" + params(6) +
                              "const uint64_t n) { if (XGPU_GLOBAL_ID(0) >= n) a0[0] = a5[0]; }")
                      .kernel("xgpu_bench_b6");
        auto k12 = ctx.compile("XGPU_KERNEL void xgpu_bench_b12(" + params(12) +
                               "const uint64_t n) { if (XGPU_GLOBAL_ID(0) >= n) a0[0] = a11[0]; }")
                       .kernel("xgpu_bench_b12");
        const xgpu::Grid grid{256, 256};
        const auto b = [&](int i) { return bufs[std::size_t(i)].buffer(); };
        const auto run = [&](const char* what, const std::function<void(std::uint64_t)>& launch) {
            std::vector<double> per;
            for (int r = 0; r < 7; ++r) {
                const int n = 1000;
                const auto t0 = std::chrono::steady_clock::now();
                for (int i = 0; i < n; ++i)
                    launch(std::uint64_t(i & 1)); // a changing argument, as a solver's iteration count
                const auto t1 = std::chrono::steady_clock::now();
                q.finish();
                per.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
            }
            std::printf("| %s, 1000 launches in a row, enqueue only (host, per launch) | %.2f |\n", what, median(per));
        };
        run("1 buffer", [&](std::uint64_t v) { k1.launch(q, grid, b(0), v); });
        run("6 buffers", [&](std::uint64_t v) { k6.launch(q, grid, b(0), b(1), b(2), b(3), b(4), b(5), v); });
        run("12 buffers", [&](std::uint64_t v) {
            k12.launch(q, grid, b(0), b(1), b(2), b(3), b(4), b(5), b(6), b(7), b(8), b(9), b(10), b(11), v);
        });
        run("12 buffers, all the same", [&](std::uint64_t v) {
            k12.launch(q, grid, b(0), b(0), b(0), b(0), b(0), b(0), b(0), b(0), b(0), b(0), b(0), b(0), v);
        });
    }
    for (unsigned g : {256u, 512u, 1024u})
        for (unsigned items : {2u, 4u, 8u}) {
            if (g > ctx.device().info().max_work_group_size) continue;
            xgpu::LaunchShape shape;
            shape.group_size = g;
            shape.items = items;
            xgpu::LaunchShapeScope scope(xgpu::KernelFamily::reduction, shape);
            try {
                std::printf("| dot, .get(), reduction shape %s | %.1f |\n", shape.key().c_str(),
                            wall_us([&] { h = xgpu::dot(x, y).get(); }));
            } catch (const xgpu::InvalidArgument&) { // the compiled kernel's own limit is lower
                std::printf("| dot, .get(), reduction shape %s | (above the kernel's work-group limit) |\n",
                            shape.key().c_str());
            }
        }
    (void)h;
}

// A random array of n elements of T: uniforms in [0, 1) for the reals (complex: pairs of them),
// integers in [0, 100) (signed: [-100, 100)), bools from integers in [0, 2).
template <class T> xgpu::Array<T> random_array(xgpu::Philox& gen, std::size_t n) {
    if constexpr (std::is_same_v<T, bool>)
        return gen.integers<std::uint8_t>({n}, 0, 2).astype<bool>();
    else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
        return gen.uniform<typename T::value_type>({2 * n}).template view<T>();
    else if constexpr (std::is_floating_point_v<T>)
        return gen.uniform<T>({n});
    else
        return gen.integers<T>({n}, std::is_signed_v<T> ? T(-100) : T(0), T(100));
}

// The reductions of one dtype as a table row: GB/s of the input bytes (dot: both inputs) and the
// fraction of the triad `triad_now()` measures just before them; the lowest fraction is kept in
// `lowest`. Only the dtypes `types` names (all where empty).
template <class T>
void reduction_row(const xgpu::Context& ctx, xgpu::Philox& gen, std::size_t n, int reps,
                   const std::function<double()>& triad_now, double& lowest, const std::string& types) {
    if (!types.empty() &&
        ("," + types + ",").find("," + std::string(xgpu::name(xgpu::dtype_v<T>)) + ",") == std::string::npos)
        return;
    constexpr bool cpx = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
    if (!ctx.device().has_fp64() &&
        (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>> || std::is_integral_v<T>))
        return; // their sums, dots or norms are double or 64-bit
    auto x = random_array<T>(gen, n), y = random_array<T>(gen, n);
    const double bytes = double(sizeof(T)) * double(n), triad = triad_now();
    char text[64];
    std::snprintf(text, sizeof text, " | %.1f", triad);
    std::string row = "| " + std::string(xgpu::name(xgpu::dtype_v<T>)) + text;
    auto cell = [&](double factor, const std::function<void()>& work) {
        const double gbs = measure(ctx, factor * bytes, reps, work);
        lowest = std::min(lowest, gbs / triad);
        std::snprintf(text, sizeof text, " | %.1f (%.2f)", gbs, gbs / triad);
        row += text;
    };
    const std::string none = " | -";
    cell(1, [&] { xgpu::sum(x); });
    if constexpr (cpx)
        row += none + none;
    else {
        cell(1, [&] { xgpu::max(x); });
        cell(1, [&] { xgpu::min(x); });
    }
    if constexpr (std::is_same_v<T, bool>)
        row += none;
    else
        cell(2, [&] { xgpu::dot(x, y); });
    cell(1, [&] { xgpu::norm(x); });
    std::printf("%s |\n", row.c_str());
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) try {
    std::size_t n = 0;
    int reps = 21;
    bool sweep = false, lat = false;
    std::string types;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--sweep"))
            sweep = true;
        else if (!std::strcmp(argv[i], "--latency"))
            lat = true;
        else if (!std::strcmp(argv[i], "--n") && i + 1 < argc)
            n = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--types") && i + 1 < argc)
            types = argv[++i];
    }
    auto ctx = xgpu::Context::from_env();
    const auto& dev = ctx.device().info();
    if (!n)
        n = std::size_t(
            std::min<std::uint64_t>({std::uint64_t(1) << 27, dev.max_allocation / 8, dev.global_memory / 48}));
    std::printf("array-bench: %s on %s, n = %zu (2^%.1f)\n\n| work | GB/s | of triad |\n|---|---|---|\n",
                ctx.backend().c_str(), dev.name.c_str(), n, std::log2(double(n)));
    double triad = 0;
    auto row = [&](const char* work, double gbs) { std::printf("| %s | %.1f | %.2f |\n", work, gbs, gbs / triad); };

    xgpu::Philox gen(ctx, 42);
    if (lat) {
        latency(ctx, gen);
        return 0;
    }
    // The triad's arrays stay, for the triads measured beside later rows.
    auto tx = gen.uniform<double>({n}), ty = gen.uniform<double>({n});
    auto tz = xgpu::empty<double>(ctx, {n});
    auto triad_now = [&] { return measure(ctx, 3.0 * 8 * double(n), reps, [&] { tz = 2.5 * tx + -0.5 * ty; }); };
    {
        auto &x = tx, &y = ty, &z = tz;
        const double a = 2.5, b = -0.5;
        triad = measure(ctx, 3.0 * 8 * double(n), reps, [&] { z = a * x + b * y; });
        row("fused `z = a*x + b*y` f64 (the triad)", triad);
        // The same statement written as numpy would run it: three kernels, three passes.
        auto t1 = xgpu::empty<double>(ctx, {n}), t2 = xgpu::empty<double>(ctx, {n});
        row("unfused `t1 = a*x; t2 = b*y; z = t1 + t2` f64 (3 arrays counted)",
            measure(ctx, 3.0 * 8 * double(n), reps, [&] {
                t1 = a * x;
                t2 = b * y;
                z = t1 + t2;
            }));
        row("copy `z = x` f64", measure(ctx, 2.0 * 8 * double(n), reps, [&] { z.assign(x); }));
    }
    {
        auto x = gen.uniform<float>({n}), y = gen.uniform<float>({n});
        auto z = xgpu::empty<float>(ctx, {n});
        row("fused `z = a*x + b*y` f32", measure(ctx, 3.0 * 4 * double(n), reps, [&] { z = 2.5f * x - 0.5f * y; }));
        row("copy `z = x` f32", measure(ctx, 2.0 * 4 * double(n), reps, [&] { z.assign(x); }));
    }
    if (sweep) {
        auto x = gen.uniform<double>({n}), y = gen.uniform<double>({n}), z = xgpu::empty<double>(ctx, {n});
        auto xf = gen.uniform<float>({n}), yf = gen.uniform<float>({n}), zf = xgpu::empty<float>(ctx, {n});
        std::printf("\n| elementwise shape | fused f64 | copy f64 | fused f32 | copy f32 |\n|---|---|---|---|---|\n");
        for (unsigned g : {128u, 256u, 512u})
            for (unsigned items : {1u, 2u, 4u, 8u}) {
                xgpu::LaunchShape shape;
                shape.group_size = g;
                shape.items = items;
                if (g > dev.max_work_group_size) continue;
                xgpu::LaunchShapeScope scope(xgpu::KernelFamily::elementwise, shape);
                std::printf("| %s | %.0f | %.0f | %.0f | %.0f |\n", shape.key().c_str(),
                            measure(ctx, 24.0 * double(n), reps, [&] { z = 2.5 * x - 0.5 * y; }),
                            measure(ctx, 16.0 * double(n), reps, [&] { z.assign(x); }),
                            measure(ctx, 12.0 * double(n), reps, [&] { zf = 2.5f * xf - 0.5f * yf; }),
                            measure(ctx, 8.0 * double(n), reps, [&] { zf.assign(xf); }));
            }
        std::printf("\n");
    }
    {
        // Against a triad measured just before (its row shows it).
        triad = triad_now();
        row("fused `z = a*x + b*y` f64 (the triad, again)", triad);
        auto z = xgpu::empty<double>(ctx, {n});
        row("Philox uniform f64 (output counted)", measure(ctx, 8.0 * double(n), reps, [&] { gen.fill_uniform(z); }));
        auto zf = xgpu::empty<float>(ctx, {n});
        row("Philox uniform f32 (output counted)", measure(ctx, 4.0 * double(n), reps, [&] { gen.fill_uniform(zf); }));
    }
    {
        // Latency: a 1e4-element dot with the result read on the host, wall time.
        auto x = gen.uniform<double>({10000}), y = gen.uniform<double>({10000});
        for (int r = 0; r < 20; ++r)
            xgpu::dot(x, y).get();
        std::vector<double> us;
        for (int r = 0; r < 201; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            volatile double d = xgpu::dot(x, y).get();
            (void)d;
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        std::printf("| dot of 1e4 f64 with .get() (wall time, us) | %.1f | - |\n", median(us));
    }
    // Reductions of every dtype: GB/s of the input bytes (dot: both inputs), the result left on
    // the device, and the fraction of the triad measured just before each dtype's row.
    std::printf("\n| reduction: GB/s (of the triad just before) | triad | sum | max | min | dot | norm |\n"
                "|---|---|---|---|---|---|---|\n");
    double lowest = 1e9;
    reduction_row<bool>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::int8_t>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::int16_t>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::int32_t>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::int64_t>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::uint8_t>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::uint16_t>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::uint32_t>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::uint64_t>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<float>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<double>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::complex<float>>(ctx, gen, n, reps, triad_now, lowest, types);
    reduction_row<std::complex<double>>(ctx, gen, n, reps, triad_now, lowest, types);
    if (lowest < 1e9) std::printf("\nlowest reduction: %.2f of the triad\n", lowest);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
