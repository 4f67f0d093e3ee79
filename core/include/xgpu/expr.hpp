// xgpu expressions: arithmetic, comparisons, logic and math on arrays build an expression tree;
// assigning it to an array generates and launches ONE kernel for the whole statement, cached by
// the tree's structure and types (scalars are kernel arguments, so new values reuse the kernel).
// Result types follow numpy (dtype.hpp); shapes broadcast as numpy's.
#pragma once

#include <array>
#include <memory>

#include "xgpu/array.hpp"

namespace xgpu {

namespace codegen {
struct Operation; // the table of operations (core/src/codegen/operations.hpp)
}

namespace detail {

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
    enum class Op : std::uint8_t { array, scalar, unary, binary, ternary };
    Op op;
    DType type;                                        // the node's result type
    const char* fn = "";                               // operation: "add", "sin", "where", ...
    const codegen::Operation* operation = nullptr;     // its row in the table of operations
    ArrayDesc array;                                   // Op::array
    alignas(16) std::array<unsigned char, 16> value{}; // Op::scalar, stored as `type`
    NodePtr a, b, c;
};

NodePtr array_node(const ArrayDesc& a);
NodePtr scalar_node(DType type, const void* value, DType value_type);
NodePtr op_node(const char* fn, DType type, NodePtr a, NodePtr b = nullptr, NodePtr c = nullptr);
// The broadcast shape of every array in the tree, and the context they share (checked).
Shape result_shape(const Node& n);
const Context& node_context(const Node& n);
// dst[...] = expression, as one kernel launch (through a temporary if dst overlaps an input).
void evaluate(const Node& expr, const ArrayDesc& dst);

template <class E> struct operand_traits { static constexpr bool is_array = false; };
template <Element T> struct operand_traits<Array<T>> {
    static constexpr bool is_array = true;
    using type = T;
};
template <Element T> struct operand_traits<Expr<T>> {
    static constexpr bool is_array = true;
    using type = T;
};

} // namespace detail

// An operand: an Array, an expression, or a C++ scalar.
template <class E>
concept ArrayLike = detail::operand_traits<std::remove_cvref_t<E>>::is_array;
template <class E>
concept Operand = ArrayLike<E> || Scalar<std::remove_cvref_t<E>>;

template <Element T> class Expr {
public:
    using value_type = T;
    explicit Expr(detail::NodePtr n) : node_(std::move(n)) {}
    const detail::NodePtr& node() const { return node_; }
    Shape shape() const { return detail::result_shape(*node_); }
    Array<T> eval() const { return Array<T>(*this); }
    std::vector<T> get() const { return eval().get(); }

private:
    detail::NodePtr node_;
};

namespace detail {

template <class E> constexpr DType operand_dtype() {
    using R = std::remove_cvref_t<E>;
    if constexpr (operand_traits<R>::is_array)
        return dtype_v<typename operand_traits<R>::type>;
    else
        return dtype_v<std::conditional_t<std::is_integral_v<R> && !std::is_same_v<R, bool>, std::int64_t, R>>;
}

// The type in which operands A and B combine (numpy's rules, C++ scalars weak as Python's).
template <class A, class B> constexpr DType combined() {
    constexpr bool aa = ArrayLike<A>, ba = ArrayLike<B>;
    if constexpr (aa && ba)
        return promote(operand_dtype<A>(), operand_dtype<B>());
    else if constexpr (aa)
        return promote_weak(operand_dtype<A>(), scalar_kind<std::remove_cvref_t<B>>());
    else
        return promote_weak(operand_dtype<B>(), scalar_kind<std::remove_cvref_t<A>>());
}

// The node for an operand; a scalar is stored in `as`, the type its operation computes in.
template <class E> NodePtr node_of(const E& e, DType as) {
    using R = std::remove_cvref_t<E>;
    if constexpr (ArrayLike<R>) {
        if constexpr (requires { e.node(); })
            return e.node();
        else
            return array_node(e.desc());
    } else {
        return scalar_node(as, &e, dtype_v<R>);
    }
}

template <DType R, class A> Expr<type_of_t<R>> unary(const char* fn, const A& a) {
    return Expr<type_of_t<R>>(op_node(fn, R, node_of(a, operand_dtype<A>())));
}
// `compute` is the type both operands are brought to; R the result's type.
template <DType R, DType compute, class A, class B> Expr<type_of_t<R>> binary(const char* fn, const A& a, const B& b) {
    return Expr<type_of_t<R>>(op_node(fn, R, node_of(a, compute), node_of(b, compute)));
}

} // namespace detail

// Arithmetic: + - * / % and unary minus.
#define XGPU_ARITH_OP(op, fn, rule)                                                                                    \
    template <Operand A, Operand B>                                                                                    \
    requires(ArrayLike<A> || ArrayLike<B>) auto op(const A& a, const B& b) {                                           \
        constexpr DType t = rule(detail::combined<A, B>());                                                            \
        return detail::binary<t, t>(fn, a, b);                                                                         \
    }
namespace detail {
constexpr DType same(DType t) {
    return t;
}
constexpr DType to_bool(DType) {
    return DType::bool_;
}
constexpr DType integral(DType t) { // numpy's %, //, fmod and ** of two bools are int8
    return t == DType::bool_ ? DType::int8 : t;
}
} // namespace detail
XGPU_ARITH_OP(operator+, "add", detail::same)
XGPU_ARITH_OP(operator-, "sub", detail::same)
XGPU_ARITH_OP(operator*, "mul", detail::same)
XGPU_ARITH_OP(operator/, "div", true_divide_type)
XGPU_ARITH_OP(operator%, "mod", detail::integral)
XGPU_ARITH_OP(floor_divide, "floor_divide", detail::integral)
XGPU_ARITH_OP(maximum, "maximum", detail::same)
XGPU_ARITH_OP(minimum, "minimum", detail::same)
XGPU_ARITH_OP(pow, "pow", detail::integral)
XGPU_ARITH_OP(fmod, "fmod", detail::integral)
XGPU_ARITH_OP(atan2, "atan2", float_type)
XGPU_ARITH_OP(hypot, "hypot", float_type)
#undef XGPU_ARITH_OP

// Comparisons and logic give bool arrays; operands compare in their combined type.
#define XGPU_BOOL_OP(op, fn)                                                                                           \
    template <Operand A, Operand B>                                                                                    \
    requires(ArrayLike<A> || ArrayLike<B>) auto op(const A& a, const B& b) {                                           \
        return detail::binary<DType::bool_, detail::combined<A, B>()>(fn, a, b);                                       \
    }
XGPU_BOOL_OP(operator==, "eq")
XGPU_BOOL_OP(operator!=, "ne")
XGPU_BOOL_OP(operator<, "lt")
XGPU_BOOL_OP(operator<=, "le")
XGPU_BOOL_OP(operator>, "gt")
XGPU_BOOL_OP(operator>=, "ge")
XGPU_BOOL_OP(logical_and, "and")
XGPU_BOOL_OP(logical_or, "or")
XGPU_BOOL_OP(operator&&, "and")
XGPU_BOOL_OP(operator||, "or")
#undef XGPU_BOOL_OP

template <ArrayLike A> auto operator-(const A& a) {
    return detail::unary<detail::operand_dtype<A>()>("neg", a);
}
template <ArrayLike A> auto operator+(const A& a) {
    return detail::unary<detail::operand_dtype<A>()>("pos", a);
}
template <ArrayLike A> auto operator!(const A& a) {
    return detail::unary<DType::bool_>("not", a);
}
template <ArrayLike A> auto logical_not(const A& a) {
    return detail::unary<DType::bool_>("not", a);
}

// Math functions (PyCUDA's cumath, PyOpenCL's clmath): integer arguments compute in floating point.
#define XGPU_MATH_FN(fn, rule)                                                                                         \
    template <ArrayLike A> auto fn(const A& a) {                                                                       \
        return detail::unary<rule(detail::operand_dtype<A>())>(#fn, a);                                                \
    }
XGPU_MATH_FN(sin, float_type)
XGPU_MATH_FN(cos, float_type)
XGPU_MATH_FN(tan, float_type)
XGPU_MATH_FN(asin, float_type)
XGPU_MATH_FN(acos, float_type)
XGPU_MATH_FN(atan, float_type)
XGPU_MATH_FN(sinh, float_type)
XGPU_MATH_FN(cosh, float_type)
XGPU_MATH_FN(tanh, float_type)
XGPU_MATH_FN(asinh, float_type)
XGPU_MATH_FN(acosh, float_type)
XGPU_MATH_FN(atanh, float_type)
XGPU_MATH_FN(exp, float_type)
XGPU_MATH_FN(exp2, float_type)
XGPU_MATH_FN(expm1, float_type)
XGPU_MATH_FN(log, float_type)
XGPU_MATH_FN(log2, float_type)
XGPU_MATH_FN(log10, float_type)
XGPU_MATH_FN(log1p, float_type)
XGPU_MATH_FN(sqrt, float_type)
XGPU_MATH_FN(cbrt, float_type)
XGPU_MATH_FN(erf, float_type)
XGPU_MATH_FN(erfc, float_type)
XGPU_MATH_FN(fabs, float_type)
XGPU_MATH_FN(rint, float_type)
XGPU_MATH_FN(round, float_type) // half to even, as numpy.round
XGPU_MATH_FN(floor, detail::same)
XGPU_MATH_FN(ceil, detail::same)
XGPU_MATH_FN(trunc, detail::same)
XGPU_MATH_FN(abs, real_type) // complex -> magnitude
XGPU_MATH_FN(real, real_type)
XGPU_MATH_FN(imag, real_type)
XGPU_MATH_FN(conj, detail::same)
XGPU_MATH_FN(isnan, detail::to_bool)
XGPU_MATH_FN(isinf, detail::to_bool)
XGPU_MATH_FN(isfinite, detail::to_bool)
#undef XGPU_MATH_FN

// where(condition, a, b): a where the condition is true, else b.
template <Operand C, Operand A, Operand B>
requires(ArrayLike<C> || ArrayLike<A> || ArrayLike<B>) auto where(const C& cond, const A& a, const B& b) {
    constexpr DType t = (ArrayLike<A> || ArrayLike<B>) ? detail::combined<A, B>() : detail::operand_dtype<A>();
    return Expr<type_of_t<t>>(
        detail::op_node("where", t, detail::node_of(cond, DType::bool_), detail::node_of(a, t), detail::node_of(b, t)));
}

// Array members that take expressions.
template <Element T> template <Element U> Array<T>::Array(const Expr<U>& e) {
    *this = e;
}

template <Element T> template <Element U> Array<T>& Array<T>::operator=(const Expr<U>& e) {
    if (!d_.buffer) d_ = detail::make_array(detail::node_context(*e.node()), dtype(), e.shape(), Order::C);
    detail::evaluate(*e.node(), d_);
    return *this;
}

#define XGPU_COMPOUND(op, binop)                                                                                       \
    template <Element T> template <class E> Array<T>& Array<T>::op(const E& e) {                                       \
        auto expr = (*this)binop e;                                                                                    \
        using R = typename decltype(expr)::value_type;                                                                 \
        if (!can_cast_same_kind(dtype_v<R>, dtype_v<T>)) detail::cannot_store(#op, dtype_v<R>, dtype_v<T>);            \
        detail::evaluate(*expr.node(), d_);                                                                            \
        return *this;                                                                                                  \
    }
XGPU_COMPOUND(operator+=, +)
XGPU_COMPOUND(operator-=, -)
XGPU_COMPOUND(operator*=, *)
XGPU_COMPOUND(operator/=, /)
#undef XGPU_COMPOUND

} // namespace xgpu
