// numpy.bincount and numpy.histogram (xgpu/algorithm.hpp) on kernels/histogram.kernel: counts with
// atomics, exact in any order; weighted sums in a fixed order (the weights sorted by bin, a
// segmented scan, each bin's total taken from its run's end), so that they are the same bits on
// every run. numpy's uniform bins: an index from (x - lo) * bins / (hi - lo), corrected by one
// against the edges themselves, which are numpy's linspace.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "xgpu/algorithm.hpp"
#include "xgpu/sort.hpp"

namespace xgpu::detail {

namespace {

enum class BinRule { value, uniform, edges };

std::string bin_code(BinRule r) {
    switch (r) {
    case BinRule::value: return "    (void)bins;\n    return (int64_t)x;";
    case BinRule::uniform:
        return "    const XGPU_HIST_E v = (XGPU_HIST_E)x;\n"
               "    if (!(v >= first && v <= last)) return -1;\n"
               "    int64_t b = (int64_t)((v - first) * norm);\n"
               "    if (b >= bins) b = bins - 1;\n"
               "    if (v < edges[edges_o + b])\n"
               "        b -= 1;\n"
               "    else if (b != bins - 1 && v >= edges[edges_o + b + 1])\n"
               "        b += 1;\n"
               "    return b;";
    default:
        return "    const XGPU_HIST_E v = (XGPU_HIST_E)x;\n"
               "    if (!(v >= edges[edges_o] && v <= edges[edges_o + bins])) return -1;\n"
               "    int64_t lo = 0, hi = bins + 1;\n"
               "    while (lo < hi) {\n"
               "        const int64_t mid = lo + (hi - lo) / 2;\n"
               "        if (edges[edges_o + mid] <= v)\n"
               "            lo = mid + 1;\n"
               "        else\n"
               "            hi = mid;\n"
               "    }\n"
               "    return lo - 1 < bins ? lo - 1 : bins - 1;";
    }
}

struct HistShape {
    unsigned wg, items, local_bins;
};

// GPUs: tiles of 256 x 64 values counted in local memory; CPUs: a work-group of one counting
// 65536 values in order.
HistShape hist_shape(const Context& ctx, std::int64_t bins) {
    const DeviceInfo& d = ctx.device().info();
    HistShape s{1, 65536, 0};
    if (d.type != DeviceType::cpu) s = {codegen::stream_group(d), 64, 0};
    const std::size_t fit = std::min<std::size_t>(4096, codegen::static_local_limit(d) / 8);
    if (std::size_t(bins) <= fit) s.local_bins = unsigned(bins);
    return s;
}

Kernel hist_kernel(const Context& ctx, DType t, DType e, DType w, BinRule rule, const HistShape& s, const char* name) {
    const std::string key = fmt::format("histogram|{}|{}|{}|{}|{}|{}|{}|{}", int(t), int(e), int(w), int(rule), s.wg,
                                        s.items, s.local_bins, name);
    return generated_kernel(
        ctx, key,
        [&] {
            const std::string defines = fmt::format(
                "#define XGPU_HIST_T {}\n#define XGPU_HIST_E {}\n#define XGPU_HIST_W {}\n#define XGPU_HIST_WG {}\n"
                "#define XGPU_HIST_ITEMS {}\n#define XGPU_HIST_LOCAL {}",
                info(t).device_name, info(e).device_name, info(w).device_name, s.wg, s.items, s.local_bins);
            return codegen::fill("histogram.kernel", {{"defines", defines}, {"bin", bin_code(rule)}});
        },
        name);
}

void push(std::vector<KernelArg>& args, const ArrayDesc& a) {
    args.push_back(make_arg(a.buffer));
    args.push_back(make_arg(std::int64_t(a.offset)));
}

// A scalar of type `e` as a kernel argument.
KernelArg edge_arg(DType e, double v) {
    if (e == DType::float32) return make_arg(float(v));
    return make_arg(v);
}

struct Binning {
    BinRule rule;
    DType edge_type;
    ArrayDesc edges; // the kernel's edges (uniform: numpy's linspace), or any buffer
    double first = 0, last = 0, norm = 0;
    std::int64_t bins;
};

void bin_args(std::vector<KernelArg>& args, const ArrayDesc& x, const Binning& b) {
    push(args, x);
    args.push_back(make_arg(std::uint64_t(x.size())));
    push(args, b.edges);
    args.push_back(edge_arg(b.edge_type, b.first));
    args.push_back(edge_arg(b.edge_type, b.last));
    args.push_back(edge_arg(b.edge_type, b.norm));
    args.push_back(make_arg(b.bins));
}

// The counts of each bin, int64.
ArrayDesc count_bins(const ArrayDesc& x_in, const Binning& b) {
    const Context& ctx = x_in.context;
    const HistShape s = hist_shape(ctx, b.bins);
    const Kernel k = hist_kernel(ctx, x_in.dtype, b.edge_type, DType::int64, b.rule, s, "xgpu_histogram");
    Array<std::int64_t> out = zeros<std::int64_t>(ctx, {std::size_t(b.bins)});
    Array<std::uint32_t> counts = zeros<std::uint32_t>(ctx, {std::size_t(b.bins)});
    // 32-bit counts: at most 2^32 - 1 values a launch.
    const std::uint64_t n = x_in.size(), chunk = std::uint64_t(1) << 31, tile = std::uint64_t(s.wg) * s.items;
    for (std::uint64_t at = 0; at < n; at += chunk) {
        ArrayDesc x = x_in;
        x.offset += std::int64_t(at);
        x.shape = {std::size_t(std::min(chunk, n - at))};
        if (at) counts.fill(0);
        std::vector<KernelArg> args;
        bin_args(args, x, b);
        args.push_back(make_arg(counts.buffer()));
        const std::uint64_t groups = (x.size() + tile - 1) / tile;
        k.launch_args(ctx.current_queue(), codegen::groups_grid(groups, s.wg, std::uint64_t(1) << 16), args);
        out += counts;
    }
    return out.desc();
}

// The weighted sums of each bin, of type w, summed in a fixed order.
ArrayDesc sum_bins(const ArrayDesc& x, const ArrayDesc& weights, DType w, const Binning& b) {
    const Context& ctx = x.context;
    const HistShape s{codegen::stream_group(ctx.device().info()), 1, 0};
    const std::uint64_t n = x.size(), groups = (n + s.wg - 1) / s.wg;
    const Grid grid = codegen::groups_grid(groups, s.wg, std::uint64_t(1) << 16);
    ArrayDesc out = make_array(ctx, w, {std::size_t(b.bins)}, Order::C);
    const unsigned char zero[16] = {};
    fill(out, zero);
    if (n == 0) return out;
    Array<std::int64_t> bin = empty<std::int64_t>(ctx, {n});
    std::vector<KernelArg> args;
    bin_args(args, x, b);
    args.push_back(make_arg(bin.buffer()));
    hist_kernel(ctx, x.dtype, b.edge_type, w, b.rule, s, "xgpu_bins").launch_args(ctx.current_queue(), grid, args);
    ArrayDesc v = make_array(ctx, w, {n}, Order::C);
    assign(v, reshape(weights, {n}));
    sort_by_key(bin.desc(), v);
    Array<std::uint8_t> flag = empty<std::uint8_t>(ctx, {n});
    args = {make_arg(bin.buffer()), make_arg(std::uint64_t(n)), make_arg(flag.buffer())};
    hist_kernel(ctx, x.dtype, b.edge_type, w, b.rule, s, "xgpu_segment_flags")
        .launch_args(ctx.current_queue(), grid, args);
    const ArrayDesc sums = make_array(ctx, w, {n}, Order::C);
    scan(sum_op(ctx, w), *array_node(v), sums, &flag.desc(), true);
    args = {make_arg(bin.buffer()), make_arg(sums.buffer), make_arg(std::uint64_t(n)), make_arg(out.buffer)};
    hist_kernel(ctx, x.dtype, b.edge_type, w, b.rule, s, "xgpu_segment_last")
        .launch_args(ctx.current_queue(), grid, args);
    return out;
}

ArrayDesc flat(const ArrayDesc& a) {
    ArrayDesc c = a;
    if (!a.is_c_contiguous()) {
        c = make_array(a.context, a.dtype, a.shape, Order::C);
        assign(c, a);
    }
    return reshape(c, {c.size()});
}

template <class T> T read_scalar(const ArrayDesc& d) {
    T v{};
    to_host(d, &v);
    return v;
}

void check_weights(const ArrayDesc& a, const ArrayDesc* weights, const char* what) {
    if (!weights) return;
    if (!weights->buffer) throw InvalidArgument(fmt::format("xgpu: {}: the weights are an empty Array", what));
    if (!(weights->context == a.context))
        throw InvalidArgument(fmt::format("xgpu: {}: the weights belong to another context", what));
    if (weights->shape != a.shape)
        throw ShapeError(fmt::format("xgpu: {}: the weights (shape {}) must have the shape of the values ({})", what,
                                     to_string(weights->shape), to_string(a.shape)));
    if (kind(weights->dtype) == Kind::complex)
        throw InvalidArgument(fmt::format("xgpu: {}: complex weights are not supported", what));
}

} // namespace

ArrayDesc bincount(const ArrayDesc& x, const ArrayDesc* weights, std::size_t minlength) {
    if (!x.buffer) throw InvalidArgument("xgpu: bincount of an empty Array");
    if (x.shape.size() != 1)
        throw ShapeError(fmt::format("xgpu: bincount: the values must be 1-D, not of shape {}", to_string(x.shape)));
    if (!is_integer(x.dtype) && x.dtype != DType::bool_)
        throw InvalidArgument(
            fmt::format("xgpu: bincount: the values must be integers (or bool), not {}", name(x.dtype)));
    check_weights(x, weights, "bincount");
    if (weights) require_fp64(x.context, DType::float64);
    const ArrayDesc v = flat(x);
    std::int64_t bins = std::int64_t(minlength);
    if (v.size() > 0) {
        const NodePtr n = array_node(v);
        const auto lo = read_scalar<std::int64_t>(reduce_all(*n, ReduceOp::min, DType::int64));
        if (lo < 0) throw InvalidArgument(fmt::format("xgpu: bincount: the values must not be negative ({})", lo));
        const auto hi = read_scalar<std::int64_t>(reduce_all(*n, ReduceOp::max, DType::int64));
        bins = std::max(bins, hi + 1);
    }
    Binning b{BinRule::value, DType::float32, v, 0, 0, 0, bins};
    if (weights) return sum_bins(v, flat(*weights), DType::float64, b);
    if (v.size() == 0) return zeros<std::int64_t>(x.context, {minlength}).desc();
    return count_bins(v, b);
}

std::pair<ArrayDesc, ArrayDesc> histogram(const ArrayDesc& a, const ArrayDesc* edges, std::size_t bins,
                                          std::optional<std::pair<double, double>> range, const ArrayDesc* weights) {
    if (!a.buffer) throw InvalidArgument("xgpu: histogram of an empty Array");
    if (kind(a.dtype) == Kind::complex)
        throw InvalidArgument(fmt::format("xgpu: histogram: {} values are not supported", name(a.dtype)));
    check_weights(a, weights, "histogram");
    const Context& ctx = a.context;
    const ArrayDesc v = flat(a);
    const DType e = kind(a.dtype) == Kind::floating ? a.dtype : DType::float64;
    require_fp64(ctx, e);
    const DType w = weights ? weights->dtype : DType::int64;
    Binning b{BinRule::uniform, e, {}, 0, 0, 0, std::int64_t(bins)};
    ArrayDesc out_edges;
    if (edges) {
        if (!edges->buffer) throw InvalidArgument("xgpu: histogram: the edges are an empty Array");
        if (!(edges->context == ctx)) throw InvalidArgument("xgpu: histogram: the edges belong to another context");
        if (edges->shape.size() != 1 || edges->size() < 2)
            throw ShapeError(
                fmt::format("xgpu: histogram: the edges must be a 1-D array of at least 2, not of shape {}",
                            to_string(edges->shape)));
        if (kind(edges->dtype) == Kind::complex) throw InvalidArgument("xgpu: histogram: complex edges");
        const std::size_t ne = edges->size();
        const Index lower[] = {Slice{0, std::int64_t(ne) - 1, 1}}, upper[] = {Slice{1, std::int64_t(ne), 1}};
        const NodePtr decreasing =
            op_node("lt", DType::bool_, array_node(view(*edges, upper)), array_node(view(*edges, lower)));
        if (read_scalar<bool>(reduce_all(*decreasing, ReduceOp::any)))
            throw InvalidArgument("xgpu: histogram: the edges must increase monotonically");
        b.rule = BinRule::edges;
        b.edge_type = promote(e, edges->dtype) == DType::float32 ? DType::float32 : DType::float64;
        require_fp64(ctx, b.edge_type);
        b.edges = make_array(ctx, b.edge_type, {ne}, Order::C);
        assign(b.edges, *edges);
        b.bins = std::int64_t(ne) - 1;
        out_edges = *edges;
    } else {
        if (bins == 0) throw InvalidArgument("xgpu: histogram: the number of bins must be positive");
        double lo = 0, hi = 1;
        if (range) {
            std::tie(lo, hi) = *range;
            if (!(lo <= hi))
                throw InvalidArgument(
                    fmt::format("xgpu: histogram: the range's max must be larger than its min ({}, {})", lo, hi));
            if (!std::isfinite(lo) || !std::isfinite(hi))
                throw InvalidArgument(fmt::format("xgpu: histogram: the range [{}, {}] is not finite", lo, hi));
        } else if (v.size() > 0) {
            const NodePtr n = array_node(v);
            lo = read_scalar<double>(reduce_all(*n, ReduceOp::min, DType::float64));
            hi = read_scalar<double>(reduce_all(*n, ReduceOp::max, DType::float64));
            if (!std::isfinite(lo) || !std::isfinite(hi))
                throw InvalidArgument(
                    fmt::format("xgpu: histogram: the range of the values, [{}, {}], is not finite", lo, hi));
        }
        if (lo == hi) {
            lo -= 0.5;
            hi += 0.5;
        }
        // numpy's linspace(lo, hi, bins + 1) in the edges' type, the last edge hi itself.
        std::vector<double> h(bins + 1);
        const double step = (hi - lo) / double(bins);
        for (std::size_t i = 0; i <= bins; ++i)
            h[i] = double(i) * step + lo;
        h[bins] = hi;
        out_edges = make_array(ctx, e, {bins + 1}, Order::C);
        if (e == DType::float32) {
            std::vector<float> f(h.begin(), h.end());
            from_host(out_edges, f.data());
            // numpy keeps the float32 values in [lo, hi] compared as doubles: the same float bounds.
            float lo32 = float(lo), hi32 = float(hi);
            if (double(lo32) < lo) lo32 = std::nextafter(lo32, std::numeric_limits<float>::infinity());
            if (double(hi32) > hi) hi32 = std::nextafter(hi32, -std::numeric_limits<float>::infinity());
            b.first = lo32;
            b.last = hi32;
            b.norm = double(bins) / (hi - lo);
        } else {
            from_host(out_edges, h.data());
        }
        if (e != DType::float32) {
            b.first = lo;
            b.last = hi;
            b.norm = double(bins) / (hi - lo);
        }
        b.edges = out_edges;
    }
    if (weights) return {sum_bins(v, flat(*weights), w, b), out_edges};
    if (v.size() == 0) return {zeros<std::int64_t>(ctx, {std::size_t(b.bins)}).desc(), out_edges};
    return {count_bins(v, b), out_edges};
}

} // namespace xgpu::detail
