#include "generated.hpp"

#include "context_shared.hpp"

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

Grid stream_grid(const Context& ctx, std::size_t n) {
    // One element per work-item in groups of 256: coalesced on GPUs, and the shape PoCL
    // vectorises best on CPUs (../shared/PERF.md).
    std::size_t wg = 256;
    const std::size_t max = ctx.device().info().max_work_group_size;
    if (max && max < wg) wg = max;
    const std::size_t row = std::size_t(1) << 30;
    if (n <= row) return Grid{Range((n + wg - 1) / wg * wg, 1), Range(wg, 1)};
    return Grid{Range(row, (n + row - 1) / row), Range(wg, 1)};
}

} // namespace xgpu::detail
