// CUDA and NVRTC result codes: their names, and which xgpu error each becomes.
#include <fmt/format.h>

#include "cuda.hpp"

namespace xgpu::cuda {
namespace {

std::string description(CUresult code) {
    const char* s = nullptr;
    if (api::cuGetErrorString && api::cuGetErrorString(code, &s) == CUDA_SUCCESS && s) return s;
    return "unknown CUDA error";
}

} // namespace

std::string error_name(CUresult code) {
    const char* s = nullptr;
    if (api::cuGetErrorName && api::cuGetErrorName(code, &s) == CUDA_SUCCESS && s) return s;
    return fmt::format("CUDA_ERROR_{}", int(code));
}

void fail(CUresult code, const char* call, const std::string& detail, Kind kind) {
    const std::string name = error_name(code);
    const std::string what = fmt::format("xgpu[cuda]: {} failed: {} ({}): {}{}{}", call, name, int(code),
                                         description(code), detail.empty() ? "" : ": ", detail);
    const Error::Origin origin{"cuda", call, code, name};
    if (kind == Kind::unavailable) throw BackendUnavailable(what, origin);
    switch (code) {
    case CUDA_ERROR_OUT_OF_MEMORY: throw OutOfMemory(what, origin);
    // What a faulting kernel leaves behind, reported by the next call that synchronises.
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT: throw LaunchError(what, origin);
    default: break;
    }
    if (kind == Kind::launch) throw LaunchError(what, origin);
    switch (code) {
    case CUDA_ERROR_INVALID_VALUE: throw InvalidArgument(what, origin);
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: throw BackendUnavailable(what, origin);
    default: throw BackendError(what, origin);
    }
}

std::string nvrtc_error_name(nvrtcResult code) {
    const char* s = api::nvrtcGetErrorString ? api::nvrtcGetErrorString(code) : nullptr;
    return s ? s : fmt::format("NVRTC_ERROR_{}", int(code));
}

void fail(nvrtcResult code, const char* call, const std::string& detail) {
    const std::string name = nvrtc_error_name(code);
    const std::string what =
        fmt::format("xgpu[cuda]: {} failed: {} ({}){}{}", call, name, int(code), detail.empty() ? "" : ": ", detail);
    const Error::Origin origin{"cuda", call, code, name};
    if (code == NVRTC_ERROR_OUT_OF_MEMORY) throw OutOfMemory(what, origin);
    throw BackendError(what, origin);
}

} // namespace xgpu::cuda
