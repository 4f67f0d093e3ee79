// Arrays without their static type (xgpu::detail::ArrayDesc), expression trees, their fused
// evaluation, reductions and numpy's type rules as the C++ layer applies them.
#include "common.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>

#include <xgpu/algorithm.hpp>
#include <xgpu/detail/dynamic.hpp>
#include <xgpu/indexing.hpp>
#include <xgpu/reduction.hpp>
#include <xgpu/scan.hpp>
#include <xgpu/sort.hpp>
#include <xgpu/xgpu.hpp>

namespace xgpu::python {

namespace {

using detail::ArrayDesc;
using detail::NodePtr;

// An expression node as Python holds it, with its shape and type ready for Python (read for every
// new expression).
struct Node {
    NodePtr p;
    nb::object shape, dtype;
    explicit Node(NodePtr n)
        : p(std::move(n)), shape(nb::tuple(nb::cast(detail::result_shape(*p)))), dtype(nb::str(name(p->type))) {}
};

Kind kind_from_name(std::string_view k) {
    if (k == "b") return Kind::boolean;
    if (k == "i") return Kind::signed_int;
    if (k == "u") return Kind::unsigned_int;
    if (k == "f") return Kind::floating;
    if (k == "c") return Kind::complex;
    throw nb::type_error(("xgpu: no scalar kind '" + std::string(k) + "'").c_str());
}

Order order_from_name(std::string_view o) {
    if (o == "C") return Order::C;
    if (o == "F") return Order::F;
    if (o == "K") return Order::K;
    throw nb::value_error(("xgpu: order must be 'C', 'F' or 'K', not '" + std::string(o) + "'").c_str());
}

detail::ReduceOp reduce_op(std::string_view op) {
    using R = detail::ReduceOp;
    static constexpr std::pair<const char*, R> ops[] = {
        {"sum", R::sum},       {"min", R::min},           {"max", R::max},  {"argmin", R::argmin},
        {"argmax", R::argmax}, {"any", R::any},           {"all", R::all},  {"norm1", R::norm1},
        {"norm2", R::norm2},   {"norm_inf", R::norm_inf}, {"prod", R::prod}};
    for (const auto& [name, r] : ops)
        if (op == name) return r;
    throw nb::value_error(("xgpu: no reduction '" + std::string(op) + "'").c_str());
}

// The host array's bytes must match the device array's (a source may be read-only).
using HostArray = nb::ndarray<nb::device::cpu, nb::c_contig>;
using HostSource = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;
template <class H> void check_host(const ArrayDesc& d, const H& h, const char* what) {
    const std::size_t bytes = h.nbytes();
    if (bytes != d.size() * info(d.dtype).size)
        throw nb::value_error((std::string("xgpu: ") + what + ": the host array has " + std::to_string(bytes) +
                               " bytes, the device array " + std::to_string(d.size() * info(d.dtype).size))
                                  .c_str());
}

std::vector<detail::Index> to_index(const nb::list& index) {
    std::vector<detail::Index> out;
    out.reserve(index.size());
    for (nb::handle i : index) {
        if (nb::isinstance<nb::slice>(i)) {
            const auto get = [&](const char* f) -> std::optional<std::int64_t> {
                nb::object v = i.attr(f);
                if (v.is_none()) return std::nullopt;
                return nb::cast<std::int64_t>(v);
            };
            const auto step = get("step");
            out.emplace_back(Slice{get("start"), get("stop"), step.value_or(1)});
        } else {
            out.emplace_back(nb::cast<std::int64_t>(i));
        }
    }
    return out;
}

} // namespace

void bind_array(nb::module_& m) {
    // numpy's type rules, as the C++ array layer applies them.
    const auto d = [](std::string_view n) { return dtype_from_name(n); };
    m.def("promote", [d](std::string_view a, std::string_view b) { return dtype_name(promote(d(a), d(b))); });
    m.def("promote_weak",
          [d](std::string_view a, std::string_view k) { return dtype_name(promote_weak(d(a), kind_from_name(k))); });
    m.def("true_divide_type", [d](std::string_view a) { return dtype_name(true_divide_type(d(a))); });
    m.def("float_type", [d](std::string_view a) { return dtype_name(float_type(d(a))); });
    m.def("real_type", [d](std::string_view a) { return dtype_name(real_type(d(a))); });
    m.def("sum_type", [d](std::string_view a) { return dtype_name(detail::sum_type(d(a))); });
    m.def("norm_type", [d](std::string_view a) { return dtype_name(detail::norm_type(d(a))); });
    m.def("can_cast_same_kind", [d](std::string_view a, std::string_view b) { return can_cast_same_kind(d(a), d(b)); });

    nb::class_<ArrayDesc>(m, "ArrayDesc")
        .def_prop_ro("shape", [](const ArrayDesc& a) { return nb::tuple(nb::cast(a.shape)); })
        .def_prop_ro("strides", [](const ArrayDesc& a) { return nb::tuple(nb::cast(a.strides)); })
        .def_ro("offset", &ArrayDesc::offset)
        .def_prop_ro("dtype", [](const ArrayDesc& a) { return dtype_name(a.dtype); })
        .def_prop_ro("size", &ArrayDesc::size)
        .def_prop_ro("is_c_contiguous", &ArrayDesc::is_c_contiguous)
        .def_prop_ro("is_f_contiguous", &ArrayDesc::is_f_contiguous)
        .def_ro("context", &ArrayDesc::context)
        .def_prop_ro("buffer_id", [](const ArrayDesc& a) { return std::uintptr_t(a.buffer.impl().get()); })
        .def_prop_ro("buffer_size", [](const ArrayDesc& a) { return a.buffer ? a.buffer.size() : 0; });

    m.def("make_array", [](const Context& ctx, std::string_view dtype, const Shape& shape, std::string_view order) {
        return detail::make_array(ctx, dtype_from_name(dtype), shape, order_from_name(order));
    });
    m.def("arange", [](const Context& ctx, std::string_view dtype, double start, double stop, double step) {
        return detail::arange(ctx, dtype_from_name(dtype), start, stop, step);
    });
    m.def("view", [](const ArrayDesc& a, const nb::list& index) { return detail::view(a, to_index(index)); });
    m.def("reshape", &detail::reshape);
    m.def("transpose",
          [](const ArrayDesc& a, const std::vector<std::size_t>& axes) { return detail::transpose(a, axes); });
    m.def("view_as",
          [](const ArrayDesc& a, std::string_view dtype) { return detail::view_as(a, dtype_from_name(dtype)); });
    m.def("may_share_memory", &detail::may_share_memory);
    // numpy's .real and .imag of a complex array: its real or imaginary parts as a strided view.
    m.def("complex_part", [](const ArrayDesc& a, bool imag) {
        if (kind(a.dtype) != Kind::complex) throw nb::type_error("xgpu: complex_part of a real array");
        ArrayDesc v = a;
        v.dtype = real_type(a.dtype);
        v.offset = 2 * a.offset + (imag ? 1 : 0);
        for (auto& s : v.strides)
            s *= 2;
        v.mirror = nullptr;
        return v;
    });
    // numpy.expand_dims: a new axis of length 1 at `axis` (a view).
    m.def("expand_dims", [](const ArrayDesc& a, std::size_t axis) {
        if (axis > a.shape.size()) throw nb::index_error("xgpu: expand_dims: axis out of range");
        ArrayDesc v = a;
        v.shape.insert(v.shape.begin() + std::ptrdiff_t(axis), 1);
        v.strides.insert(v.strides.begin() + std::ptrdiff_t(axis), 0);
        return v;
    });
    m.def("to_host", [](const ArrayDesc& a, HostArray h) {
        check_host(a, h, "get");
        nb::gil_scoped_release unlocked;
        detail::to_host(a, h.data());
    });
    m.def("from_host", [](const ArrayDesc& a, HostSource h) {
        check_host(a, h, "set");
        nb::gil_scoped_release unlocked;
        detail::from_host(a, h.data());
    });
    // These compile a kernel on first use too: the GIL is released meanwhile.
    m.def("fill", [](const ArrayDesc& a, nb::bytes value) {
        if (value.size() != info(a.dtype).size) throw nb::value_error("xgpu: fill: the value has the wrong size");
        const std::string bytes(value.c_str(), value.size());
        nb::gil_scoped_release unlocked;
        detail::fill(a, bytes.data());
    });
    m.def("assign", &detail::assign, nb::call_guard<nb::gil_scoped_release>());

    // The array as a DLPack tensor on its CUDA device: nanobind's array-API object, whose
    // __dlpack__ makes the capsule; it keeps the buffer alive while a consumer holds it.
    m.def("dlpack_tensor", [](const ArrayDesc& a, int device_id) {
        const std::uint64_t base = a.buffer ? a.buffer.device_address() : 0;
        if (!base && a.size()) throw nb::buffer_error("xgpu: the array's memory has no device address to share");
        const auto& t = info(a.dtype);
        nb::dlpack::dtype dt{};
        dt.code = std::uint8_t(t.kind == Kind::boolean        ? nb::dlpack::dtype_code::Bool
                               : t.kind == Kind::signed_int   ? nb::dlpack::dtype_code::Int
                               : t.kind == Kind::unsigned_int ? nb::dlpack::dtype_code::UInt
                               : t.kind == Kind::floating     ? nb::dlpack::dtype_code::Float
                                                              : nb::dlpack::dtype_code::Complex);
        dt.bits = std::uint8_t(8 * t.size);
        dt.lanes = 1;
        std::vector<std::size_t> shape(a.shape.begin(), a.shape.end());
        std::vector<std::int64_t> strides(a.strides.begin(), a.strides.end());
        nb::capsule owner(new ArrayDesc(a), [](void* p) noexcept { delete static_cast<ArrayDesc*>(p); });
        void* data = reinterpret_cast<void*>(base + std::uint64_t(a.offset) * t.size);
        return nb::ndarray<nb::array_api>(data, shape.size(), shape.data(), owner, strides.data(), dt,
                                          nb::device::cuda::value, device_id);
    });
    // An array over a DLPack tensor on `ctx`'s CUDA device (CuPy, PyTorch, ...), without a copy:
    // the tensor is kept alive until the last xgpu handle on it goes.
    m.def("from_dlpack", [](const Context& ctx, nb::ndarray<nb::device::cuda> t) {
        if (ctx.backend() != "cuda")
            throw nb::type_error(("xgpu: from_dlpack needs the CUDA backend; this context is " + ctx.backend() +
                                  " (copy through the host)")
                                     .c_str());
        if (t.device_id() != ctx.device().index())
            throw nb::value_error(("xgpu: from_dlpack: the tensor is on CUDA device " + std::to_string(t.device_id()) +
                                   ", the context on device " + std::to_string(ctx.device().index()))
                                      .c_str());
        const auto dt = t.dtype();
        DType type{};
        bool found = false;
        for (std::size_t i = 0; i < std::size(dtype_table) && !found; ++i) {
            const auto& d = dtype_table[i];
            const auto code = d.kind == Kind::boolean        ? nb::dlpack::dtype_code::Bool
                              : d.kind == Kind::signed_int   ? nb::dlpack::dtype_code::Int
                              : d.kind == Kind::unsigned_int ? nb::dlpack::dtype_code::UInt
                              : d.kind == Kind::floating     ? nb::dlpack::dtype_code::Float
                                                             : nb::dlpack::dtype_code::Complex;
            if (dt.code == std::uint8_t(code) && dt.bits == 8 * d.size && dt.lanes == 1) {
                type = static_cast<DType>(i);
                found = true;
            }
        }
        if (!found) throw nb::type_error("xgpu: from_dlpack: an element type xgpu arrays do not hold");
        ArrayDesc a;
        a.context = ctx;
        a.dtype = type;
        std::int64_t last = 0; // the farthest element from the first, in elements
        for (std::size_t k = 0; k < t.ndim(); ++k) {
            if (t.stride(k) < 0) throw nb::value_error("xgpu: from_dlpack: negative strides");
            if (t.stride(k) == 0 && t.shape(k) > 1)
                throw nb::value_error("xgpu: from_dlpack: a broadcast tensor (stride 0), whose elements a write "
                                      "would reach from several indices; pass a contiguous copy");
            a.shape.push_back(t.shape(k));
            a.strides.push_back(t.stride(k));
            if (t.shape(k) > 0) last += std::int64_t(t.shape(k) - 1) * t.stride(k);
        }
        const std::size_t bytes = a.size() ? std::size_t(last + 1) * info(type).size : 0;
        // The owner drops its reference to the tensor from whichever thread releases the last
        // handle: nanobind's ndarray takes the interpreter's thread state for that itself (and
        // does nothing once the interpreter has gone).
        auto* held = new nb::ndarray<nb::device::cuda>(t);
        std::shared_ptr<void> owner(held,
                                    [](void* p) noexcept { delete static_cast<nb::ndarray<nb::device::cuda>*>(p); });
        const auto address = std::uint64_t(reinterpret_cast<std::uintptr_t>(t.data()));
        nb::gil_scoped_release unlocked;
        a.buffer = detail::adopt_device_memory(ctx, address, bytes, std::move(owner));
        return a;
    });
    m.def("device_address", [](const ArrayDesc& a) {
        return a.buffer ? a.buffer.device_address() + std::uint64_t(a.offset) * info(a.dtype).size : 0;
    });

    nb::class_<Node>(m, "Node")
        .def_ro("dtype", &Node::dtype)
        .def_ro("shape", &Node::shape)
        .def_prop_ro("context", [](const Node& n) { return detail::node_context(*n.p); })
        .def_prop_ro("is_array", [](const Node& n) { return n.p->op == detail::Node::Op::array; });
    m.def("array_node", [](const ArrayDesc& a) { return Node(detail::array_node(a)); });
    // A scalar: its value's bytes as `value_dtype`, stored in the node as `dtype`.
    m.def("scalar_node", [](std::string_view dtype, nb::bytes value, std::string_view value_dtype) {
        const DType vt = dtype_from_name(value_dtype);
        if (value.size() != info(vt).size) throw nb::value_error("xgpu: a scalar of the wrong size");
        alignas(16) unsigned char bytes[16];
        std::memcpy(bytes, value.c_str(), value.size());
        return Node(detail::scalar_node(dtype_from_name(dtype), bytes, vt));
    });
    // An operation's node; its result type comes from the table of operations.
    m.def(
        "op_node",
        [](std::string_view fn, const Node& a, const Node* b, const Node* c) {
            return Node(detail::op_node_auto(fn, a.p, b ? b->p : nullptr, c ? c->p : nullptr));
        },
        nb::arg("fn"), nb::arg("a"), nb::arg("b").none() = nb::none(), nb::arg("c").none() = nb::none());
    // These compile a kernel on first use: the GIL is released meanwhile.
    m.def("evaluate", [](const Node& n, const ArrayDesc& dst) {
        nb::gil_scoped_release unlocked;
        detail::evaluate(*n.p, dst);
    });
    m.def(
        "reduce_all",
        [](const Node& n, std::string_view op, std::optional<std::string_view> out) {
            const auto r = reduce_op(op);
            const auto t = out ? std::optional<DType>(dtype_from_name(*out)) : std::nullopt;
            nb::gil_scoped_release unlocked;
            return detail::reduce_all(*n.p, r, t);
        },
        nb::arg("node"), nb::arg("op"), nb::arg("out").none() = nb::none());
    // out = the scan of the expression (inclusive or exclusive), restarting where flags is set.
    m.def(
        "scan",
        [](const detail::ScanOp& op, const Node& in, const ArrayDesc& out, const ArrayDesc* flags, bool inclusive) {
            nb::gil_scoped_release unlocked;
            detail::scan(op, *in.p, out, flags, inclusive);
        },
        nb::arg("op"), nb::arg("input"), nb::arg("out"), nb::arg("flags").none(), nb::arg("inclusive"));
    m.def("reduce_axis", [](const Node& n, std::string_view op, std::size_t axis) {
        const auto r = reduce_op(op);
        nb::gil_scoped_release unlocked;
        return detail::reduce_axis(*n.p, r, axis);
    });
    // Along several axes (sorted, no repeats) with keepdims, and numpy's mean, var and std.
    m.def(
        "reduce_axes",
        [](const Node& n, std::string_view op, std::vector<std::size_t> axes, bool keepdims,
           std::optional<std::string_view> out) {
            const auto r = reduce_op(op);
            const auto t = out ? std::optional<DType>(dtype_from_name(*out)) : std::nullopt;
            nb::gil_scoped_release unlocked;
            return detail::reduce_axes(*n.p, r, std::move(axes), keepdims, t);
        },
        nb::arg("node"), nb::arg("op"), nb::arg("axes"), nb::arg("keepdims"), nb::arg("out").none() = nb::none());
    m.def(
        "moment",
        [](const Node& n, std::string_view which, std::vector<std::size_t> axes, bool keepdims, double ddof) {
            const detail::Moment k = which == "mean"  ? detail::Moment::mean
                                     : which == "var" ? detail::Moment::var
                                     : which == "std" ? detail::Moment::std
                                                      : throw nb::value_error("xgpu: no such moment");
            nb::gil_scoped_release unlocked;
            return detail::moment(*n.p, k, std::move(axes), keepdims, ddof);
        },
        nb::arg("node"), nb::arg("which"), nb::arg("axes"), nb::arg("keepdims"), nb::arg("ddof"));
    m.def(
        "scan_axis",
        [](const detail::ScanOp& op, const Node& in, const ArrayDesc& out, std::size_t axis, bool inclusive) {
            nb::gil_scoped_release unlocked;
            detail::scan_axis(op, *in.p, out, axis, inclusive);
        },
        nb::arg("op"), nb::arg("input"), nb::arg("out"), nb::arg("axis"), nb::arg("inclusive"));
    m.def("mean_type", [d](std::string_view a) { return dtype_name(detail::mean_type(d(a))); });
    // Sorting (xgpu/sort.hpp): a sorted copy, the stable indices, keys and values in place.
    m.def(
        "sort",
        [](const ArrayDesc& a, std::int64_t axis) {
            nb::gil_scoped_release unlocked;
            return detail::sort(a, axis);
        },
        nb::arg("a"), nb::arg("axis"));
    m.def(
        "argsort",
        [](const ArrayDesc& a, std::int64_t axis) {
            nb::gil_scoped_release unlocked;
            return detail::argsort(a, axis);
        },
        nb::arg("a"), nb::arg("axis"));
    m.def(
        "sort_by_key",
        [](const ArrayDesc& keys, const ArrayDesc& values) {
            nb::gil_scoped_release unlocked;
            detail::sort_by_key(keys, values);
        },
        nb::arg("keys"), nb::arg("values"));
    // The algorithms on sort and scan (xgpu/algorithm.hpp).
    m.def(
        "searchsorted",
        [](const ArrayDesc& a, const ArrayDesc& v, bool right) {
            nb::gil_scoped_release unlocked;
            return detail::searchsorted(a, v, right ? Side::right : Side::left);
        },
        nb::arg("a"), nb::arg("v"), nb::arg("right"));
    m.def(
        "unique",
        [](const ArrayDesc& a, bool index, bool inverse, bool counts) {
            detail::UniqueDesc u;
            {
                nb::gil_scoped_release unlocked;
                u = detail::unique(a, index, inverse, counts);
            }
            const auto opt = [](bool want, const ArrayDesc& d) { return want ? nb::cast(d) : nb::none(); };
            return nb::make_tuple(u.values, opt(index, u.index), opt(inverse, u.inverse), opt(counts, u.counts));
        },
        nb::arg("a"), nb::arg("index"), nb::arg("inverse"), nb::arg("counts"));
    m.def(
        "bincount",
        [](const ArrayDesc& x, const ArrayDesc* weights, std::size_t minlength) {
            nb::gil_scoped_release unlocked;
            return detail::bincount(x, weights, minlength);
        },
        nb::arg("x"), nb::arg("weights").none(), nb::arg("minlength"));
    m.def(
        "histogram",
        [](const ArrayDesc& a, const ArrayDesc* edges, std::size_t bins, std::optional<std::pair<double, double>> range,
           const ArrayDesc* weights) {
            nb::gil_scoped_release unlocked;
            return detail::histogram(a, edges, bins, range, weights);
        },
        nb::arg("a"), nb::arg("edges").none(), nb::arg("bins"), nb::arg("range").none(), nb::arg("weights").none());
    m.def("flatnonzero", [](const Node& n) {
        nb::gil_scoped_release unlocked;
        return detail::flatnonzero(*n.p);
    });
    // Compaction into out (and rejected), the count into a 0-d int64 array (PyOpenCL's copy_if,
    // remove_if and partition); x None: the flat indices.
    m.def(
        "compact",
        [](const ArrayDesc* x, const Node& pred, const ArrayDesc& out, const ArrayDesc* rejected,
           const ArrayDesc& count) {
            nb::gil_scoped_release unlocked;
            detail::compact(x, *pred.p, out, rejected, count);
        },
        nb::arg("x").none(), nb::arg("pred"), nb::arg("out"), nb::arg("rejected").none(), nb::arg("count"));
    m.def("masked", [](const ArrayDesc& a, const Node& mask) {
        nb::gil_scoped_release unlocked;
        return detail::masked(a, *mask.p);
    });
    m.def("assign_masked", [](const ArrayDesc& a, const Node& mask, const ArrayDesc& values) {
        nb::gil_scoped_release unlocked;
        detail::assign_masked(a, *mask.p, values);
    });
    m.def("concatenate", [](const std::vector<ArrayDesc>& arrays, std::int64_t axis) {
        nb::gil_scoped_release unlocked;
        return detail::concatenate(arrays, axis);
    });
    m.def("stack", [](const std::vector<ArrayDesc>& arrays, std::int64_t axis) {
        nb::gil_scoped_release unlocked;
        return detail::stack(arrays, axis);
    });
    // numpy.take of the flattened array (indices checked, as numpy's mode='raise').
    m.def("take", [](const ArrayDesc& a, const ArrayDesc& indices) {
        nb::gil_scoped_release unlocked;
        return detail::take(a, indices, TakeMode::raise);
    });
}

} // namespace xgpu::python
