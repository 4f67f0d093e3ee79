// Generated kernels (array expressions, reductions, user kernels): looked up by a structural key
// in the context's table, so a statement run in a loop neither regenerates nor rehashes source.
#pragma once

#include <functional>
#include <string>

#include "xgpu/context.hpp"

namespace xgpu::detail {

// The kernel for `key`; on a miss, compiles make_source() (dialect) and looks up `name`.
Kernel generated_kernel(const Context& ctx, const std::string& key, const std::function<std::string()>& make_source,
                        const std::string& name);

// A launch over n work-items with the device's preferred work-group size for streaming. It is
// 2-D once n passes 2^30 (rows of 2^30 work-items), since some OpenCL drivers mishandle 1-D
// ranges past 2^31; kernels take their element index from stream_index.
Grid stream_grid(const Context& ctx, std::size_t n);
// The element index of a work-item of a stream_grid launch, as kernel code (uint64_t).
inline constexpr const char* stream_index = "((uint64_t)XGPU_GLOBAL_ID(1) * XGPU_GLOBAL_SIZE(0) + XGPU_GLOBAL_ID(0))";

} // namespace xgpu::detail
