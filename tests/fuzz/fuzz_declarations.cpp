// libFuzzer: the argument declarations of ElementwiseKernel and ReductionKernel (ScanKernel has
// none: its operator and neutral element go to the device compiler as they are). The parser, and
// the kernel parameters and bindings generated from what it accepted, run without a device.
#include <cstddef>
#include <cstdint>
#include <string>

#include <xgpu/elementwise.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string declarations(reinterpret_cast<const char*>(data), size);
    try {
        const xgpu::detail::UserArguments args(declarations, "fuzz_kernel");
        const std::string params = args.params();
        const std::string rebind = args.rebind();
        // Every parameter (and only those) is followed by ", ".
        if (!params.empty() && params.substr(params.size() - 2) != ", ") __builtin_trap();
    } catch (const xgpu::Error&) {
        // refused with an xgpu error: fine; anything else escapes and is a crash
    }
    return 0;
}
