// The Python module's C++ side: thin, type-erased bindings over the core library. The Python
// package (python/xgpu) holds the numpy-like behaviour on top of them: dtype rules, indexing,
// printing and argument conversion.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <string_view>

#include <xgpu/dtype.hpp>

namespace xgpu::python {

namespace nb = nanobind;

// numpy's dtype names ("float32", "bool", ...) and xgpu's element types.
DType dtype_from_name(std::string_view name);
inline const char* dtype_name(DType t) {
    return name(t);
}

void bind_runtime(nb::module_& m);
void bind_array(nb::module_& m);
void bind_kernels(nb::module_& m);
void bind_sparse(nb::module_& m);
void bind_preconditioners(nb::module_& m);
void bind_solvers(nb::module_& m);
void bind_amg(nb::module_& m);
void bind_random_scan(nb::module_& m);
void bind_image(nb::module_& m);

} // namespace xgpu::python
