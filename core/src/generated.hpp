// Generated kernels (array expressions, reductions, user kernels): looked up by a structural key
// in the context's table, so a statement run in a loop neither regenerates nor rehashes source.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "xgpu/context.hpp"

namespace xgpu::detail {

// The kernel for `key`; on a miss, compiles make_source() (dialect) and looks up `name`.
Kernel generated_kernel(const Context& ctx, const std::string& key, const std::function<std::string()>& make_source,
                        const std::string& name);

// Streaming kernels (one element per work-item) end their parameter list with stream_params and
// open with stream_begin, which sets `const uint64_t i` to the element index. On GPUs the launch
// is padded to whole work-groups and guarded (2-D past 2^30 work-items: some OpenCL drivers
// mishandle 1-D ranges past 2^31). On CPUs a per-item guard stops PoCL from vectorising across
// work-items (half the bandwidth, ../shared/PERF.md): the launch is split into whole work-groups
// with the guard switched off by a uniform argument, and one guarded group for the remainder (the
// same work-group size, so PoCL compiles no new specialisation for each array size).
inline constexpr const char* stream_params =
    "const uint64_t xgpu_base, const uint64_t xgpu_count, const uint32_t xgpu_guard";
std::string stream_begin(const Context& ctx, const std::string& index = "i");
// Launches `k` over `count` work-items with `args` then the base and count arguments.
void stream_launch(const Context& ctx, const Kernel& k, std::vector<KernelArg> args, std::uint64_t count);

} // namespace xgpu::detail
