#include "generated.hpp"

#include <algorithm>

#include <fmt/format.h>

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

namespace {
bool unguarded(const Context& ctx) {
    return ctx.device().type() == DeviceType::cpu;
}
std::size_t group_size(const Context& ctx) {
    const std::size_t max = ctx.device().info().max_work_group_size;
    return max && max < 256 ? max : 256;
}
} // namespace

std::string stream_begin(const Context& ctx, const std::string& i) {
    if (unguarded(ctx))
        return fmt::format("    const uint64_t {0} = xgpu_base + XGPU_GLOBAL_ID(0);\n"
                           "    if (xgpu_guard && {0} >= xgpu_count) return;\n",
                           i);
    return fmt::format(
        "    const uint64_t {0} = xgpu_base + (uint64_t)XGPU_GLOBAL_ID(1) * XGPU_GLOBAL_SIZE(0) + XGPU_GLOBAL_ID(0);\n"
        "    if ({0} >= xgpu_count) return;\n",
        i);
}

void stream_launch(const Context& ctx, const Kernel& k, std::vector<KernelArg> args, std::uint64_t count) {
    if (count == 0) return;
    const std::size_t wg = group_size(ctx);
    const std::size_t row = std::size_t(1) << 30; // a multiple of every work-group size used
    std::uint64_t base = 0;
    std::uint32_t guard = 1;
    args.push_back(KernelArg{KernelArg::Kind::scalar, 8, &base, nullptr});
    args.push_back(KernelArg{KernelArg::Kind::scalar, 8, &count, nullptr});
    args.push_back(KernelArg{KernelArg::Kind::scalar, 4, &guard, nullptr});
    const Queue q = ctx.current_queue();
    if (!unguarded(ctx)) {
        const std::size_t padded = (count + wg - 1) / wg * wg;
        const Grid g = padded <= row ? Grid{Range(padded, 1), Range(wg, 1)}
                                     : Grid{Range(row, (count + row - 1) / row), Range(wg, 1)};
        k.launch_args(q, g, args);
        return;
    }
    const std::uint64_t whole = count / wg * wg;
    guard = 0;
    for (base = 0; base < whole; base += row) {
        const std::size_t n = std::size_t(std::min<std::uint64_t>(row, whole - base));
        k.launch_args(q, Grid{n, wg}, args);
    }
    guard = 1;
    base = whole;
    if (whole < count) k.launch_args(q, Grid{wg, wg}, args);
}

} // namespace xgpu::detail
