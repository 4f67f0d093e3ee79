// xgpu reductions: sum, min, max, dot, vdot, norm, argmin, argmax, any, all over whole arrays,
// views and fused expressions (sum(x * y) is one pass over memory), or along one axis; and
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
#include <optional>
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

enum class ReduceOp { sum, min, max, argmin, argmax, any, all, norm1, norm2, norm_inf };
ReduceSpec reduce_spec(ReduceOp op, DType value);
// The largest (or smallest) value of `t` as kernel code (infinities for floating types).
std::string extreme_value(DType t, bool largest);
// Reduces `expr` over its whole shape into a new 0-d array (throws for min/max/arg* of nothing),
// of the operation's result type or, where given, converted to `out`.
ArrayDesc reduce_all(const Node& expr, ReduceOp op, std::optional<DType> out = std::nullopt);
// Reduces along `axis` into a new array of the other dimensions.
ArrayDesc reduce_axis(const Node& expr, ReduceOp op, std::size_t axis);

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
