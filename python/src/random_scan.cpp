// Philox random numbers and scans (prefix sums with any associative operator).
#include "common.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <xgpu/random.hpp>
#include <xgpu/scan.hpp>

namespace xgpu::python {

void bind_random_scan(nb::module_& m) {
    using detail::ArrayDesc;
    // Each fills `dst` from the stream at (seed, counter) and returns the blocks it used.
    // (The GIL is released: the first call of a type compiles its kernel.)
    using unlocked = nb::call_guard<nb::gil_scoped_release>;
    m.def("philox_uniform", &detail::philox_uniform, nb::arg("dst"), nb::arg("seed"), nb::arg("counter"), nb::arg("lo"),
          nb::arg("hi"), unlocked());
    m.def("philox_normal", &detail::philox_normal, nb::arg("dst"), nb::arg("seed"), nb::arg("counter"), nb::arg("mean"),
          nb::arg("stddev"), unlocked());
    m.def("philox_integers", &detail::philox_integers, nb::arg("dst"), nb::arg("seed"), nb::arg("counter"),
          nb::arg("lo"), nb::arg("range"), unlocked());

    nb::class_<detail::ScanOp>(m, "ScanOp")
        .def("__init__",
             [](detail::ScanOp* self, const Context& ctx, std::string_view dtype, std::string op, std::string neutral,
                std::string preamble) {
                 new (self) detail::ScanOp{ctx, dtype_from_name(dtype), std::move(op), std::move(neutral),
                                           std::move(preamble)};
             })
        .def_prop_ro("dtype", [](const detail::ScanOp& s) { return dtype_name(s.type); })
        .def_ro("context", &detail::ScanOp::ctx);
    m.def("sum_op",
          [](const Context& ctx, std::string_view dtype) { return detail::sum_op(ctx, dtype_from_name(dtype)); });
    m.def("prod_op",
          [](const Context& ctx, std::string_view dtype) { return detail::prod_op(ctx, dtype_from_name(dtype)); });
}

} // namespace xgpu::python
