// The README's example without its checks: arrays, a fused expression, a reduction, and a kernel of your own.
#include <iostream>

#include <xgpu/array.hpp>
#include <xgpu/reduction.hpp>
#include <xgpu/xgpu.hpp>

int main() try {
    auto ctx = xgpu::Context::from_env();    // XGPU_BACKEND, XGPU_DEVICE
    auto x = xgpu::arange<double>(ctx, 1e6); // numpy-like device arrays
    auto y = xgpu::zeros<double>(ctx, {1000000});
    y = 2.0 * x + sin(x);             // ONE generated kernel, no temporaries
    double s = xgpu::dot(x, y).get(); // a device scalar, read on demand

    auto k = ctx.compile(R"(
        XGPU_KERNEL void twice(XGPU_GLOBAL double* a, const uint64_t n) {
            const size_t i = XGPU_GLOBAL_ID(0);
            if (i < n) a[i] *= 2.0;
        })")
                 .kernel("twice"); // cached in memory and on disk
    k.launch(ctx.queue(), xgpu::Grid{1000192, 256}, y.buffer(), uint64_t(y.size()));
    std::cout << y(xgpu::slice(0, 10)) << "\n" << s << "\n"; // views without copies, numpy printing
    return 0;
} catch (const xgpu::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
}
