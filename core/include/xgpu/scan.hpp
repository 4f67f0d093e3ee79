// xgpu scans (prefix sums) with any associative operator, as PyOpenCL's InclusiveScanKernel and
// ExclusiveScanKernel, segmented scans, and on them numpy.cumsum and stream compaction.
//
//   xgpu::ScanKernel<std::int64_t> sum(ctx, "a + b", "0");  // operator over a and b, neutral element
//   sum.inclusive(x, y);                // y[i] = x[0] + ... + x[i]
//   sum.exclusive(x, y);                // y[i] = x[0] + ... + x[i-1]; y[0] = 0
//   sum.inclusive(x, y, flags);         // segmented: a nonzero flag starts a new segment there
//   auto c = xgpu::cumsum(x);           // numpy.cumsum: int8 -> int64, float32 -> float32
//   auto r = xgpu::cumsum(m, 1);        // along an axis; cumprod likewise
//   auto kept = xgpu::copy_if(x, x > 0);   // the elements where the predicate holds, in order
//
// Scans run over the elements in C order (multi-dimensional arrays as if flattened); input and
// output must have the same number of elements, and the output may be the input. Inputs may be
// views or expressions (x * 2 is computed inside the scan's kernel). The operator must be
// associative; it need not commute. It is pasted into the kernel as
//   XGPU_SCAN_T xgpu_scan_op(XGPU_SCAN_T a, XGPU_SCAN_T b) { return (<operator>); }
// in the kernel dialect, after the optional preamble (helper functions). Results are exact for
// integers and, for floats, the same bits on every run on one device (the order of operations is
// fixed by the size and the device).
//
// XGPU_SCAN_TILE=<work-group size>x<elements per work-item>[s|d] overrides the tile the device
// gets (s: staged through local memory, as on GPUs; d: runs read directly, as on CPUs).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "xgpu/array.hpp"
#include "xgpu/reduction.hpp"

namespace xgpu {

namespace detail {
// A scan operator on a context: the scan's type, the operator over a and b, the neutral element.
struct ScanOp {
    Context ctx;
    DType type;
    std::string op, neutral, preamble;
};

// out = the scan of `in` (converted to op.type), inclusive or exclusive, restarting where
// `flags` (bool or integer, nonzero) is set.
void scan(const ScanOp& op, const Node& in, const ArrayDesc& out, const ArrayDesc* flags, bool inclusive);
// Elements of x (C order) where `pred` is nonzero, written to out[0 ..]; `count` (0-d int64)
// receives their number. Elements past out's size are counted but not written.
void copy_if(const ArrayDesc& x, const Node& pred, const ArrayDesc& out, const ArrayDesc& count);
// The same, of x's elements or (x null) of the flat indices (int64) where `pred` holds; with
// `rejected`, the others too, in order, into rejected[0 ..] (PyOpenCL's partition).
void compact(const ArrayDesc* x, const Node& pred, const ArrayDesc& out, const ArrayDesc* rejected,
             const ArrayDesc& count);
// numpy's a[mask] = values: the k-th element of `a` (C order) where `mask` holds takes values[k]
// (values: 1-D, a's type; elements past its size are left alone).
void place(const Node& mask, const ArrayDesc& values, const ArrayDesc& a);

// The operator and neutral element of a sum of `type` (complex types through array.h), and of a
// product.
ScanOp sum_op(const Context& ctx, DType type);
ScanOp prod_op(const Context& ctx, DType type);
// out (of the input's shape) = the scan of `in` along `axis`, each line on its own.
void scan_axis(const ScanOp& op, const Node& in, const ArrayDesc& out, std::size_t axis, bool inclusive);

template <class F>
concept ScanFlags = ArrayLike<F> &&(dtype_v<typename std::remove_cvref_t<F>::value_type> == DType::bool_ ||
                                    is_integer(dtype_v<typename std::remove_cvref_t<F>::value_type>));
template <class F> ArrayDesc flags_desc(const F& f) {
    if constexpr (requires { f.desc(); })
        return f.desc();
    else
        return Array<typename F::value_type>(f).desc(); // an expression: evaluated first
}
} // namespace detail

template <Element T> class ScanKernel {
public:
    // `op`: an associative expression of a and b (type T); `neutral`: an expression with
    // op(neutral, x) == x, what exclusive scans give where nothing comes before; `preamble`:
    // device code (functions) the operator may call. The kernels compile at first use (a
    // CompileError then carries the log and source), once per variant and context.
    ScanKernel(const Context& ctx, std::string op, std::string neutral, std::string preamble = "")
        : op_{ctx, dtype_v<T>, std::move(op), std::move(neutral), std::move(preamble)} {}

    // out[i] = in[0] op ... op in[i]. `in` is an array or an expression (converted to T).
    template <ArrayLike E> void inclusive(const E& in, const Array<T>& out) const {
        detail::scan(op_, *detail::expr_node(in), out.desc(), nullptr, true);
    }
    // out[i] = in[0] op ... op in[i-1], out[0] = neutral.
    template <ArrayLike E> void exclusive(const E& in, const Array<T>& out) const {
        detail::scan(op_, *detail::expr_node(in), out.desc(), nullptr, false);
    }
    // Segmented: each element whose flag is nonzero starts a new segment, which is scanned on
    // its own (exclusive: the neutral element at its start).
    template <ArrayLike E, detail::ScanFlags F> void inclusive(const E& in, const Array<T>& out, const F& flags) const {
        const detail::ArrayDesc f = detail::flags_desc(flags);
        detail::scan(op_, *detail::expr_node(in), out.desc(), &f, true);
    }
    template <ArrayLike E, detail::ScanFlags F> void exclusive(const E& in, const Array<T>& out, const F& flags) const {
        const detail::ArrayDesc f = detail::flags_desc(flags);
        detail::scan(op_, *detail::expr_node(in), out.desc(), &f, false);
    }
    // Into a new array of the input's shape.
    template <ArrayLike E> Array<T> inclusive(const E& in) const {
        Array<T> out = empty<T>(op_.ctx, shape_of(in));
        inclusive(in, out);
        return out;
    }
    template <ArrayLike E> Array<T> exclusive(const E& in) const {
        Array<T> out = empty<T>(op_.ctx, shape_of(in));
        exclusive(in, out);
        return out;
    }

    const Context& context() const { return op_.ctx; }

private:
    template <class E> static Shape shape_of(const E& e) { return e.shape(); }
    detail::ScanOp op_;
};

// numpy.cumsum without an axis: the running sum over the elements in C order, as a 1-D array in
// numpy's type (bool and signed integers to int64, unsigned to uint64; floats keep their type).
template <ArrayLike E> auto cumsum(const E& x) {
    using R = type_of_t<detail::sum_type(detail::operand_dtype<E>())>;
    const detail::NodePtr n = detail::expr_node(x);
    const Context& ctx = detail::node_context(*n);
    Array<R> out = empty<R>(ctx, {shape_size(detail::result_shape(*n))});
    detail::scan(detail::sum_op(ctx, dtype_v<R>), *n, out.desc(), nullptr, true);
    return out;
}

namespace detail {
// The running sums (prod: products) of the lines of x along `axis`, in numpy's type.
template <ArrayLike E> auto scan_along(const E& x, std::int64_t axis, bool prod) {
    using R = type_of_t<sum_type(operand_dtype<E>())>;
    const NodePtr n = expr_node(x);
    const Context& ctx = node_context(*n);
    const Shape shape = result_shape(*n);
    const std::int64_t nd = std::int64_t(shape.size());
    if (axis < -nd || axis >= nd)
        throw ShapeError("xgpu: " + std::string(prod ? "cumprod" : "cumsum") + ": axis " + std::to_string(axis) +
                         " is out of bounds for an array of dimension " + std::to_string(nd));
    Array<R> out = empty<R>(ctx, shape);
    scan_axis(prod ? prod_op(ctx, dtype_v<R>) : sum_op(ctx, dtype_v<R>), *n, out.desc(),
              std::size_t(axis < 0 ? axis + nd : axis), true);
    return out;
}
} // namespace detail

// numpy.cumsum and numpy.cumprod along an axis (negative from the end): the running sums
// (products) of each line, of the input's shape, in numpy's type (as cumsum without an axis).
template <ArrayLike E> auto cumsum(const E& x, std::int64_t axis) {
    return detail::scan_along(x, axis, false);
}
template <ArrayLike E> auto cumprod(const E& x, std::int64_t axis) {
    return detail::scan_along(x, axis, true);
}
// numpy.cumprod without an axis: the running product in C order, 1-D.
template <ArrayLike E> auto cumprod(const E& x) {
    using R = type_of_t<detail::sum_type(detail::operand_dtype<E>())>;
    const detail::NodePtr n = detail::expr_node(x);
    const Context& ctx = detail::node_context(*n);
    Array<R> out = empty<R>(ctx, {shape_size(detail::result_shape(*n))});
    detail::scan(detail::prod_op(ctx, dtype_v<R>), *n, out.desc(), nullptr, true);
    return out;
}

// Stream compaction: the elements of x (C order) where `pred` (an array or expression of x's
// shape, bool or numeric) is nonzero, in their order, as a 1-D array. Its size is the number
// kept, which is read back to the host before the call returns.
template <Element T, ArrayLike P> Array<T> copy_if(const Array<T>& x, const P& pred) {
    Array<T> out = empty<T>(x.context(), {x.size()});
    DeviceScalar<std::int64_t> count(detail::make_array(x.context(), DType::int64, {}, Order::C));
    detail::copy_if(x.desc(), *detail::expr_node(pred), out.desc(), count.desc());
    return out(slice(0, count.get()));
}
// The same into `out` (contiguous; elements past its size are dropped), without waiting: the
// number kept (which may exceed out.size()) stays on the device, for later work or get().
template <Element T, ArrayLike P>
DeviceScalar<std::int64_t> copy_if(const Array<T>& x, const P& pred, const Array<T>& out) {
    DeviceScalar<std::int64_t> count(detail::make_array(x.context(), DType::int64, {}, Order::C));
    detail::copy_if(x.desc(), *detail::expr_node(pred), out.desc(), count.desc());
    return count;
}

} // namespace xgpu
