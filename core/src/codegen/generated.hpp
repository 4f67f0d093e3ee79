// Generated kernels (array expressions, reductions, user kernels): looked up by a structural key
// in the context's table, so a statement run in a loop neither regenerates nor rehashes source.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "xgpu/context.hpp"

namespace xgpu::detail {

// The kernel for `key` if the context has made it.
std::optional<Kernel> find_generated(const Context& ctx, const std::string& key);
// Compiles `source` (dialect), looks up `name`, and keeps it for `key` (the first kept wins when
// two threads make the same kernel).
Kernel add_generated(const Context& ctx, const std::string& key, const std::string& source, std::string_view name);

// The kernel for `key`; on a miss, compiles make_source() and looks up `name`. The warm path
// calls nothing of make_source and allocates nothing for it.
template <class MakeSource>
Kernel generated_kernel(const Context& ctx, const std::string& key, MakeSource&& make_source, std::string_view name) {
    if (auto k = find_generated(ctx, key)) return *std::move(k);
    return add_generated(ctx, key, make_source(), name);
}

} // namespace xgpu::detail
