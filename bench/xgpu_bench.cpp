// xgpu-bench: the runtime's costs on the selected backend and device (XGPU_BACKEND, XGPU_DEVICE):
// host-side launch overhead beside the raw API's (CUDA Driver API or OpenCL, same kernel, same
// run) and the host-side cost of a cached array statement, cold compile, warm (disk cache) load,
// and copy bandwidth.
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

#include <xgpu/array.hpp>
#include <xgpu/xgpu.hpp>

#include "raw_launch.hpp"

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

// The launch rows' kernel: three parameters, as raw_launch.cpp declares them.
const char* empty_src =
    "XGPU_KERNEL void empty(XGPU_GLOBAL float* a, const float s, const uint64_t n) { (void)a; (void)s; (void)n; }\n";

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

    // Launch overhead: host time per launch of an empty kernel with three arguments (a buffer and
    // two scalars), 2000 in a row, then one finish; beside it the same loop on the raw API (same
    // kernel, arguments and grid: raw_launch.cpp) and the host-side cost of a statement whose
    // kernel is cached. The loops take turns batch by batch, so that the ratios (medians of the
    // ratios of neighbouring batches) hold while the machine drifts.
    {
        auto k = ctx.compile(empty_src).kernel("empty");
        auto buf = ctx.alloc(256);
        const float s = 2.0f;
        const std::uint64_t count = 32;
        std::string why, why_profiling;
        const auto raw = xgpu_bench::make_raw_launcher(ctx.backend(), dev.index, dev.name, false, why);
        // xgpu's OpenCL queues have profiling on: the raw loop on such a queue shows what that costs.
        const auto raw_profiling =
            ctx.backend() == "opencl" && raw
                ? xgpu_bench::make_raw_launcher(ctx.backend(), dev.index, dev.name, true, why_profiling)
                : nullptr;
        const std::size_t n = 1000;
        auto x = xgpu::arange<double>(ctx, 0.0, 1.0, 1.0 / double(n));
        auto y = xgpu::empty<double>(ctx, {n});
        y = 2.0 * x + sin(x); // compiles (or loads) the kernel
        q.finish();

        const int batch = 2000;
        std::vector<double> xgpu_us, raw_us, profiling_us, expr_us, raw_ratio, expr_ratio;
        for (int r = 0; r < reps + 2; ++r) {
            const bool timed = r >= 2; // the first two are warm-up
            q.finish();
            auto t0 = Clock::now();
            for (int i = 0; i < batch; ++i)
                k.launch(q, xgpu::Grid{32, 32}, buf, s, count);
            q.finish();
            const double launch = ms_since(t0) * 1e3 / batch;
            if (raw) {
                const double us = raw->batch_us(batch);
                if (timed) {
                    raw_us.push_back(us);
                    raw_ratio.push_back(launch / us);
                }
            }
            if (raw_profiling) {
                const double us = raw_profiling->batch_us(batch);
                if (timed) profiling_us.push_back(us);
            }
            t0 = Clock::now();
            for (int i = 0; i < batch; ++i)
                y = 2.0 * x + sin(x);
            q.finish();
            const double expr = ms_since(t0) * 1e3 / batch;
            if (timed) {
                xgpu_us.push_back(launch);
                expr_us.push_back(expr);
                expr_ratio.push_back(expr / launch);
            }
        }
        row("launch, host side, xgpu (empty kernel, a buffer and two scalars, 2000 in a row, then finish)",
            median(xgpu_us), "us");
        if (raw) {
            const std::string label = "launch, host side, " + raw->label() + ", same kernel, arguments and grid";
            row(label.c_str(), median(raw_us), "us");
            row("launch, host side, xgpu / raw (median of neighbouring batches; target <= 1.15)", median(raw_ratio),
                "x");
        } else {
            std::printf("| launch, host side, raw API | not measured: %s |\n", why.c_str());
        }
        if (raw_profiling) {
            const std::string label = "launch, host side, " + raw_profiling->label();
            row(label.c_str(), median(profiling_us), "us");
        }
        row("statement `y = 2.0*x + sin(x)`, host side (f64, n = 1000, kernel cached, 2000 in a row, then finish)",
            median(expr_us), "us");
        row("statement / xgpu launch (median of neighbouring batches; target <= 2)", median(expr_ratio), "x");
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
