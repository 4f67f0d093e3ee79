// Helper for test_cache: compiles a kernel tagged by argv[1] on the context the environment
// selects, runs it, and prints where the program came from ("compiled", "disk_cache", ...).
#include <cstdio>
#include <string>

#include <xgpu/xgpu.hpp>

int main(int argc, char** argv) try {
    const std::string tag = argc > 1 ? argv[1] : "0";
    auto ctx = xgpu::Context::from_env();
    auto p = ctx.compile("XGPU_KERNEL void tagged(XGPU_GLOBAL int32_t* a) { a[XGPU_GLOBAL_ID(0)] = TAG; }",
                         {"-DTAG=" + tag});
    auto d = ctx.alloc(4 * 64);
    p.kernel("tagged").launch(ctx.queue(), xgpu::Grid{64}, d);
    int out[64];
    ctx.queue().read(d, out, sizeof out);
    const bool ok = out[63] == std::stoi(tag);
    const char* origin = p.origin() == xgpu::ProgramOrigin::compiled     ? "compiled"
                         : p.origin() == xgpu::ProgramOrigin::disk_cache ? "disk_cache"
                                                                         : "memory_cache";
    std::printf("%s %s\n", origin, ok ? "ok" : "wrong");
    return ok ? 0 : 1;
} catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
}
