#include <cstdio>
#include <xgpu/xgpu.hpp>

int main() {
    auto ctx = xgpu::Context::from_env();
    auto buf = ctx.alloc(64 * sizeof(int));
    ctx.compile("XGPU_KERNEL void iota(XGPU_GLOBAL int32_t* a) { a[XGPU_GLOBAL_ID(0)] = (int32_t)XGPU_GLOBAL_ID(0); }")
        .kernel("iota")
        .launch(ctx.queue(), xgpu::Grid{64}, buf);
    int out[64];
    ctx.queue().read(buf, out, sizeof out);
    for (int i = 0; i < 64; ++i)
        if (out[i] != i) return 1;
    std::printf("consumer ok on %s\n", ctx.backend().c_str());
    return 0;
}
