// The operand protocol (expression.hpp). Each node kind has one lowering function that writes its
// key fragment, declares its parameters, pushes their arguments and emits its code together; the
// operations' code comes from the table (operations.cpp).
#include "expression.hpp"

#include <fmt/format.h>

#include "operations.hpp"
#include "xgpu/codegen.hpp"

namespace xgpu::codegen {

using detail::ArrayDesc;
using detail::KernelArg;
using detail::make_arg;
using detail::Node;

namespace {

// How a kernel indexes an array operand: contiguous over the shape (by i), one element for all
// (broadcast of a size-1 array), or by strides over the shape's dimensions.
enum class Layout : char { contiguous = 'c', single = 'b', strided = 's' };

struct Operand {
    const ArrayDesc* array;
    Layout layout;
    std::vector<std::int64_t> strides; // over the shape's dimensions, 0 where it broadcasts
    std::string loaded;                // the variable its element was loaded into
};

// The same elements seen the same way: then one load serves every occurrence.
bool same_view(const ArrayDesc& a, const ArrayDesc& b) {
    return a.buffer == b.buffer && a.offset == b.offset && a.dtype == b.dtype && a.shape == b.shape &&
           a.strides == b.strides;
}

Operand classify(const ArrayDesc& a, const Shape& shape) {
    Operand o{&a, Layout::strided, {}, {}};
    if (a.shape == shape && a.is_c_contiguous() && shape_size(shape) > 1) { // the common case: no strides
        o.layout = Layout::contiguous;
        return o;
    }
    o.strides.assign(shape.size(), 0);
    const std::size_t off = shape.size() - a.shape.size();
    bool any = false;
    for (std::size_t d = 0; d < a.shape.size(); ++d)
        if (a.shape[d] != 1) {
            o.strides[off + d] = a.strides[d];
            any = true;
        }
    if (!any)
        o.layout = Layout::single;
    else if (a.shape == shape && a.is_c_contiguous())
        o.layout = Layout::contiguous;
    return o;
}

class Lowering final : public Temporaries {
public:
    // With a destination, its pointer (written, never read) is operand 0; a map has none.
    Lowering(const Shape& shape, const ArrayDesc* dst, Want want, Lowered& out)
        : shape_(shape), code_(want == Want::everything), out_(out) {
        operands_.reserve(8);
        out_.args.reserve(16);
        if (!dst) {
            key("map|");
            operands_.push_back(Operand{nullptr, Layout::contiguous, {}, {}});
            return;
        }
        operands_.push_back(classify(*dst, shape_));
        key("ew|", int(dst->dtype), char(operands_[0].layout), '|');
        array_parameters(0, dst->dtype, false);
        if (code_) out_.at = index(0);
    }

    // Lowers the tree: the value's variable (with Want::everything).
    std::string node(const Node& n) {
        switch (n.op) {
        case Node::Op::array: return array(n);
        case Node::Op::scalar: return scalar(n);
        default: return operation(n);
        }
    }

    // Ends the lowering with the root's value: the shape's sizes and the index decomposition
    // where some operand is strided.
    void done(const std::string& value, DType type) {
        if (strided_) {
            key("|nd", shape_.size());
            for (std::size_t d = 0; d < shape_.size(); ++d)
                parameter(make_arg(std::uint64_t(shape_[d])), [&] { return fmt::format("const uint64_t n{}", d); });
        }
        if (!code_) return;
        std::string prelude;
        if (strided_) {
            Source p(2);
            p.line("uint64_t r = i;");
            for (std::size_t d = shape_.size(); d-- > 0;)
                p.line(fmt::format("const int64_t k{0} = (int64_t)(r % n{0}); r /= n{0};", d));
            prelude = p.str();
        }
        out_.body = prelude + body_.str();
        out_.value = value;
        out_.type = type;
    }

    std::string temp(DType t, const std::string& value) override {
        std::string name = fmt::format("t{}", temps_++);
        body_.line(fmt::format("const {} {} = {};", device_type(t), name, value));
        return name;
    }

private:
    // The key is built on every launch (the warm path): plain appends, no formatting.
    void put(std::string_view s) { out_.key += s; }
    void put(char c) { out_.key += c; }
    void put(std::size_t v) {
        const fmt::format_int f(v);
        out_.key.append(f.data(), f.size());
    }
    void put(int v) { put(std::size_t(v)); }
    template <class... A> void key(const A&... a) { (put(a), ...); }

    // One parameter: its argument, and (only when code is made) its declaration.
    template <class Declare> void parameter(KernelArg arg, Declare&& declare) {
        if (code_) {
            out_.params += declare();
            out_.params += ", ";
        }
        out_.args.push_back(arg);
    }

    // Operand k's pointer, offset and (strided) strides.
    void array_parameters(std::size_t k, DType type, bool input) {
        const Operand& o = operands_[k];
        parameter(make_arg(o.array->buffer),
                  [&] { return fmt::format("XGPU_GLOBAL {}{}* p{}", input ? "const " : "", device_type(type), k); });
        parameter(make_arg(std::int64_t(o.array->offset)), [&] { return fmt::format("const int64_t o{}", k); });
        if (o.layout != Layout::strided) return;
        strided_ = true;
        for (std::size_t d = 0; d < shape_.size(); ++d)
            parameter(make_arg(o.strides[d]), [&] { return fmt::format("const int64_t s{}_{}", k, d); });
    }

    std::string index(std::size_t k) const {
        const Operand& o = operands_[k];
        if (o.layout == Layout::contiguous) return "(int64_t)i";
        if (o.layout == Layout::single) return "0";
        std::string s;
        for (std::size_t d = 0; d < shape_.size(); ++d)
            s += fmt::format("{}k{} * s{}_{}", d ? " + " : "", d, k, d);
        return s.empty() ? "0" : s;
    }

    std::string array(const Node& n) {
        std::size_t id = 1;
        while (id < operands_.size() && !same_view(*operands_[id].array, n.array))
            ++id;
        const bool first = id == operands_.size();
        if (first) {
            operands_.push_back(classify(n.array, shape_));
            array_parameters(id, n.type, true);
            if (operands_[id].layout != Layout::single) out_.loaded_bytes += info(n.type).size;
            if (code_) operands_[id].loaded = temp(n.type, fmt::format("p{0}[o{0} + {1}]", id, index(id)));
        }
        key('A', int(n.type), char(operands_[id].layout), '#', id);
        return operands_[id].loaded;
    }

    std::string scalar(const Node& n) {
        key('S', int(n.type));
        const int k = scalars_++;
        parameter(KernelArg::scalar(n.value.data(), info(n.type).size),
                  [&] { return fmt::format("const {} v{}", device_type(n.type), k); });
        return code_ ? fmt::format("v{}", k) : std::string();
    }

    std::string operation(const Node& n) {
        key('(', std::string_view(n.fn), ':', int(n.type));
        Call call{n.fn, n.type, {n.type, n.type, n.type}, {}, *this};
        int k = 0;
        for (const auto* child : {n.a.get(), n.b.get(), n.c.get()})
            if (child) {
                out_.key += ' ';
                call.type[k] = child->type;
                call.arg[k++] = node(*child);
            }
        out_.key += ')';
        if (!code_) return {};
        return temp(n.type, code(*n.operation, call));
    }

    const Shape& shape_;
    const bool code_;
    Lowered& out_;
    std::vector<Operand> operands_{};
    Source body_{2}; // the body sits in a loop inside the kernel
    bool strided_ = false;
    int temps_ = 0, scalars_ = 0;
};

} // namespace

Lowered lower(const Node& expr, const Shape& shape, const ArrayDesc* dst, Want want) {
    Lowered out;
    out.key.reserve(64);
    Lowering l(shape, dst, want, out);
    const std::string value = l.node(expr);
    l.done(value, expr.type);
    return out;
}

} // namespace xgpu::codegen
