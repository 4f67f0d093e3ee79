// Launch shapes, the module's side (the public part is xgpu/codegen.hpp).
#pragma once

#include <cstdint>
#include <optional>

#include "xgpu/codegen.hpp"
#include "xgpu/grid.hpp"

namespace xgpu::codegen {

// The shape a LaunchShapeScope sets for `family` on this thread, checked against `ctx`'s device
// (as launch_shape does); none when no scope is active.
std::optional<LaunchShape> scoped_shape(const Context& ctx, KernelFamily family, DType type, bool segmented = false);

// A launch of `groups` work-groups of `wg` work-items, in one row while at most `row_groups`
// groups (default: rows of at most 2^30 work-items, as some OpenCL drivers mishandle 1-D ranges
// past 2^31), else in rows of `row_groups` (a 2-D grid). Kernels number their group as
// GROUP_ID(1) * NUM_GROUPS(0) + GROUP_ID(0); the last row's extra groups find no work.
Grid groups_grid(std::uint64_t groups, std::size_t wg, std::uint64_t row_groups = 0);

// For tests of the 2-D grids' last row: while one lives, groups_grid's default rows on this thread
// hold `row_groups` groups instead of 2^30 work-items' worth.
class GridRowsScope {
public:
    explicit GridRowsScope(std::uint64_t row_groups);
    ~GridRowsScope();
    GridRowsScope(const GridRowsScope&) = delete;
    GridRowsScope& operator=(const GridRowsScope&) = delete;

private:
    std::uint64_t previous_;
};

// The work-group size streaming kernels use: 256, or the device's limit when lower.
unsigned stream_group(const DeviceInfo& d);

// The bytes of local memory a kernel may declare statically (XGPU_LOCAL arrays) on device `d`:
// what the backend reports, else OpenCL's minimum of 32 KiB.
std::size_t static_local_limit(const DeviceInfo& d);

// The shape of an elementwise kernel over `n` elements whose result has type `result` and which
// loads `loaded_bytes` per element from streamed inputs (each distinct input counted once): the
// scope's, else the tuning database's (per XGPU_AUTOTUNE), else the default for that traffic.
LaunchShape elementwise_shape(const Context& ctx, DType result, std::size_t loaded_bytes, std::uint64_t n);

// Whether `shape` suits `family` on device `d` for elements of `type` (launch_shape's checks:
// work-group limits, powers of two, local memory).
bool shape_fits(const DeviceInfo& d, KernelFamily family, const LaunchShape& shape, DType type, bool segmented = false);

// The default chooser of elementwise kernels for that traffic (no scope, no database).
LaunchShape default_elementwise_shape(const DeviceInfo& d, std::size_t result_size, std::size_t loaded_bytes);

// launch_shape for a call on `n` elements (0: not known): the scope's, else the tuning database's
// for n's size bucket (per XGPU_AUTOTUNE), else the default.
LaunchShape sized_launch_shape(const Context& ctx, KernelFamily family, DType type, std::uint64_t n,
                               bool segmented = false);

} // namespace xgpu::codegen
