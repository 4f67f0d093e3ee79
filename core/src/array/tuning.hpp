// The array layer's side of launch-shape tuning (tuning.cpp): the problems the tuner times the
// elementwise, reduction and scan families on, handed to it from above.
#pragma once

namespace xgpu::detail {

// Registers the problems with the tuner (once per process; cheap after). Called before the array
// layer (and the layers above it) first ask for a tunable family's shape.
void register_shape_problems();

} // namespace xgpu::detail
