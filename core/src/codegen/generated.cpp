#include "generated.hpp"

#include "../context_shared.hpp"

namespace xgpu::detail {

std::optional<Kernel> find_generated(const Context& ctx, const std::string& key) {
    auto& shared = ctx.shared();
    std::lock_guard lock(shared.generated_mutex);
    if (auto it = shared.generated.find(key); it != shared.generated.end()) return it->second;
    return std::nullopt;
}

Kernel add_generated(const Context& ctx, const std::string& key, const std::string& source, std::string_view name) {
    Kernel k = ctx.compile(source).kernel(std::string(name));
    auto& shared = ctx.shared();
    std::lock_guard lock(shared.generated_mutex);
    return shared.generated.emplace(key, k).first->second;
}

} // namespace xgpu::detail
