// One dialect kernel built on a CUDA context and on an OpenCL context of the same GPU, in one
// process, with the same inputs: the outputs must agree. Skips where either is missing.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "support.hpp"

using namespace xgpu;
using xgpu::test::random_vector;

namespace {
std::string lower(std::string s) {
    for (auto& c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
} // namespace

TEST_CASE("CUDA and OpenCL agree on the same GPU") {
    std::vector<Device> cuda, opencl;
    for (const auto& b : backends()) {
        if (!b.available) continue;
        for (const auto& d : b.devices)
            (b.name == "cuda" ? cuda : opencl).push_back(d);
    }
    const Device* pair[2] = {nullptr, nullptr};
    for (const auto& c : cuda)
        for (const auto& o : opencl)
            if (!pair[0] && o.type() == DeviceType::gpu && lower(o.name()).find(lower(c.name())) != std::string::npos) {
                pair[0] = &c;
                pair[1] = &o;
            }
    if (!pair[0]) {
        WARN("skipped: no GPU is reachable through both CUDA and OpenCL here");
        return;
    }
    static const char* src = R"(
        XGPU_KERNEL void mix(XGPU_GLOBAL const float* x, XGPU_GLOBAL const int32_t* k, XGPU_GLOBAL float* y,
                             XGPU_LOCAL_PARAM(float, tile), const float a, const uint32_t n) {
            const size_t i = XGPU_GLOBAL_ID(0), l = XGPU_LOCAL_ID(0), w = XGPU_LOCAL_SIZE(0);
            tile[l] = i < n ? x[i] : 0.0f;
            XGPU_BARRIER();
            if (i < n) y[i] = a * tile[w - 1 - l] + (float)(k[i] % 7);
        }
    )";
    const std::uint32_t n = 100000, wg = 128, global = (n + wg - 1) / wg * wg;
    const auto x = random_vector<float>(n, -100, 100);
    const auto k = random_vector<std::int32_t>(n, -1000000, 1000000);
    const float a = 1.25f;
    std::vector<float> out[2];
    for (int b = 0; b < 2; ++b) {
        auto ctx = Context::create(*pair[b]);
        INFO(ctx.backend() << ": " << ctx.device().name());
        auto q = ctx.queue();
        auto dx = ctx.alloc(n * 4), dk = ctx.alloc(n * 4), dy = ctx.alloc(n * 4);
        q.write(dx, x.data(), n * 4);
        q.write(dk, k.data(), n * 4);
        ctx.compile(src).kernel("mix").launch(q, Grid{global, wg}, dx, dk, dy, Local{wg * 4}, a, n);
        out[b].resize(n);
        q.read(dy, out[b].data(), n * 4);
    }
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t g = i / wg * wg, src_i = g + (wg - 1 - i % wg);
        const float want = a * (src_i < n ? x[src_i] : 0.0f) + float(k[i] % 7);
        REQUIRE(out[0][i] == out[1][i]);
        REQUIRE(out[0][i] == Approx(want));
    }
}
