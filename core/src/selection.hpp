// Device selection shared by Context::create and the distributed layer's device_context.
#pragma once

#include <cstddef>
#include <string_view>

#include "xgpu/context.hpp"

namespace xgpu::detail {

// The context on backend `name` ("" or "auto": CUDA where it has a matching device, else
// OpenCL) for device `selector` (XGPU_DEVICE's syntax). With no selector: the nth of the
// backend's GPUs, counted round robin (every device where it has no GPU), so that the processes
// of one node spread over its devices; with a selector, the device it names, whatever nth is.
Context create_context(std::string_view name, std::string_view selector, std::size_t nth);

} // namespace xgpu::detail
