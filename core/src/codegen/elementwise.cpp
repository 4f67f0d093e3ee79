#include "elementwise.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "expression.hpp"
#include "generated.hpp"
#include "launch.hpp"
#include "operations.hpp"
#include "skeleton.hpp"

namespace xgpu::codegen {

namespace {

// Parameter declarations, each followed by ", ", as the skeletons' first line of parameters.
std::string first_line(std::string params) {
    if (!params.empty() && params.back() == ' ') params.pop_back();
    return params;
}

std::string source(const Lowered& l, const LaunchShape& shape, DType dst_type) {
    const std::string group = std::to_string(shape.group_size), items = std::to_string(shape.items),
                      value = convert(l.value, l.type, dst_type);
    return fill("elementwise.kernel", {{"array_h", kernel_file("array.h")},
                                       {"group_size", group},
                                       {"items", items},
                                       {"vector", std::to_string(shape.vector)},
                                       {"guard", shape.whole_groups ? "xgpu_guard" : "1"},
                                       {"params", first_line(l.params)},
                                       {"type", device_type(dst_type)},
                                       {"body", l.body},
                                       {"value", value},
                                       {"at", l.at}});
}

std::string& key(Lowered& l, const LaunchShape& shape) {
    l.key += '|';
    l.key += shape.key();
    return l.key;
}

} // namespace

std::string elementwise_source(const Context&, const detail::Node& expr, const detail::ArrayDesc& dst,
                               const LaunchShape& shape) {
    return source(lower(expr, dst.shape, &dst, Want::everything), shape, dst.dtype);
}

void assign(const detail::Node& expr, const detail::ArrayDesc& dst) {
    const Context& ctx = dst.context;
    Lowered l = lower(expr, dst.shape, &dst, Want::key_and_arguments);
    const LaunchShape shape = elementwise_shape(ctx, dst.dtype, l.loaded_bytes, dst.size());
    const Kernel k = detail::generated_kernel(
        ctx, key(l, shape), [&] { return source(lower(expr, dst.shape, &dst, Want::everything), shape, dst.dtype); },
        "xgpu_elementwise");
    launch_stream(ctx, k, std::move(l.args), dst.size(), shape);
}

std::string stream_source(const StreamKernel& k, const LaunchShape& shape) {
    const std::string group = std::to_string(shape.group_size), items = std::to_string(shape.items);
    return fill("stream.kernel", {{"preamble", k.preamble},
                                  {"group_size", group},
                                  {"items", items},
                                  {"guard", shape.whole_groups ? "xgpu_guard" : "1"},
                                  {"name", k.name},
                                  {"params", first_line(k.params)},
                                  {"index", k.index},
                                  {"body", k.body}});
}

LaunchShape stream_shape(const Context& ctx, DType type) {
    // Streaming kernels store as they go: no vector width.
    if (auto s = scoped_shape(ctx, KernelFamily::elementwise, type)) {
        s->vector = 1;
        return *s;
    }
    LaunchShape s = default_launch_shape(ctx, KernelFamily::elementwise, type);
    s.items = 1;
    return s;
}

void launch_stream(const Context& ctx, const Kernel& k, std::vector<detail::KernelArg> args, std::uint64_t count,
                   const LaunchShape& shape) {
    if (count == 0) return;
    const std::size_t wg = shape.group_size;
    const std::uint64_t per_group = std::uint64_t(wg) * shape.items * shape.vector;
    // Rows of at most 2^30 work-items (some OpenCL drivers mishandle 1-D ranges past 2^31).
    const std::size_t row_groups = (std::size_t(1) << 30) / wg;
    const std::size_t at = args.size();
    args.push_back(detail::make_arg(std::uint64_t(0)));
    args.push_back(detail::make_arg(count));
    args.push_back(detail::make_arg(std::uint32_t(1)));
    const Queue q = ctx.current_queue();
    auto run = [&](std::uint64_t base, std::uint64_t groups, std::uint32_t guard) {
        args[at] = detail::make_arg(base);
        args[at + 2] = detail::make_arg(guard);
        k.launch_args(q, groups_grid(groups, wg, row_groups), args);
    };
    if (!shape.whole_groups) {
        run(0, (count + per_group - 1) / per_group, 1);
        return;
    }
    // Whole groups without the guard, in launches of one row each; then one guarded group.
    const std::uint64_t whole = count / per_group;
    for (std::uint64_t first = 0; first < whole; first += row_groups)
        run(first * per_group, std::min<std::uint64_t>(row_groups, whole - first), 0);
    if (whole * per_group < count) run(whole * per_group, 1, 1);
}

} // namespace xgpu::codegen
