// A synthetic kernel family for the tuner's tests (test_tune and its helper process tune_probe):
// each work-item runs a busy loop whose length the parameters set, so the cost of every variant
// is known, then stores y = SCALE * x (the loop's value enters multiplied by a zero the compiler
// cannot see, so the loop stays). A and B set the loop: LOOP = base * (1 + 2 (|A - 3| + |B - 2|)),
// fastest at A = 3, B = 2 and every other variant at least 3x slower (a margin that timings on a
// machine whose cores other processes share keep); W = 1 (allowed only with A = 1) is faster than
// any other but computes 3x instead of 2x: a wrong variant the tuner must reject.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include <xgpu/template.hpp>
#include <xgpu/tune.hpp>
#include <xgpu/xgpu.hpp>

namespace xgpu::test {

inline const char* busy_source = R"(
XGPU_KERNEL void busy(XGPU_GLOBAL const float* x, XGPU_GLOBAL float* y, const float zero, const uint32_t extra) {
    const uint32_t i = (uint32_t)XGPU_GLOBAL_ID(0);
    uint32_t h = i;
    for (uint32_t k = 0; k < LOOP + extra; ++k)
        h = h * 1664525u + 1013904223u;
    y[i] = x[i] * SCALE + zero * (float)(h >> 31);
}
)";

struct BusyFamily {
    static constexpr std::size_t n = 4096;
    Context ctx;
    std::uint32_t base;
    KernelTemplate busy;
    Buffer x, y;
    std::vector<float> host;

    BusyFamily(const Context& c, std::uint32_t base_loop)
        : ctx(c), base(base_loop), busy(c, busy_source, "busy"), x(c.alloc(4 * n)), y(c.alloc(4 * n)), host(n) {
        for (std::size_t i = 0; i < n; ++i)
            host[i] = float(i % 97) - 48.0f;
        ctx.queue().write(x, host.data(), 4 * n);
    }

    static tune::Space space() {
        tune::Space s;
        s.params = {{"A", {1, 2, 3, 4}}, {"B", {1, 2, 3}}, {"W", {0, 1}}};
        s.valid = [](const tune::Point& p) { return p.at("W") == 0 || p.at("A") == 1; };
        return s;
    }
    static tune::Point start() { return {{"A", 1}, {"B", 1}, {"W", 0}}; }
    static tune::Point best() { return {{"A", 3}, {"B", 2}, {"W", 0}}; }

    // Device milliseconds of one launch with the loop at LOOP 0 + extra (median of three, after a
    // warm-up).
    double launch_ms(std::uint32_t extra) {
        const Kernel k = busy.get({{"LOOP", 0}, {"SCALE", "2.0f"}});
        const Queue q = ctx.current_queue();
        std::vector<double> ms;
        for (int r = 0; r < 4; ++r) {
            const Event e0 = q.marker();
            k.launch(q, Grid{n}, x, y, 0.0f, extra);
            const Event e1 = q.marker();
            e1.wait();
            if (r > 0) ms.push_back(e0.elapsed_ms(e1));
        }
        std::sort(ms.begin(), ms.end());
        return ms[1];
    }

    // The loop length whose launch takes about `ms` on this device (a GPU runs the loop about a
    // hundred times faster than PoCL on two cores, so the tests' costs are set as times).
    std::uint32_t calibrated(double ms) {
        std::uint32_t extra = 256;
        double t = launch_ms(extra);
        while (t < ms / 4 && extra < (1u << 28)) {
            extra *= 4;
            t = launch_ms(extra);
        }
        return std::uint32_t(std::clamp(double(extra) * ms / std::max(t, 1e-6), 16.0, double(1u << 30)));
    }

    std::uint32_t loop(const tune::Point& p) const {
        if (p.at("W")) return base / 2;
        return base * std::uint32_t(1 + 2 * (std::abs(int(p.at("A")) - 3) + std::abs(int(p.at("B")) - 2)));
    }

    // Variants compiled per point (LOOP and SCALE are compile-time constants).
    tune::Problem problem() {
        tune::Problem pr;
        pr.prepare = [this](const tune::Point& p) {
            Kernel k = busy.get({{"LOOP", loop(p)}, {"SCALE", p.at("W") ? "3.0f" : "2.0f"}});
            return std::function<void()>(
                [this, k] { k.launch(ctx.current_queue(), Grid{n}, x, y, 0.0f, std::uint32_t(0)); });
        };
        pr.result = [this] {
            std::vector<float> out(n);
            ctx.queue().read(y, out.data(), 4 * n);
            return std::vector<double>(out.begin(), out.end());
        };
        return pr;
    }
};

} // namespace xgpu::test
