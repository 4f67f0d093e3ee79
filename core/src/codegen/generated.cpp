#include "generated.hpp"

#include "../context_shared.hpp"

namespace xgpu::detail {

Kernel generated_kernel(const Context& ctx, const std::string& key, const std::function<std::string()>& make_source,
                        const std::string& name) {
    auto& shared = ctx.shared();
    {
        std::lock_guard lock(shared.generated_mutex);
        if (auto it = shared.generated.find(key); it != shared.generated.end()) return it->second;
    }
    Kernel k = ctx.compile(make_source()).kernel(name);
    std::lock_guard lock(shared.generated_mutex);
    return shared.generated.emplace(key, k).first->second;
}

} // namespace xgpu::detail
