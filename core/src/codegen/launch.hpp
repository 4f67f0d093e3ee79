// Launch shapes, the module's side (the public part is xgpu/codegen.hpp).
#pragma once

#include <optional>

#include "xgpu/codegen.hpp"

namespace xgpu::codegen {

// The shape a LaunchShapeScope sets for `family` on this thread, checked against `ctx`'s device
// (as launch_shape does); none when no scope is active.
std::optional<LaunchShape> scoped_shape(const Context& ctx, KernelFamily family, DType type, bool segmented = false);

// The shape of an elementwise kernel whose result has type `result` and which loads
// `loaded_bytes` per element from streamed inputs (each distinct input counted once): the scope's,
// else the default for that traffic.
LaunchShape elementwise_shape(const Context& ctx, DType result, std::size_t loaded_bytes);

} // namespace xgpu::codegen
