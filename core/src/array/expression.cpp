// Array expressions to kernels: a tree of operations becomes ONE generated kernel, keyed by its
// structure, types and operand layouts; scalars, offsets, strides and sizes are arguments.
#include <cstdint>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "../generated.hpp"
#include "generator.hpp"
#include "xgpu/array.hpp"
#include "xgpu/detail/backend.hpp"

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
    if (b && std::string_view(fn) == "pow") check_integer_power(type, *b);
    auto n = std::make_shared<Node>();
    n->op = c ? Node::Op::ternary : b ? Node::Op::binary : Node::Op::unary;
    n->type = type;
    n->fn = fn;
    n->a = std::move(a);
    n->b = std::move(b);
    n->c = std::move(c);
    return n;
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

// ---- generating the kernel --------------------------------------------------------------------

namespace {

enum class Layout : char { contiguous = 'c', single = 'b', strided = 's' };

// An array operand as the kernel sees it: its layout class, and its strides over the result's
// dimensions (0 where it broadcasts).
struct Operand {
    const ArrayDesc* array;
    Layout layout;
    Strides strides;
};

// The same elements seen the same way: then one load serves every occurrence.
bool same_view(const ArrayDesc& a, const ArrayDesc& b) {
    return a.buffer == b.buffer && a.offset == b.offset && a.dtype == b.dtype && a.shape == b.shape &&
           a.strides == b.strides;
}

Operand classify(const ArrayDesc& a, const Shape& result) {
    Operand o{&a, Layout::strided, Strides(result.size(), 0)};
    const std::size_t off = result.size() - a.shape.size();
    bool any = false;
    for (std::size_t d = 0; d < a.shape.size(); ++d)
        if (a.shape[d] != 1) {
            o.strides[off + d] = a.strides[d];
            any = true;
        }
    if (!any)
        o.layout = Layout::single;
    else if (a.shape == result && a.is_c_contiguous())
        o.layout = Layout::contiguous;
    return o;
}

bool is_complex(DType t) {
    return kind(t) == Kind::complex;
}

// `v` (of type `from`) as type `to`, as an expression.
std::string convert(const std::string& v, DType from, DType to) {
    if (from == to) return v;
    if (to == DType::bool_)
        return is_complex(from) ? fmt::format("(uint8_t)({0}.re != 0 || {0}.im != 0)", v)
                                : fmt::format("(uint8_t)({} != 0)", v);
    if (is_complex(to)) {
        const char* r = dev(real_type(to));
        if (is_complex(from)) return fmt::format("{}_make(({}){}.re, ({}){}.im)", dev(to), r, v, r, v);
        return fmt::format("{}_make(({}){}, ({})0)", dev(to), r, v, r);
    }
    if (is_complex(from)) return fmt::format("({}){}.re", dev(to), v);
    return fmt::format("({}){}", dev(to), v);
}

class Generator {
public:
    // `dst` (the assignment's destination) may be null: then only the value's code is made.
    Generator(const Node& root, const Context& ctx, const Shape& shape, const ArrayDesc* dst)
        : root_(root), ctx_(ctx), shape_(shape) {
        operands_.push_back(dst ? classify(*dst, shape_) : Operand{nullptr, Layout::contiguous, {}});
        collect(root);
        for (const auto& o : operands_)
            strided_ = strided_ || o.layout == Layout::strided;
    }

    std::string key() const {
        std::string k = operands_[0].array
                            ? fmt::format("ew|{}{}|", int(operands_[0].array->dtype), char(operands_[0].layout))
                            : std::string("map|");
        std::size_t next = 1;
        key_of(root_, k, next);
        if (strided_) k += fmt::format("|nd{}", shape_.size());
        return k;
    }

    // The kernel parameters for the operands (destination first, if any), comma separated.
    std::string params() const {
        std::string params = operands_[0].array
                                 ? fmt::format("XGPU_GLOBAL {}* p0, const int64_t o0", dev(operands_[0].array->dtype))
                                 : "";
        std::size_t next_array = 1, next_scalar = 0;
        params_of(root_, params, next_array, next_scalar);
        if (strided_) {
            for (std::size_t d = 0; d < shape_.size(); ++d)
                params += fmt::format(", const uint64_t n{}", d);
            for (std::size_t k = 0; k < operands_.size(); ++k)
                if (operands_[k].layout == Layout::strided)
                    for (std::size_t d = 0; d < shape_.size(); ++d)
                        params += fmt::format(", const int64_t s{}_{}", k, d);
        }
        if (params.rfind(", ", 0) == 0) params.erase(0, 2);
        return params;
    }

    // Statements computing the value at element `i` (a uint64_t in scope); returns its variable.
    std::string element(std::string& body) {
        if (strided_) {
            body += "    uint64_t r = i;\n";
            for (std::size_t d = shape_.size(); d-- > 0;)
                body += fmt::format("    const int64_t k{0} = (int64_t)(r % n{0}); r /= n{0};\n", d);
        }
        std::size_t next_array = 1, next_scalar = 0;
        counter_ = 0;
        loaded_.assign(operands_.size(), std::string());
        return emit(root_, body, next_array, next_scalar);
    }

    std::string source() {
        std::string body;
        const std::string result = element(body);
        body +=
            fmt::format("    p0[o0 + {}] = {};\n", index_of(0), convert(result, root_.type, operands_[0].array->dtype));
        return fmt::format("{}\nXGPU_KERNEL void xgpu_elementwise({}, {}) {{\n{}{}}}\n", embedded_kernel("array.h"),
                           params(), stream_params, stream_begin(ctx_), body);
    }

    // Kernel arguments, in the order source() declares them.
    void arguments(std::vector<KernelArg>& args) const {
        auto push_int = [&](std::int64_t v) { args.push_back(make_arg(v)); };
        if (operands_[0].array) {
            args.push_back(make_arg(operands_[0].array->buffer));
            push_int(operands_[0].array->offset);
        }
        std::size_t k = 1;
        args_of(root_, args, push_int, k);
        if (strided_) {
            for (auto s : shape_)
                push_int(std::int64_t(s));
            for (const auto& o : operands_)
                if (o.layout == Layout::strided)
                    for (auto s : o.strides)
                        push_int(s);
        }
    }

private:
    // Array nodes in tree order (positions from 1) map to operands; a repeated array (the same
    // memory, layout and type: `2.0 * x + sin(x)`) is one operand, one parameter, one load.
    void collect(const Node& n) {
        if (n.op == Node::Op::array) {
            std::size_t id = 1;
            while (id < operands_.size() && !same_view(*operands_[id].array, n.array))
                ++id;
            if (id == operands_.size()) {
                operands_.push_back(classify(n.array, shape_));
                first_.push_back(slot_.size());
            }
            slot_.push_back(id);
        }
        for (const auto* c : {n.a.get(), n.b.get(), n.c.get()})
            if (c) collect(*c);
    }

    void key_of(const Node& n, std::string& k, std::size_t& next) const {
        if (n.op == Node::Op::array) {
            const std::size_t id = slot_[next++];
            k += fmt::format("A{}{}#{}", int(n.type), char(operands_[id].layout), id);
            return;
        }
        if (n.op == Node::Op::scalar) {
            k += fmt::format("S{}", int(n.type));
            return;
        }
        k += fmt::format("({}:{}", n.fn, int(n.type));
        for (const auto* c : {n.a.get(), n.b.get(), n.c.get()})
            if (c) {
                k += ' ';
                key_of(*c, k, next);
            }
        k += ')';
    }
    void params_of(const Node& n, std::string& params, std::size_t& next_array, std::size_t& next_scalar) const {
        if (n.op == Node::Op::array) {
            const std::size_t t = next_array++, id = slot_[t];
            if (first_[id] == t)
                params += fmt::format(", XGPU_GLOBAL const {0}* p{1}, const int64_t o{1}", dev(n.type), id);
        } else if (n.op == Node::Op::scalar) {
            params += fmt::format(", const {} v{}", dev(n.type), next_scalar++);
        }
        for (const auto* c : {n.a.get(), n.b.get(), n.c.get()})
            if (c) params_of(*c, params, next_array, next_scalar);
    }

    template <class Push>
    void args_of(const Node& n, std::vector<KernelArg>& args, Push& push_int, std::size_t& k) const {
        if (n.op == Node::Op::array) {
            const std::size_t t = k++;
            if (first_[slot_[t]] == t) {
                args.push_back(make_arg(n.array.buffer));
                push_int(n.array.offset);
            }
        } else if (n.op == Node::Op::scalar) {
            args.push_back(KernelArg::scalar(n.value.data(), info(n.type).size));
        }
        for (const auto* c : {n.a.get(), n.b.get(), n.c.get()})
            if (c) args_of(*c, args, push_int, k);
    }

    std::string index_of(std::size_t k) const {
        switch (operands_[k].layout) {
        case Layout::contiguous: return "(int64_t)i";
        case Layout::single: return "0";
        default: {
            std::string s;
            for (std::size_t d = 0; d < shape_.size(); ++d)
                s += fmt::format("{}k{} * s{}_{}", d ? " + " : "", d, k, d);
            return s.empty() ? "0" : s;
        }
        }
    }

    std::string temp(DType t, const std::string& value, std::string& body) {
        const std::string name = fmt::format("t{}", counter_++);
        body += fmt::format("    const {} {} = {};\n", dev(t), name, value);
        return name;
    }

    std::string emit(const Node& n, std::string& body, std::size_t& next_array, std::size_t& next_scalar) {
        if (n.op == Node::Op::array) {
            const std::size_t id = slot_[next_array++];
            if (loaded_[id].empty())
                loaded_[id] = temp(n.type, fmt::format("p{}[o{} + {}]", id, id, index_of(id)), body);
            return loaded_[id];
        }
        if (n.op == Node::Op::scalar) return fmt::format("v{}", next_scalar++);
        const std::string a = emit(*n.a, body, next_array, next_scalar);
        const std::string b = n.b ? emit(*n.b, body, next_array, next_scalar) : "";
        const std::string c = n.c ? emit(*n.c, body, next_array, next_scalar) : "";
        return temp(n.type, operation(n, a, b, c, body), body);
    }

    [[noreturn]] void unsupported(const Node& n, DType t) const {
        throw InvalidArgument(fmt::format("xgpu: {} is not defined for {} arrays", n.fn, name(t)));
    }

    // The expression computing node `n` from its operands' values a, b, c.
    std::string operation(const Node& n, const std::string& a0, const std::string& b0, const std::string& c0,
                          std::string& body) {
        const std::string f = n.fn;
        const DType R = n.type;
        const DType ta = n.a->type;
        if (n.op == Node::Op::ternary) // where
            return fmt::format("({} ? {} : {})", convert(a0, ta, DType::bool_), convert(b0, n.b->type, R),
                               convert(c0, n.c->type, R));
        if (n.op == Node::Op::binary) {
            const DType tb = n.b->type;
            if (f == "and" || f == "or")
                return fmt::format("(uint8_t)({} {} {})", convert(a0, ta, DType::bool_), f == "and" ? "&&" : "||",
                                   convert(b0, tb, DType::bool_));
            const bool cmp = f == "eq" || f == "ne" || f == "lt" || f == "le" || f == "gt" || f == "ge";
            const DType C = cmp ? promote(ta, tb) : (f == "atan2" || f == "hypot") ? R : R;
            const std::string a = convert(a0, ta, C), b = convert(b0, tb, C);
            if (cmp) {
                static const char* ops[][2] = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                               {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
                const char* op = "";
                for (auto& o : ops)
                    if (f == o[0]) op = o[1];
                if (is_complex(C)) {
                    if (f == "eq") return fmt::format("(uint8_t)({0}.re == {1}.re && {0}.im == {1}.im)", a, b);
                    if (f == "ne") return fmt::format("(uint8_t)({0}.re != {1}.re || {0}.im != {1}.im)", a, b);
                    unsupported(n, C);
                }
                return fmt::format("(uint8_t)({} {} {})", a, op, b);
            }
            if (is_complex(C)) {
                if (f == "add" || f == "sub" || f == "mul" || f == "div")
                    return fmt::format("{}_{}({}, {})", dev(C), f, a, b);
                unsupported(n, C);
            }
            const bool flt = kind(C) == Kind::floating;
            const char* sym = f == "add" ? "+" : f == "sub" ? "-" : f == "mul" ? "*" : f == "div" ? "/" : nullptr;
            if (sym) return convert(fmt::format("({} {} {})", a, sym, b), C, R);
            if (f == "mod" || f == "fmod") {
                // numpy: % takes the divisor's sign (floor modulo); fmod the dividend's. x % 0 gives 0 for integers.
                const std::string x = temp(C, a, body), y = temp(C, b, body);
                std::string r = flt ? fmt::format("fmod({}, {})", x, y)
                                    : fmt::format("(({1} == 0{3}) ? ({2})0 : {0} % {1})", x, y, dev(C),
                                                  // MIN % -1 is undefined in C; the answer is 0
                                                  kind(C) == Kind::signed_int ? fmt::format(" || {} == -1", y) : "");
                if (f == "fmod") return r;
                const std::string rv = temp(C, r, body);
                return fmt::format("(({0} != 0 && (({0} < 0) != ({1} < 0))) ? ({2})({0} + {1}) : {0})", rv, y, dev(C));
            }
            if (f == "maximum" || f == "minimum") {
                const std::string x = temp(C, a, body), y = temp(C, b, body);
                const char* cmpop = f == "maximum" ? ">" : "<";
                if (flt) return fmt::format("(({0} != {0} || {0} {2} {1}) ? {0} : {1})", x, y, cmpop); // NaN propagates
                return fmt::format("({0} {2} {1} ? {0} : {1})", x, y, cmpop);
            }
            if (f == "pow") {
                if (flt) return fmt::format("pow({}, {})", a, b);
                const bool sgn = kind(C) == Kind::signed_int || C == DType::bool_;
                return fmt::format("({})xgpu_{}pow({}, {})", dev(C), sgn ? "i" : "u", a, b);
            }
            if (f == "atan2" || f == "hypot") return fmt::format("{}({}, {})", f, a, b);
            unsupported(n, C);
        }
        // unary
        if (f == "not") return fmt::format("(uint8_t)!{}", convert(a0, ta, DType::bool_));
        if (f == "pos") return a0;
        if (is_complex(ta)) {
            if (f == "neg" || f == "conj") return fmt::format("{}_{}({})", dev(ta), f, a0);
            if (f == "abs") return fmt::format("{}_abs({})", dev(ta), a0);
            if (f == "real") return a0 + ".re";
            if (f == "imag") return a0 + ".im";
            if (f == "isnan") return fmt::format("(uint8_t)(isnan({0}.re) || isnan({0}.im))", a0);
            if (f == "isinf") return fmt::format("(uint8_t)(isinf({0}.re) || isinf({0}.im))", a0);
            if (f == "isfinite") return fmt::format("(uint8_t)(isfinite({0}.re) && isfinite({0}.im))", a0);
            unsupported(n, ta);
        }
        const bool flt = kind(ta) == Kind::floating;
        if (f == "neg") return convert(fmt::format("(-{})", a0), ta, R);
        if (f == "real" || f == "conj") return a0;
        if (f == "imag") return fmt::format("({})0", dev(R));
        if (f == "abs") {
            if (flt) return fmt::format("fabs({})", a0);
            if (kind(ta) == Kind::signed_int) return fmt::format("({0} < 0 ? ({1})(-{0}) : {0})", a0, dev(ta));
            return a0;
        }
        if (f == "floor" || f == "ceil" || f == "trunc") return flt ? fmt::format("{}({})", f, a0) : a0;
        if (f == "isnan" || f == "isinf" || f == "isfinite") {
            if (flt) return fmt::format("(uint8_t)({}({}) != 0)", f, a0);
            return f == "isfinite" ? "(uint8_t)1" : "(uint8_t)0";
        }
        // Math functions: compute in the floating result type. numpy rounds half to even: rint.
        const std::string fn = f == "round" ? "rint" : f;
        return fmt::format("{}({})", fn, convert(a0, ta, R));
    }

    const Node& root_;
    const Context& ctx_;
    Shape shape_;
    std::vector<Operand> operands_;     // [0] is the destination, then each distinct input array
    std::vector<std::size_t> slot_{0};  // the operand of each array node, by tree position (from 1)
    std::vector<std::size_t> first_{0}; // the tree position where each operand first appears
    std::vector<std::string> loaded_;   // the variable each operand was loaded into (element())
    bool strided_ = false;
    int counter_ = 0;
};

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
        if (a.buffer == dst.buffer && !same_layout(a, dst)) overlap = true;
    });
    if (overlap) {
        ArrayDesc tmp = make_array(dst.context, dst.dtype, dst.shape, Order::C);
        evaluate(expr, tmp);
        evaluate(*array_node(tmp), dst);
        return;
    }

    Generator gen(expr, dst.context, dst.shape, &dst);
    const std::string key = gen.key();
    Kernel k = generated_kernel(
        dst.context, key, [&] { return gen.source(); }, "xgpu_elementwise");
    std::vector<KernelArg> args;
    gen.arguments(args);
    stream_launch(dst.context, k, std::move(args), dst.size());
}

void assign(const ArrayDesc& dst, const ArrayDesc& src) {
    evaluate(*array_node(src), dst);
}

std::string map_key(const Node& expr, const Context& ctx, const Shape& shape) {
    return Generator(expr, ctx, shape, nullptr).key();
}

MapCode map_code(const Node& expr, const Context& ctx, const Shape& shape) {
    check_types(expr, ctx);
    Generator gen(expr, ctx, shape, nullptr);
    MapCode m;
    m.key = gen.key();
    m.params = gen.params();
    m.result = gen.element(m.body);
    m.type = expr.type;
    return m;
}

void map_arguments(const Node& expr, const Context& ctx, const Shape& shape, std::vector<KernelArg>& args) {
    Generator(expr, ctx, shape, nullptr).arguments(args);
}

std::string convert_code(const std::string& value, DType from, DType to) {
    return convert(value, from, to);
}

} // namespace xgpu::detail
