// OpenCL error codes: their names, and which xgpu error each becomes.
#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {

#define XGPU_CL_ERRORS(X)                                                                                              \
    X(CL_SUCCESS)                                                                                                      \
    X(CL_DEVICE_NOT_FOUND) X(CL_DEVICE_NOT_AVAILABLE) X(CL_COMPILER_NOT_AVAILABLE) X(CL_MEM_OBJECT_ALLOCATION_FAILURE) \
        X(CL_OUT_OF_RESOURCES) X(CL_OUT_OF_HOST_MEMORY) X(CL_PROFILING_INFO_NOT_AVAILABLE) X(CL_MEM_COPY_OVERLAP)      \
            X(CL_IMAGE_FORMAT_MISMATCH) X(CL_IMAGE_FORMAT_NOT_SUPPORTED) X(CL_BUILD_PROGRAM_FAILURE) X(CL_MAP_FAILURE) \
                X(CL_MISALIGNED_SUB_BUFFER_OFFSET) X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)                     \
                    X(CL_COMPILE_PROGRAM_FAILURE) X(CL_LINKER_NOT_AVAILABLE) X(CL_LINK_PROGRAM_FAILURE)                \
                        X(CL_DEVICE_PARTITION_FAILED) X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) X(CL_INVALID_VALUE) X(       \
                            CL_INVALID_DEVICE_TYPE) X(CL_INVALID_PLATFORM) X(CL_INVALID_DEVICE) X(CL_INVALID_CONTEXT)  \
                            X(CL_INVALID_QUEUE_PROPERTIES) X(CL_INVALID_COMMAND_QUEUE) X(CL_INVALID_HOST_PTR) X(       \
                                CL_INVALID_MEM_OBJECT) X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) X(CL_INVALID_IMAGE_SIZE)  \
                                X(CL_INVALID_SAMPLER) X(CL_INVALID_BINARY) X(CL_INVALID_BUILD_OPTIONS)                 \
                                    X(CL_INVALID_PROGRAM) X(CL_INVALID_PROGRAM_EXECUTABLE) X(CL_INVALID_KERNEL_NAME)   \
                                        X(CL_INVALID_KERNEL_DEFINITION) X(CL_INVALID_KERNEL) X(CL_INVALID_ARG_INDEX)   \
                                            X(CL_INVALID_ARG_VALUE) X(CL_INVALID_ARG_SIZE) X(CL_INVALID_KERNEL_ARGS)   \
                                                X(CL_INVALID_WORK_DIMENSION) X(CL_INVALID_WORK_GROUP_SIZE)             \
                                                    X(CL_INVALID_WORK_ITEM_SIZE) X(CL_INVALID_GLOBAL_OFFSET)           \
                                                        X(CL_INVALID_EVENT_WAIT_LIST) X(CL_INVALID_EVENT)              \
                                                            X(CL_INVALID_OPERATION) X(CL_INVALID_GL_OBJECT) X(         \
                                                                CL_INVALID_BUFFER_SIZE) X(CL_INVALID_MIP_LEVEL)        \
                                                                X(CL_INVALID_GLOBAL_WORK_SIZE) X(CL_INVALID_PROPERTY)  \
                                                                    X(CL_INVALID_IMAGE_DESCRIPTOR)                     \
                                                                        X(CL_INVALID_COMPILER_OPTIONS)                 \
                                                                            X(CL_INVALID_LINKER_OPTIONS)               \
                                                                                X(CL_INVALID_DEVICE_PARTITION_COUNT)

const char* error_name(cl_int code) {
    switch (code) {
#define XGPU_CL_CASE(name)                                                                                             \
    case name: return #name;
        XGPU_CL_ERRORS(XGPU_CL_CASE)
#undef XGPU_CL_CASE
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
    }
}

void fail(cl_int code, const char* call, const std::string& detail) {
    const std::string what = fmt::format("xgpu[opencl]: {} failed: {} ({}){}{}", call, error_name(code), code,
                                         detail.empty() ? "" : ": ", detail);
    Error::Origin origin{"opencl", call, code, error_name(code)};
    switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE: throw OutOfMemory(what, origin);
    case CL_INVALID_KERNEL_ARGS:
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE:
    case CL_INVALID_GLOBAL_WORK_SIZE:
    case CL_INVALID_WORK_DIMENSION:
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
    case CL_OUT_OF_RESOURCES: throw LaunchError(what, origin);
    case CL_INVALID_ARG_SIZE:
    case CL_INVALID_ARG_VALUE:
    case CL_INVALID_ARG_INDEX:
    case CL_INVALID_VALUE: throw InvalidArgument(what, origin);
    case CL_DEVICE_NOT_FOUND:
    case CL_DEVICE_NOT_AVAILABLE:
    case -1001: throw BackendUnavailable(what, origin);
    default: throw BackendError(what, origin);
    }
}

void check(cl_int code, const char* call, const std::string& detail) {
    if (code != CL_SUCCESS) fail(code, call, detail);
}

} // namespace xgpu::opencl
