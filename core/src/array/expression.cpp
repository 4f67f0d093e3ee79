// Array expressions to kernels: a tree of operations becomes ONE generated kernel, keyed by its
// structure, types and operand layouts; scalars, offsets, strides and sizes are arguments.
#include <cstdint>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "../codegen/elementwise.hpp"
#include "../codegen/expression.hpp"
#include "../codegen/operations.hpp"
#include "generator.hpp"
#include "tuning.hpp"
#include "xgpu/array.hpp"
#include "xgpu/detail/dynamic.hpp"

namespace xgpu::detail {

// ---- building nodes ---------------------------------------------------------------------------

namespace {

// Converts one host scalar to another type, as a C++ cast (complex to real keeps the real part).
template <class To, class From> To cast_scalar(const From& v) {
    constexpr bool to_c = !std::is_arithmetic_v<To>, from_c = !std::is_arithmetic_v<From>;
    if constexpr (to_c && from_c)
        return To(typename To::value_type(v.real()), typename To::value_type(v.imag()));
    else if constexpr (to_c)
        return To(typename To::value_type(v), 0);
    else if constexpr (from_c)
        return static_cast<To>(v.real());
    else if constexpr (std::is_same_v<To, bool>)
        return v != From(0);
    else
        return static_cast<To>(v);
}

template <class F> decltype(auto) visit_dtype(DType t, F&& f) {
    switch (t) {
    case DType::bool_: return f(bool{});
    case DType::int8: return f(std::int8_t{});
    case DType::int16: return f(std::int16_t{});
    case DType::int32: return f(std::int32_t{});
    case DType::int64: return f(std::int64_t{});
    case DType::uint8: return f(std::uint8_t{});
    case DType::uint16: return f(std::uint16_t{});
    case DType::uint32: return f(std::uint32_t{});
    case DType::uint64: return f(std::uint64_t{});
    case DType::float32: return f(float{});
    case DType::float64: return f(double{});
    case DType::complex64: return f(std::complex<float>{});
    default: return f(std::complex<double>{});
    }
}

} // namespace

NodePtr array_node(const ArrayDesc& a) {
    if (!a.buffer) throw InvalidArgument("xgpu: an empty Array in an expression");
    auto n = std::make_shared<Node>();
    n->op = Node::Op::array;
    n->type = a.dtype;
    n->array = a;
    return n;
}

NodePtr scalar_node(DType type, const void* value, DType value_type) {
    auto n = std::make_shared<Node>();
    n->op = Node::Op::scalar;
    n->type = type;
    visit_dtype(value_type, [&](auto from) {
        using From = decltype(from);
        From v;
        std::memcpy(&v, value, sizeof v);
        visit_dtype(type, [&](auto to) {
            using To = decltype(to);
            const To converted = cast_scalar<To>(v);
            static_assert(sizeof(To) <= 16);
            std::memcpy(n->value.data(), &converted, sizeof converted);
        });
    });
    return n;
}

namespace {
// numpy refuses an integer raised to a negative integer; a host scalar exponent is known here.
// (An exponent array's negative elements give 0, or +-1 for a base of +-1: a kernel cannot raise.)
void check_integer_power(DType type, const Node& exponent) {
    if (kind(type) != Kind::signed_int || exponent.op != Node::Op::scalar) return;
    auto read = [&](auto v) {
        std::memcpy(&v, exponent.value.data(), sizeof v);
        return std::int64_t(v);
    };
    const std::size_t size = info(type).size;
    const std::int64_t e = size == 1   ? read(std::int8_t())
                           : size == 2 ? read(std::int16_t())
                           : size == 4 ? read(std::int32_t())
                                       : read(std::int64_t());
    if (e < 0) throw InvalidArgument("xgpu: integers to negative integer powers are not allowed (as in numpy)");
}
} // namespace

NodePtr op_node(const char* fn, DType type, NodePtr a, NodePtr b, NodePtr c) {
    const int arity = c ? 3 : b ? 2 : 1;
    const codegen::Operation& op = codegen::operation(fn, arity);
    const DType rule = codegen::result_type(op, a->type, b ? b->type : type, c ? c->type : type);
    if (rule != type)
        throw std::logic_error(fmt::format("xgpu: internal: {} of {} gives {} by the table, {} by the expression", fn,
                                           name(a->type), name(rule), name(type)));
    // An operation without code for its operands' kind is refused when the statement is written,
    // not later when it is computed.
    for (const Node* n : {a.get(), b.get(), c.get()})
        if (n && kind(n->type) == Kind::complex && !op.complex)
            throw InvalidArgument(fmt::format("xgpu: {} is not defined for {} arrays", op.name, name(n->type)));
    // numpy refuses - of bools (use ^ or ~).
    if ((op.name == "sub" || op.name == "neg") && a->type == DType::bool_ && (!b || b->type == DType::bool_))
        throw InvalidArgument(fmt::format("xgpu: {} is not defined for bool operands (as in numpy): use ^ or ~, or "
                                          "an integer type",
                                          op.name));
    if (b && op.name == "pow") check_integer_power(type, *b);
    auto n = std::make_shared<Node>();
    n->op = c ? Node::Op::ternary : b ? Node::Op::binary : Node::Op::unary;
    n->type = type;
    n->fn = fn;
    n->operation = &op;
    n->a = std::move(a);
    n->b = std::move(b);
    n->c = std::move(c);
    return n;
}

NodePtr op_node_auto(std::string_view fn, NodePtr a, NodePtr b, NodePtr c) {
    const codegen::Operation& op = codegen::operation(fn, c ? 3 : b ? 2 : 1);
    const DType type = codegen::result_type(op, a->type, b ? b->type : a->type, c ? c->type : a->type);
    return op_node(op.name.data(), type, std::move(a), std::move(b), std::move(c)); // the table's names end in '\0'
}

namespace {

template <class F> void for_each_array(const Node& n, F&& f) {
    if (n.op == Node::Op::array) f(n.array);
    for (const auto* child : {n.a.get(), n.b.get(), n.c.get()})
        if (child) for_each_array(*child, f);
}

// numpy broadcasting of `s` into `acc`.
void broadcast_into(Shape& acc, const Shape& s, bool& ok) {
    if (s.size() > acc.size()) acc.insert(acc.begin(), s.size() - acc.size(), 1);
    const std::size_t off = acc.size() - s.size();
    for (std::size_t d = 0; d < s.size(); ++d) {
        std::size_t& x = acc[off + d];
        if (x == s[d] || s[d] == 1) continue;
        if (x == 1)
            x = s[d];
        else
            ok = false;
    }
}

std::string shapes_of(const Node& n) {
    std::string s;
    for_each_array(n, [&](const ArrayDesc& a) { s += (s.empty() ? "" : ", ") + to_string(a.shape); });
    return s;
}

} // namespace

Shape result_shape(const Node& n) {
    Shape acc;
    bool ok = true;
    for_each_array(n, [&](const ArrayDesc& a) { broadcast_into(acc, a.shape, ok); });
    if (!ok) throw ShapeError(fmt::format("xgpu: operands with shapes {} cannot be broadcast together", shapes_of(n)));
    return acc;
}

const Context& node_context(const Node& n) {
    const Context* ctx = nullptr;
    for_each_array(n, [&](const ArrayDesc& a) {
        if (!ctx)
            ctx = &a.context;
        else if (!(*ctx == a.context))
            throw InvalidArgument("xgpu: an expression mixes arrays of different contexts");
    });
    if (!ctx) throw InvalidArgument("xgpu: an expression of scalars only has no context; assign it to an array");
    return *ctx;
}

namespace {

bool same_layout(const ArrayDesc& a, const ArrayDesc& b) {
    return a.offset == b.offset && a.shape == b.shape && a.strides == b.strides && a.dtype == b.dtype;
}

void check_types(const Node& n, const Context& ctx) {
    require_fp64(ctx, n.type);
    for (const auto* c : {n.a.get(), n.b.get(), n.c.get()})
        if (c) check_types(*c, ctx);
}

} // namespace

void evaluate(const Node& expr, const ArrayDesc& dst) {
    if (!dst.buffer) throw InvalidArgument("xgpu: assignment to an empty Array");
    // Check everything before any work: contexts, shapes, types.
    for_each_array(expr, [&](const ArrayDesc& a) {
        if (!(a.context == dst.context))
            throw InvalidArgument("xgpu: an expression mixes arrays of different contexts");
    });
    Shape shape = result_shape(expr);
    bool ok = true;
    Shape check = dst.shape;
    broadcast_into(check, shape, ok);
    if (!ok || check != dst.shape)
        throw ShapeError(fmt::format("xgpu: cannot assign a result of shape {} to an array of shape {}",
                                     to_string(shape), to_string(dst.shape)));
    check_types(expr, dst.context);
    require_fp64(dst.context, dst.dtype);
    if (dst.size() == 0) return;

    // An input that shares memory with the destination in another layout would be overwritten
    // while still being read: compute into a temporary first.
    bool overlap = false;
    for_each_array(expr, [&](const ArrayDesc& a) {
        if (may_share_memory(a, dst) && !same_layout(a, dst)) overlap = true;
    });
    if (overlap) {
        ArrayDesc tmp = make_array(dst.context, dst.dtype, dst.shape, Order::C);
        evaluate(expr, tmp);
        evaluate(*array_node(tmp), dst);
        return;
    }

    register_shape_problems();
    codegen::assign(expr, dst);
}

void assign(const ArrayDesc& dst, const ArrayDesc& src) {
    evaluate(*array_node(src), dst);
}

codegen::Lowered lower_map(const Node& expr, const Context& ctx, const Shape& shape, codegen::Want want) {
    if (want == codegen::Want::everything) check_types(expr, ctx);
    return codegen::lower(expr, shape, nullptr, want);
}

std::string element_code(const codegen::Lowered& map, const char* var) {
    return map.body + fmt::format("        const {} {} = {};\n", codegen::device_type(map.type), var, map.value);
}

std::string convert_code(const std::string& value, DType from, DType to) {
    return codegen::convert(value, from, to);
}

} // namespace xgpu::detail
