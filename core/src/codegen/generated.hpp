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

} // namespace xgpu::detail
