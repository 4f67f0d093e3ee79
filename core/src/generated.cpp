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
    // The last three arguments: base, count and guard (set for each launch below).
    const std::size_t at = args.size();
    args.push_back(make_arg(std::uint64_t(0)));
    args.push_back(make_arg(count));
    args.push_back(make_arg(std::uint32_t(1)));
    auto set = [&](std::uint64_t base, std::uint32_t guard) {
        args[at] = make_arg(base);
        args[at + 2] = make_arg(guard);
    };
    const Queue q = ctx.current_queue();
    if (!unguarded(ctx)) {
        const std::size_t padded = (count + wg - 1) / wg * wg;
        const Grid g = padded <= row ? Grid{Range(padded, 1), Range(wg, 1)}
                                     : Grid{Range(row, (count + row - 1) / row), Range(wg, 1)};
        k.launch_args(q, g, args);
        return;
    }
    const std::uint64_t whole = count / wg * wg;
    for (std::uint64_t base = 0; base < whole; base += row) {
        const std::size_t n = std::size_t(std::min<std::uint64_t>(row, whole - base));
        set(base, 0);
        k.launch_args(q, Grid{n, wg}, args);
    }
    if (whole < count) {
        set(whole, 1);
        k.launch_args(q, Grid{wg, wg}, args);
    }
}

} // namespace xgpu::detail
