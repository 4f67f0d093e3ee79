// User kernels from argument declarations (PyOpenCL's ElementwiseKernel, ReductionKernel): the
// Python side converts each scalar to its declared type; the C++ layer checks the arguments
// against the declarations before anything is enqueued.
#include "common.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>

#include <optional>

#include <xgpu/detail/dynamic.hpp>
#include <xgpu/elementwise.hpp>
#include <xgpu/reduction.hpp>

namespace xgpu::python {

namespace {

// Arrays as their descriptions, images as SampledImage or WritableImage, scalars as (bytes, dtype
// name). The scalars' bytes are copied
// into the KernelArgs (at most 16 bytes: complex128 at the largest).
std::vector<detail::BoundArg> bind(const nb::list& args) {
    std::vector<detail::BoundArg> out;
    out.reserve(args.size());
    for (nb::handle a : args) {
        if (nb::isinstance<detail::ArrayDesc>(a)) {
            const auto& d = nb::cast<const detail::ArrayDesc&>(a);
            out.push_back(detail::BoundArg{&d, {}, d.dtype});
        } else if (nb::isinstance<SampledImage>(a)) {
            out.push_back(detail::bind_arg(nb::cast<const SampledImage&>(a)));
        } else if (nb::isinstance<WritableImage>(a)) {
            out.push_back(detail::bind_arg(nb::cast<const WritableImage&>(a)));
        } else {
            const auto [value, dtype] = nb::cast<std::tuple<nb::bytes, std::string>>(a);
            if (value.size() > detail::KernelArg::inline_bytes)
                throw nb::type_error("xgpu: a scalar argument of more than 16 bytes");
            out.push_back(detail::BoundArg{nullptr, detail::KernelArg::scalar(value.c_str(), value.size()),
                                           dtype_from_name(dtype)});
        }
    }
    return out;
}

} // namespace

void bind_kernels(nb::module_& m) {
    // [(name, is_array, dtype name or None)] of argument declarations.
    m.def("declared_arguments", [](const std::string& declarations) {
        nb::list out;
        for (const auto& a : detail::declared_arguments(declarations))
            out.append(
                nb::make_tuple(a.name, a.array, a.dtype ? nb::object(nb::str(dtype_name(*a.dtype))) : nb::none()));
        return out;
    });
    nb::class_<ElementwiseKernel>(m, "ElementwiseKernel")
        .def(nb::init<const Context&, const std::string&, const std::string&, const std::string&, const std::string&>(),
             nb::arg("context"), nb::arg("arguments"), nb::arg("operation"), nb::arg("name") = "elementwise_kernel",
             nb::arg("preamble") = "", nb::call_guard<nb::gil_scoped_release>())
        .def_prop_ro("source", &ElementwiseKernel::source)
        .def(
            "_launch",
            [](const ElementwiseKernel& k, const nb::list& args, std::optional<nb::slice> range) {
                const auto bound = bind(args); // the ArrayDescs stay alive in `args`
                std::optional<Slice> s;
                if (range) {
                    const auto get = [&](const char* f) -> std::optional<std::int64_t> {
                        nb::object v = range->attr(f);
                        if (v.is_none()) return std::nullopt;
                        return nb::cast<std::int64_t>(v); // clamped to int64 by the caller
                    };
                    s = Slice{get("start"), get("stop"), get("step").value_or(1)};
                }
                nb::gil_scoped_release unlocked;
                k.launch(s ? &*s : nullptr, bound);
            },
            nb::arg("args"), nb::arg("range").none() = nb::none());

    nb::class_<detail::ReductionKernelImpl>(m, "ReductionKernel")
        .def(
            "__init__",
            [](detail::ReductionKernelImpl* self, const Context& ctx, std::string_view dtype,
               const std::string& neutral, const std::string& reduce, const std::string& map,
               const std::string& arguments, const std::string& name, const std::string& preamble) {
                const DType t = dtype_from_name(dtype);
                nb::gil_scoped_release unlocked;
                new (self) detail::ReductionKernelImpl(ctx, t, neutral, reduce, map, arguments, name, preamble);
            },
            nb::arg("context"), nb::arg("dtype"), nb::arg("neutral"), nb::arg("reduce"), nb::arg("map"),
            nb::arg("arguments"), nb::arg("name") = "reduce_kernel", nb::arg("preamble") = "")
        .def("_run", [](const detail::ReductionKernelImpl& k, std::int64_t n, const nb::list& args) {
            const auto bound = bind(args);
            nb::gil_scoped_release unlocked;
            return k.run(n, bound);
        });
}

} // namespace xgpu::python
