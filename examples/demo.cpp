// xgpu's port of PyCUDA's demo.py: a 4x4 random array to the device, a kernel that doubles it,
// and the result back. The kernel is written once in the xgpu dialect and runs on either backend.
#include <cstdio>
#include <random>
#include <vector>

#include <xgpu/xgpu.hpp>

static const char* source = R"(
XGPU_KERNEL void twice(XGPU_GLOBAL float* a, const uint32_t n) {
    const size_t i = XGPU_GLOBAL_ID(0);
    if (i < n) a[i] *= 2.0f;
}
)";

static void print(const char* title, const std::vector<float>& a) {
    std::printf("%s\n", title);
    for (int r = 0; r < 4; ++r) {
        std::printf("  [");
        for (int c = 0; c < 4; ++c)
            std::printf(" %10.6f", a[r * 4 + c]);
        std::printf(" ]\n");
    }
}

int main() try {
    auto ctx = xgpu::Context::from_env();
    std::printf("xgpu demo on %s: %s\n", ctx.backend().c_str(), ctx.device().name().c_str());

    std::mt19937 rng(std::random_device{}());
    std::normal_distribution<float> normal;
    std::vector<float> a(16);
    for (auto& v : a)
        v = normal(rng);

    auto q = ctx.queue();
    auto a_gpu = ctx.alloc(a.size() * sizeof(float));
    q.write(a_gpu, a.data(), a.size() * sizeof(float));

    auto twice = ctx.compile(source).kernel("twice");
    twice.launch(q, xgpu::Grid{16, 16}, a_gpu, std::uint32_t(a.size()));

    std::vector<float> a_doubled(16);
    q.read(a_gpu, a_doubled.data(), a_doubled.size() * sizeof(float));

    print("original array:", a);
    print("doubled with kernel:", a_doubled);
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a_doubled[i] != 2.0f * a[i]) {
            std::fprintf(stderr, "demo: element %zu is %g, expected %g\n", i, a_doubled[i], 2.0f * a[i]);
            return 1;
        }
    return 0;
} catch (const xgpu::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
