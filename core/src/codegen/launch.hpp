// Launch shapes, the module's side (the public part is xgpu/codegen.hpp).
#pragma once

#include <optional>

#include "xgpu/codegen.hpp"

namespace xgpu::codegen {

// The shape a LaunchShapeScope sets for `family` on this thread, checked against `ctx`'s device
// (as launch_shape does); none when no scope is active.
std::optional<LaunchShape> scoped_shape(const Context& ctx, KernelFamily family, DType type, bool segmented = false);

} // namespace xgpu::codegen
