// Compaction, boolean masks and joining (xgpu/algorithm.hpp): nonzero and its forms, partition and
// masks are the scan layer's compaction (core/src/array/scan.cpp) with the count read back;
// concatenate and stack assign each input into its view of the result.
#include <algorithm>

#include <fmt/format.h>

#include "xgpu/algorithm.hpp"

namespace xgpu::detail {

namespace {

DeviceScalar<std::int64_t> new_count(const Context& ctx) {
    return DeviceScalar<std::int64_t>(make_array(ctx, DType::int64, {}, Order::C));
}

// The first `count` elements of a 1-D array, as a view.
ArrayDesc first(const ArrayDesc& a, std::int64_t count) {
    const Index idx[] = {Slice{0, count, 1}};
    return view(a, idx);
}

Shape shape_of(const Node& n) {
    return result_shape(n);
}

void check_arrays(std::span<const ArrayDesc> arrays, const char* what) {
    if (arrays.empty()) throw ShapeError(fmt::format("xgpu: {}: needs at least one array", what));
    for (const ArrayDesc& a : arrays) {
        if (!a.buffer) throw InvalidArgument(fmt::format("xgpu: {} of an empty Array", what));
        if (!(a.context == arrays[0].context))
            throw InvalidArgument(fmt::format("xgpu: {}: the arrays belong to different contexts", what));
    }
}

DType common_type(std::span<const ArrayDesc> arrays) {
    DType t = arrays[0].dtype;
    for (const ArrayDesc& a : arrays)
        t = promote(t, a.dtype);
    return t;
}

} // namespace

ArrayDesc flatnonzero(const Node& a) {
    const Context& ctx = node_context(a);
    const std::size_t n = shape_size(shape_of(a));
    const ArrayDesc out = make_array(ctx, DType::int64, {n}, Order::C);
    const DeviceScalar<std::int64_t> count = new_count(ctx);
    compact(nullptr, a, out, nullptr, count.desc());
    return first(out, n ? count.get() : 0);
}

std::vector<ArrayDesc> nonzero(const Node& a) {
    const Shape shape = shape_of(a);
    if (shape.empty())
        throw ShapeError("xgpu: nonzero of a 0-d array: numpy refuses it too (use atleast_1d, or flatnonzero)");
    const Array<std::int64_t> flat(flatnonzero(a));
    std::vector<ArrayDesc> out;
    std::int64_t stride = std::int64_t(shape_size(shape));
    for (const std::size_t s : shape) {
        stride /= std::int64_t(std::max<std::size_t>(s, 1));
        const Array<std::int64_t> idx = floor_divide(flat, stride) % std::int64_t(std::max<std::size_t>(s, 1));
        out.push_back(idx.desc());
    }
    return out;
}

ArrayDesc argwhere(const Node& a) {
    const Shape shape = shape_of(a);
    const Context& ctx = node_context(a);
    if (shape.empty()) { // numpy: one row of no columns where the value is nonzero
        const std::int64_t count = Array<std::int64_t>(flatnonzero(a)).size();
        return make_array(ctx, DType::int64, {std::size_t(count), 0}, Order::C);
    }
    const std::vector<ArrayDesc> idx = nonzero(a);
    const std::size_t count = idx[0].size();
    ArrayDesc out = make_array(ctx, DType::int64, {count, shape.size()}, Order::C);
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const Index at[] = {Slice{}, std::int64_t(d)};
        assign(view(out, at), idx[d]);
    }
    return out;
}

std::pair<ArrayDesc, ArrayDesc> partition(const ArrayDesc& x, const Node& pred) {
    if (!x.buffer) throw InvalidArgument("xgpu: partition of an empty Array");
    const Context& ctx = x.context;
    const std::size_t n = x.size();
    const ArrayDesc yes = make_array(ctx, x.dtype, {n}, Order::C), no = make_array(ctx, x.dtype, {n}, Order::C);
    const DeviceScalar<std::int64_t> count = new_count(ctx);
    compact(&x, pred, yes, &no, count.desc());
    const std::int64_t kept = n ? count.get() : 0;
    return {first(yes, kept), first(no, std::int64_t(n) - kept)};
}

ArrayDesc masked(const ArrayDesc& a, const Node& mask) {
    if (!a.buffer) throw InvalidArgument("xgpu: a[mask] of an empty Array");
    const Shape shape = shape_of(mask);
    if (shape != a.shape)
        throw ShapeError(
            fmt::format("xgpu: a[mask]: the mask has shape {}, the array {}", to_string(shape), to_string(a.shape)));
    const std::size_t n = a.size();
    const ArrayDesc out = make_array(a.context, a.dtype, {n}, Order::C);
    const DeviceScalar<std::int64_t> count = new_count(a.context);
    compact(&a, mask, out, nullptr, count.desc());
    return first(out, n ? count.get() : 0);
}

void assign_masked(const ArrayDesc& a, const Node& mask, const ArrayDesc& values) {
    if (!a.buffer || !values.buffer) throw InvalidArgument("xgpu: a[mask] = values with an empty Array");
    const Shape shape = shape_of(mask);
    if (shape != a.shape)
        throw ShapeError(fmt::format("xgpu: a[mask] = values: the mask has shape {}, the array {}", to_string(shape),
                                     to_string(a.shape)));
    if (values.shape.size() > 1)
        throw ShapeError(
            fmt::format("xgpu: a[mask] = values: the values must be 1-D, not of shape {}", to_string(values.shape)));
    if (values.dtype != a.dtype)
        throw InvalidArgument(fmt::format("xgpu: a[mask] = values: {} values cannot go to a {} array",
                                          name(values.dtype), name(a.dtype)));
    if (values.size() == 1) { // numpy broadcasts one value to every element the mask selects
        const ArrayDesc copy = make_array(a.context, a.dtype, a.shape, Order::C);
        evaluate(
            *op_node("where", a.dtype, std::make_shared<Node>(mask), array_node(reshape(values, {})), array_node(a)),
            copy);
        assign(a, copy);
        return;
    }
    // numpy's count check first: one value per element where the mask holds.
    // (As an int64 0/1 per element: PoCL 3.0 built no kernels for a sum of a bool expression.)
    const std::int64_t one = 1, zero = 0;
    const NodePtr ones =
        op_node("where", DType::int64, std::make_shared<Node>(mask), scalar_node(DType::int64, &one, DType::int64),
                scalar_node(DType::int64, &zero, DType::int64));
    const std::int64_t count = Array<std::int64_t>(reduce_all(*ones, ReduceOp::sum)).get()[0];
    if (count != std::int64_t(values.size()))
        throw ShapeError(
            fmt::format("xgpu: a[mask] = values: {} values cannot fill the {} elements where the mask holds",
                        values.size(), count));
    place(mask, values, a);
}

ArrayDesc concatenate(std::span<const ArrayDesc> arrays, std::int64_t axis_in) {
    check_arrays(arrays, "concatenate");
    const Shape& s0 = arrays[0].shape;
    if (s0.empty()) throw ShapeError("xgpu: concatenate: zero-dimensional arrays cannot be concatenated");
    const std::size_t axis = normalise_axis(axis_in, s0.size(), "concatenate");
    Shape shape = s0;
    shape[axis] = 0;
    for (const ArrayDesc& a : arrays) {
        if (a.shape.size() != s0.size())
            throw ShapeError(fmt::format("xgpu: concatenate: the arrays must have the same number of dimensions: {} "
                                         "and {}",
                                         to_string(s0), to_string(a.shape)));
        for (std::size_t d = 0; d < s0.size(); ++d)
            if (d != axis && a.shape[d] != s0[d])
                throw ShapeError(fmt::format("xgpu: concatenate: shapes {} and {} differ along axis {}, not only "
                                             "along the concatenation axis {}",
                                             to_string(s0), to_string(a.shape), d, axis));
        shape[axis] += a.shape[axis];
    }
    ArrayDesc out = make_array(arrays[0].context, common_type(arrays), shape, Order::C);
    std::int64_t at = 0;
    for (const ArrayDesc& a : arrays) {
        std::vector<Index> idx(axis, Slice{});
        idx.push_back(Slice{at, at + std::int64_t(a.shape[axis]), 1});
        if (a.size()) assign(view(out, idx), a);
        at += std::int64_t(a.shape[axis]);
    }
    return out;
}

ArrayDesc stack(std::span<const ArrayDesc> arrays, std::int64_t axis_in) {
    check_arrays(arrays, "stack");
    const Shape& s0 = arrays[0].shape;
    for (const ArrayDesc& a : arrays)
        if (a.shape != s0)
            throw ShapeError(fmt::format("xgpu: stack: all input arrays must have the same shape: {} and {}",
                                         to_string(s0), to_string(a.shape)));
    const std::size_t axis = normalise_axis(axis_in, s0.size() + 1, "stack");
    Shape shape = s0;
    shape.insert(shape.begin() + std::ptrdiff_t(axis), arrays.size());
    ArrayDesc out = make_array(arrays[0].context, common_type(arrays), shape, Order::C);
    for (std::size_t k = 0; k < arrays.size(); ++k) {
        std::vector<Index> idx(axis, Slice{});
        idx.push_back(std::int64_t(k));
        if (arrays[k].size()) assign(view(out, idx), arrays[k]);
    }
    return out;
}

} // namespace xgpu::detail
