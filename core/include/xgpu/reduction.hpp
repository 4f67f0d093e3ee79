// xgpu reductions: sum, prod, min, max, mean, var, std, dot, vdot, norm, argmin, argmax, any, all
// over whole arrays, views and fused expressions (sum(x * y) is one pass over memory), or along
// any axes (xgpu::Axes: several, keepdims); and
// ReductionKernel as PyOpenCL's. A full reduction returns a DeviceScalar: a 0-d array that stays
// on the device, so later expressions use it without a host round trip; get() reads it.
//
//   auto r = xgpu::dot(x, y);           // DeviceScalar<double>, nothing read yet
//   y = y / xgpu::norm(y);              // uses the device value
//   double v = r.get();                 // reads it
//
// Results are deterministic: the same inputs on the same device give the same bits.
#pragma once

#include <climits>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xgpu/array.hpp"
#include "xgpu/codegen.hpp"
#include "xgpu/elementwise.hpp"

namespace xgpu {

template <Element T> class DeviceScalar : public Array<T> {
public:
    DeviceScalar() = default;
    explicit DeviceScalar(detail::ArrayDesc d) : Array<T>(std::move(d)) {}
    // Reads the value (waits for the work that computes it).
    T get() const { return Array<T>::get()[0]; }
    // Starts reading the value into `out`, which must stay alive until the event completes.
    Event get_async(T& out) const { return Array<T>::get_async(std::span<T>(&out, 1)); }
};

namespace detail {
template <Element T> struct operand_traits<DeviceScalar<T>> {
    static constexpr bool is_array = true;
    using type = T;
};

// What a reduction computes, as kernel code over an accumulator type.
struct ReduceSpec {
    std::string name;         // part of the kernel key
    std::string acc_type;     // accumulator type in kernel code
    std::string declarations; // type and function declarations the code below needs
    std::string neutral;      // an expression of acc_type: the neutral element
    std::string reduce;       // an expression combining accumulators `a` and `b`
    std::string map;          // an expression making an accumulator from value `v` at index `i`
    std::string finish;       // an expression making the result from the final accumulator `a`
    DType out;                // the result's type
    std::size_t acc_bytes;    // the size of one accumulator in memory (partial results)
    bool shuffle = false;     // acc_type may use CUDA's warp shuffles
};

enum class ReduceOp { sum, min, max, argmin, argmax, any, all, norm1, norm2, norm_inf, prod };
ReduceSpec reduce_spec(ReduceOp op, DType value);
// The largest (or smallest) value of `t` as kernel code (infinities for floating types).
std::string extreme_value(DType t, bool largest);
// Reduces `expr` over its whole shape into a new 0-d array (throws for min/max/arg* of nothing),
// of the operation's result type or, where given, converted to `out`.
ArrayDesc reduce_all(const Node& expr, ReduceOp op, std::optional<DType> out = std::nullopt);
// Reduces along `axis` into a new array of the other dimensions.
ArrayDesc reduce_axis(const Node& expr, ReduceOp op, std::size_t axis);
// Reduces along `axes` (each in range, no repeats; all of them: as reduce_all), into the other
// dimensions, or with `keepdims` into the shape with those of `axes` 1; `out` as in reduce_all.
ArrayDesc reduce_axes(const Node& expr, ReduceOp op, std::vector<std::size_t> axes, bool keepdims,
                      std::optional<DType> out = std::nullopt);
// numpy.mean, numpy.var and numpy.std (ddof: the divisor is the count less ddof) along `axes`.
enum class Moment { mean, var, std };
ArrayDesc moment(const Node& expr, Moment m, std::vector<std::size_t> axes, bool keepdims, double ddof = 0);
// numpy's axis: `axis` (negative from the end) within `ndim`, else ShapeError naming `what`.
std::size_t normalise_axis(std::int64_t axis, std::size_t ndim, const char* what);
// numpy's axis argument: each of `axes` (negative from the end) within `ndim`, without repeats
// (ShapeError naming the axis otherwise); all of them when `all`.
std::vector<std::size_t> normalise_axes(std::span<const std::int64_t> axes, std::size_t ndim, bool all);
// The type numpy.mean gives for elements of `t`: float64 for integers and bool, else t.
constexpr DType mean_type(DType t) {
    return kind(t) == Kind::floating || kind(t) == Kind::complex ? t : DType::float64;
}

constexpr DType sum_type(DType t) {
    if (t == DType::bool_ || kind(t) == Kind::signed_int)
        return info(t).size < 8 || t == DType::bool_ ? DType::int64 : t;
    if (kind(t) == Kind::unsigned_int) return DType::uint64;
    return t;
}
constexpr DType norm_type(DType t) {
    return float_type(real_type(t));
}

template <class E> NodePtr expr_node(const E& e) {
    return node_of(e, operand_dtype<E>());
}

class ReductionKernelImpl {
public:
    ReductionKernelImpl(const Context& ctx, DType type, const std::string& neutral, const std::string& reduce,
                        const std::string& map, const std::string& arguments, const std::string& name,
                        const std::string& preamble);
    ArrayDesc run(std::int64_t n, const std::vector<BoundArg>& args) const;

private:
    Context ctx_;
    ReduceSpec spec_;
    UserArguments args_;
    LaunchShape shape_; // chosen at construction
    Kernel stage1_, stage2_;
};
} // namespace detail

template <ArrayLike E> auto sum(const E& e) {
    constexpr DType t = detail::sum_type(detail::operand_dtype<E>());
    return DeviceScalar<type_of_t<t>>(detail::reduce_all(*detail::expr_node(e), detail::ReduceOp::sum));
}
template <ArrayLike E> auto min(const E& e) {
    return DeviceScalar<typename E::value_type>(detail::reduce_all(*detail::expr_node(e), detail::ReduceOp::min));
}
template <ArrayLike E> auto max(const E& e) {
    return DeviceScalar<typename E::value_type>(detail::reduce_all(*detail::expr_node(e), detail::ReduceOp::max));
}
template <ArrayLike E> DeviceScalar<std::int64_t> argmin(const E& e) {
    return DeviceScalar<std::int64_t>(detail::reduce_all(*detail::expr_node(e), detail::ReduceOp::argmin));
}
template <ArrayLike E> DeviceScalar<std::int64_t> argmax(const E& e) {
    return DeviceScalar<std::int64_t>(detail::reduce_all(*detail::expr_node(e), detail::ReduceOp::argmax));
}
template <ArrayLike E> DeviceScalar<bool> any(const E& e) {
    return DeviceScalar<bool>(detail::reduce_all(*detail::expr_node(e), detail::ReduceOp::any));
}
template <ArrayLike E> DeviceScalar<bool> all(const E& e) {
    return DeviceScalar<bool>(detail::reduce_all(*detail::expr_node(e), detail::ReduceOp::all));
}
// numpy.dot of two 1-D arrays (or expressions): sum(x * y) in one pass, in their promoted type.
template <ArrayLike A, ArrayLike B> auto dot(const A& x, const B& y) {
    // Accumulated as sum() does (integers in 64 bits), returned in the promoted type as numpy.dot
    // returns it (small integers wrap, bool is "any product true").
    auto prod = x * y;
    using P = typename decltype(prod)::value_type;
    return DeviceScalar<P>(detail::reduce_all(*prod.node(), detail::ReduceOp::sum, dtype_v<P>));
}
// numpy.vdot: the first argument conjugated.
template <ArrayLike A, ArrayLike B> auto vdot(const A& x, const B& y) {
    return dot(conj(x), y);
}

// numpy.linalg.norm of a vector: ord 2 (default), 1, or infinity (std::numeric_limits<double>::infinity()).
template <ArrayLike E> auto norm(const E& e, double ord = 2) {
    constexpr DType t = detail::norm_type(detail::operand_dtype<E>());
    const auto op = ord == 2   ? detail::ReduceOp::norm2
                    : ord == 1 ? detail::ReduceOp::norm1
                               : detail::ReduceOp::norm_inf;
    if (ord != 1 && ord != 2 && !(ord > 0 && std::isinf(ord)))
        throw InvalidArgument("xgpu: norm: ord must be 1, 2 or infinity");
    return DeviceScalar<type_of_t<t>>(detail::reduce_all(*detail::expr_node(e), op));
}

// Along one axis: the result has the other dimensions (numpy's axis= argument).
template <ArrayLike E> auto sum(const E& e, std::size_t axis) {
    constexpr DType t = detail::sum_type(detail::operand_dtype<E>());
    return Array<type_of_t<t>>(detail::reduce_axis(*detail::expr_node(e), detail::ReduceOp::sum, axis));
}
template <ArrayLike E> auto min(const E& e, std::size_t axis) {
    return Array<typename E::value_type>(detail::reduce_axis(*detail::expr_node(e), detail::ReduceOp::min, axis));
}
template <ArrayLike E> auto max(const E& e, std::size_t axis) {
    return Array<typename E::value_type>(detail::reduce_axis(*detail::expr_node(e), detail::ReduceOp::max, axis));
}

// numpy's axis= of several axes (negative from the end) and keepdims=:
//   xgpu::sum(x, {0, 2}), xgpu::max(x, xgpu::Axes{-1}.keepdims())
struct Axes {
    std::vector<std::int64_t> list;
    bool keep = false;
    Axes(std::int64_t axis) : list{axis} {}
    Axes(std::initializer_list<std::int64_t> axes) : list(axes) {}
    Axes& keepdims(bool k = true) {
        keep = k;
        return *this;
    }
};

namespace detail {
inline std::vector<std::size_t> axes_of(const Node& n, const Axes& a) {
    return normalise_axes(a.list, result_shape(n).size(), false);
}
template <class T, ArrayLike E> Array<T> along(const E& e, ReduceOp op, const Axes& a) {
    const NodePtr n = expr_node(e);
    return Array<T>(reduce_axes(*n, op, axes_of(*n, a), a.keep, dtype_v<T>));
}
template <class T, ArrayLike E> Array<T> moment_of(const E& e, Moment m, const Axes* a, double ddof) {
    const NodePtr n = expr_node(e);
    const std::vector<std::size_t> axes = a ? axes_of(*n, *a) : normalise_axes({}, result_shape(*n).size(), true);
    return Array<T>(moment(*n, m, axes, a && a->keep, ddof));
}
} // namespace detail

// Along several axes (numpy's axis tuple) and with keepdims.
template <ArrayLike E> auto sum(const E& e, const Axes& a) {
    return detail::along<type_of_t<detail::sum_type(detail::operand_dtype<E>())>>(e, detail::ReduceOp::sum, a);
}
template <ArrayLike E> auto prod(const E& e, const Axes& a) {
    return detail::along<type_of_t<detail::sum_type(detail::operand_dtype<E>())>>(e, detail::ReduceOp::prod, a);
}
template <ArrayLike E> auto min(const E& e, const Axes& a) {
    return detail::along<typename E::value_type>(e, detail::ReduceOp::min, a);
}
template <ArrayLike E> auto max(const E& e, const Axes& a) {
    return detail::along<typename E::value_type>(e, detail::ReduceOp::max, a);
}
template <ArrayLike E> Array<bool> any(const E& e, const Axes& a) {
    return detail::along<bool>(e, detail::ReduceOp::any, a);
}
template <ArrayLike E> Array<bool> all(const E& e, const Axes& a) {
    return detail::along<bool>(e, detail::ReduceOp::all, a);
}
// Along one axis: the first extreme's place along it (int64).
template <ArrayLike E> Array<std::int64_t> argmin(const E& e, const Axes& a) {
    return detail::along<std::int64_t>(e, detail::ReduceOp::argmin, a);
}
template <ArrayLike E> Array<std::int64_t> argmax(const E& e, const Axes& a) {
    return detail::along<std::int64_t>(e, detail::ReduceOp::argmax, a);
}
// numpy.prod of everything (integers in 64 bits, as sum).
template <ArrayLike E> auto prod(const E& e) {
    constexpr DType t = detail::sum_type(detail::operand_dtype<E>());
    return DeviceScalar<type_of_t<t>>(detail::reduce_all(*detail::expr_node(e), detail::ReduceOp::prod));
}
// numpy.mean, var and std (ddof: the divisor is the count less ddof): float64 for integers, the
// real type for var and std of complex. Over everything (a DeviceScalar) or along axes. Call std
// qualified, xgpu::std(x): after `using namespace xgpu`, a bare std(x) is ambiguous.
template <ArrayLike E> auto mean(const E& e) {
    using T = type_of_t<detail::mean_type(detail::operand_dtype<E>())>;
    return DeviceScalar<T>(detail::moment_of<T>(e, detail::Moment::mean, nullptr, 0).desc());
}
template <ArrayLike E> auto mean(const E& e, const Axes& a) {
    return detail::moment_of<type_of_t<detail::mean_type(detail::operand_dtype<E>())>>(e, detail::Moment::mean, &a, 0);
}
template <ArrayLike E> auto var(const E& e, double ddof = 0) {
    using T = type_of_t<real_type(detail::mean_type(detail::operand_dtype<E>()))>;
    return DeviceScalar<T>(detail::moment_of<T>(e, detail::Moment::var, nullptr, ddof).desc());
}
template <ArrayLike E> auto var(const E& e, const Axes& a, double ddof = 0) {
    return detail::moment_of<type_of_t<real_type(detail::mean_type(detail::operand_dtype<E>()))>>(
        e, detail::Moment::var, &a, ddof);
}
template <ArrayLike E> auto std(const E& e, double ddof = 0) {
    using T = type_of_t<real_type(detail::mean_type(detail::operand_dtype<E>()))>;
    return DeviceScalar<T>(detail::moment_of<T>(e, detail::Moment::std, nullptr, ddof).desc());
}
template <ArrayLike E> auto std(const E& e, const Axes& a, double ddof = 0) {
    return detail::moment_of<type_of_t<real_type(detail::mean_type(detail::operand_dtype<E>()))>>(
        e, detail::Moment::std, &a, ddof);
}

// PyOpenCL's ReductionKernel: `map` over index i and the arguments, combined by `reduce` (an
// associative and commutative expression of a and b) from `neutral`.
//
//   xgpu::ReductionKernel<double> dot(ctx, "0", "a + b", "x[i] * y[i]", "const double* x, const double* y");
//   double d = dot(x, y).get();
template <Element T> class ReductionKernel {
public:
    ReductionKernel(const Context& ctx, const std::string& neutral, const std::string& reduce, const std::string& map,
                    const std::string& arguments, const std::string& name = "reduce_kernel",
                    const std::string& preamble = "")
        : impl_(ctx, dtype_v<T>, neutral, reduce, map, arguments, name, preamble) {}

    // Over the size of the first array argument.
    template <class... Args> DeviceScalar<T> operator()(const Args&... args) const {
        return DeviceScalar<T>(impl_.run(-1, {detail::bind_arg(args)...}));
    }
    // Over i = 0 .. n-1.
    template <class... Args> DeviceScalar<T> over(std::size_t n, const Args&... args) const {
        if (n > std::size_t(INT64_MAX)) throw InvalidArgument("xgpu: ReductionKernel::over: the count is too big");
        return DeviceScalar<T>(impl_.run(std::int64_t(n), {detail::bind_arg(args)...}));
    }

private:
    detail::ReductionKernelImpl impl_;
};

} // namespace xgpu
