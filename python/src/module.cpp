// The extension module xgpu._xgpu; python/xgpu/__init__.py is the package users import.
#include "common.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <xgpu/error.hpp>

namespace xgpu::python {

DType dtype_from_name(std::string_view n) {
    for (std::size_t i = 0; i < std::size(dtype_table); ++i)
        if (n == dtype_table[i].name) return static_cast<DType>(i);
    throw nb::type_error(("xgpu: arrays cannot hold elements of type " + std::string(n)).c_str());
}

namespace {

// The Python classes xgpu's errors become (python/xgpu/_errors.py registers them at import).
nb::dict& error_types() {
    static nb::dict* types = new nb::dict(); // never destroyed: lives as long as the interpreter
    return *types;
}

void raise(const char* kind, const xgpu::Error& e) {
    nb::object type =
        error_types().contains(kind) ? nb::object(error_types()[kind]) : nb::object(error_types()["Error"]);
    nb::object exc = type(nb::str(e.what()));
    exc.attr("backend") = e.backend();
    exc.attr("call") = e.call();
    exc.attr("code") = e.code();
    exc.attr("code_name") = e.code_name();
    if (const auto* c = dynamic_cast<const CompileError*>(&e)) {
        exc.attr("log") = c->log();
        exc.attr("options") = nb::cast(c->options());
        exc.attr("source") = c->source();
    }
    PyErr_SetObject(type.ptr(), exc.ptr());
}

} // namespace

} // namespace xgpu::python

NB_MODULE(_xgpu, m) {
    using namespace xgpu::python;
    m.doc() = "xgpu's C++ core (use the package xgpu)";
    m.def("_set_error_types", [](nb::dict types) { error_types() = std::move(types); });
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        if (error_types().size() == 0) std::rethrow_exception(p);
        try {
            std::rethrow_exception(p);
        } catch (const xgpu::CompileError& e) {
            raise("CompileError", e);
        } catch (const xgpu::OutOfMemory& e) {
            raise("OutOfMemory", e);
        } catch (const xgpu::LaunchError& e) {
            raise("LaunchError", e);
        } catch (const xgpu::ShapeError& e) {
            raise("ShapeError", e);
        } catch (const xgpu::DTypeError& e) {
            raise("DTypeError", e);
        } catch (const xgpu::InvalidArgument& e) {
            raise("InvalidArgument", e);
        } catch (const xgpu::BackendUnavailable& e) {
            raise("BackendUnavailable", e);
        } catch (const xgpu::BackendError& e) {
            raise("BackendError", e);
        } catch (const xgpu::Error& e) {
            raise("Error", e);
        }
    });
    bind_runtime(m);
    bind_array(m);
    bind_kernels(m);
    bind_sparse(m);
    bind_preconditioners(m);
    bind_solvers(m);
    bind_amg(m);
    bind_random_scan(m);
    bind_image(m);
}
