// Returns from main with work still queued: the library finishes it before the process tears
// down (PoCL crashed at exit in 2 to 10 of 16 runs when a kernel still compiled then).
#include <xgpu/array.hpp>

int main() {
    auto ctx = xgpu::Context::from_env();
    auto x = xgpu::arange<float>(ctx, 1 << 22);
    xgpu::Array<float> y = x * 3.0f + 1.0f;
    xgpu::Array<float> z = sin(y) * y; // a kernel first compiled and run at the very end
    return 0;
}
