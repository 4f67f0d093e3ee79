// The Krylov solvers over a native operator (a sparse matrix, a stencil) or a Python one, and the
// preconditioners: one base type for every native one (preconditioner.hpp), Jacobi, Chebyshev and
// an operator applied as M.
#include "preconditioner.hpp"
#include "sparse.hpp"

#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include <xgpu/solver.hpp>
#include <xgpu/xgpu.hpp>

namespace xgpu::python {

namespace {

using detail::ArrayDesc;

// A Python operator (anything with `shape` and `matvec`), called back from the solver with the
// GIL taken: `call(x)` is the package's wrapper, which turns the device vector into an xgpu.Array,
// calls matvec and returns the product as an ArrayDesc of this type and length.
template <class T> struct PyOperator {
    std::int64_t n = 0;
    nb::object call;
    std::int64_t rows() const { return n; }
    std::int64_t cols() const { return n; }
    void apply(const Array<T>& x, Array<T>& y) const {
        nb::gil_scoped_acquire locked;
        const nb::object r = call(nb::cast(x.desc()));
        detail::assign(y.desc(), nb::cast<const ArrayDesc&>(r));
    }
    void apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
        detail::scaled_apply(*this, alpha, x, beta, y);
    }
};

CgVariant variant_of(std::string_view v) {
    if (v == "classic") return CgVariant::classic;
    if (v == "pipelined") return CgVariant::pipelined;
    if (v == "ghysels_vanroose") return CgVariant::ghysels_vanroose;
    if (v == "automatic") return CgVariant::automatic;
    throw nb::value_error(
        ("xgpu: no CG variant '" + std::string(v) + "' (classic, pipelined, ghysels_vanroose, automatic)").c_str());
}

struct SolveArgs {
    std::string method;
    double rtol = 1e-5, atol = 0;
    std::int64_t maxiter = 0;
    std::string variant = "automatic";
    int check_interval = 10;
    nb::object callback; // None, or called with each iterate's ArrayDesc
    int restart = 30;    // GMRES(m)
    nb::object progress; // None, or called with |r| / |b| at each check
};

// M: None, "jacobi" (A's diagonal), a NativePreconditioner, or a Python operator (n, call).
template <class T>
SolverReport solve_t(nb::handle a, nb::handle m, const ArrayDesc& bd, const ArrayDesc& xd, const SolveArgs& args) {
    SolverOptions<T> o;
    o.rtol = args.rtol;
    o.atol = args.atol;
    o.max_iterations = args.maxiter;
    o.variant = variant_of(args.variant);
    o.check_interval = args.check_interval;
    o.restart = args.restart;
    if (!args.progress.is_none())
        o.progress = [cb = args.progress, last = std::int64_t(-1)](std::int64_t it, double relative) mutable {
            if (it <= last) return; // the checks behind the one that stopped the solve repeat it
            last = it;
            nb::gil_scoped_acquire locked;
            cb(relative);
        };
    if (!args.callback.is_none())
        o.callback = [cb = args.callback](std::int64_t, const Array<T>& x) {
            nb::gil_scoped_acquire locked;
            cb(nb::cast(x.desc()));
        };
    const Array<T> b(bd);
    Array<T> x(xd);
    std::unique_ptr<PyOperator<T>> py_m;
    if (nb::isinstance<nb::str>(m)) {
        if (nb::cast<std::string>(m) != "jacobi") throw nb::value_error("xgpu: M must be 'jacobi' or an operator");
        if (nb::isinstance<Stencil>(a))
            throw nb::value_error("xgpu: M='jacobi' on a Laplacian stencil: its diagonal is constant, so Jacobi "
                                  "changes nothing; pass no M");
        if (!nb::isinstance<Matrix>(a))
            throw nb::value_error("xgpu: M='jacobi' needs a sparse matrix A (the diagonal comes from it)");
        visit_real_operator(a, [&](const auto& mat) {
            if constexpr (std::is_same_v<value_of_t<decltype(mat)>, T> && requires { mat.diagonal(); })
                o.preconditioner = Jacobi<T>(mat);
        });
    } else if (nb::isinstance<NativePreconditioner>(m)) { // applied natively: no Python call per application
        const auto& p = nb::cast<const NativePreconditioner&>(m);
        const auto* native = std::get_if<Preconditioner<T>>(&p.m);
        if (!native)
            throw DTypeError(fmt::format("xgpu: M ({}) is {}, b is {}: convert one with astype", p.kind,
                                         dtype_name(p.dtype()), dtype_name(dtype_v<T>)));
        o.preconditioner = *native;
    } else if (!m.is_none()) {
        const auto [n, call] = nb::cast<std::pair<std::int64_t, nb::object>>(m);
        py_m = std::make_unique<PyOperator<T>>(PyOperator<T>{n, call});
        o.preconditioner = Preconditioner<T>(*py_m);
    }
    if (!o.preconditioner.none() && o.preconditioner.rows() != std::int64_t(b.size()))
        throw ShapeError("xgpu: M has " + std::to_string(o.preconditioner.rows()) + " rows, the system " +
                         std::to_string(b.size()));
    const auto run = [&](const auto& op) {
        nb::gil_scoped_release unlocked;
        if (args.method == "cg") return cg<T>(op, b, x, o);
        if (args.method == "gmres") return gmres<T>(op, b, x, o);
        if (args.method == "fgmres") return fgmres<T>(op, b, x, o);
        return bicgstab<T>(op, b, x, o);
    };
    SolverReport report;
    const bool native = visit_real_operator(a, [&](const auto& op) {
        if constexpr (std::is_same_v<value_of_t<decltype(op)>, T>)
            report = run(op);
        else
            throw DTypeError(fmt::format("xgpu: A is {}, b is {}: convert one with astype",
                                         dtype_name(dtype_v<value_of_t<decltype(op)>>), dtype_name(dtype_v<T>)));
    });
    if (native) return report;
    const auto [n, call] = nb::cast<std::pair<std::int64_t, nb::object>>(a);
    return run(PyOperator<T>{n, call});
}

// A native operator (a real Matrix or Stencil) as M: y = M x by its product.
NativePreconditioner operator_preconditioner(nb::handle a) {
    NativePreconditioner out;
    if (!visit_real_operator(a, [&](const auto& op) {
            using T = value_of_t<decltype(op)>;
            out = NativePreconditioner(op.context(), "operator", Preconditioner<T>(op));
        }))
        throw DTypeError("xgpu: an operator applied as M is an xgpu sparse matrix or a Laplacian");
    return out;
}

} // namespace

void bind_preconditioners(nb::module_& m) {
    nb::class_<NativePreconditioner>(
        m, "Preconditioner",
        "A preconditioner the solvers apply on the device (no Python call per application); what "
        "__xgpu_preconditioner__() returns.")
        .def_ro("rows", &NativePreconditioner::rows)
        .def_ro("kind", &NativePreconditioner::kind)
        .def_ro("context", &NativePreconditioner::context)
        .def_prop_ro("dtype", [](const NativePreconditioner& p) { return std::string(dtype_name(p.dtype())); })
        .def(
            "apply",
            [](const NativePreconditioner& p, const ArrayDesc& x, const ArrayDesc& y) {
                std::visit(
                    [&](const auto& pre) {
                        using T = std::remove_cvref_t<decltype(pre)>;
                        using V = std::conditional_t<std::is_same_v<T, Preconditioner<float>>, float, double>;
                        if (x.dtype != dtype_v<V> || y.dtype != dtype_v<V>)
                            throw DTypeError(fmt::format("xgpu: {} is {}: it applies to vectors of that type", p.kind,
                                                         dtype_name(dtype_v<V>)));
                        if (x.size() != std::size_t(p.rows) || y.size() != std::size_t(p.rows))
                            throw ShapeError(fmt::format("xgpu: {} has {} rows: x and y have {} and {} elements",
                                                         p.kind, p.rows, x.size(), y.size()));
                        if (!(x.context == p.context) || !(y.context == p.context))
                            throw InvalidArgument(fmt::format("xgpu: {} was built on another context than x", p.kind));
                        const Array<V> xa(x);
                        Array<V> ya(y);
                        pre.apply(xa, ya);
                    },
                    p.m);
            },
            "y = M x.");
    m.def(
        "jacobi",
        [](nb::handle a) {
            NativePreconditioner out;
            if (!nb::isinstance<Matrix>(a) || !visit_real_operator(a, [&](const auto& mat) {
                    using T = value_of_t<decltype(mat)>;
                    if constexpr (requires { mat.diagonal(); }) {
                        nb::gil_scoped_release unlocked;
                        out = NativePreconditioner(mat.context(), "jacobi", Preconditioner<T>(Jacobi<T>(mat)));
                    }
                }))
                throw DTypeError("xgpu: Jacobi takes an xgpu sparse matrix (its diagonal)");
            return out;
        },
        nb::arg("a"));
    m.def(
        "chebyshev",
        [](nb::handle a, int degree, int lanczos_steps, double safety, double lower_ratio) {
            const ChebyshevOptions o{degree, lanczos_steps, safety, lower_ratio};
            NativePreconditioner out;
            if (!visit_real_operator(a, [&](const auto& op) {
                    using T = value_of_t<decltype(op)>;
                    nb::gil_scoped_release unlocked;
                    out = NativePreconditioner(op.context(), "chebyshev",
                                               Preconditioner<T>(Chebyshev<T>(op.context(), op, o)));
                }))
                throw DTypeError("xgpu: Chebyshev takes an xgpu sparse matrix or a Laplacian");
            return out;
        },
        nb::arg("a"), nb::arg("degree"), nb::arg("lanczos_steps"), nb::arg("safety"), nb::arg("lower_ratio"));
    m.def("operator_preconditioner", &operator_preconditioner, nb::arg("a"));
}

void bind_solvers(nb::module_& m) {
    nb::class_<SolverReport>(m, "SolverReport")
        .def_ro("method", &SolverReport::method)
        .def_prop_ro("status", [](const SolverReport& r) { return std::string(name(r.status)); })
        .def_prop_ro("converged", &SolverReport::converged)
        .def_ro("iterations", &SolverReport::iterations)
        .def_ro("status_iteration", &SolverReport::status_iteration)
        .def_ro("rhs_norm", &SolverReport::rhs_norm)
        .def_ro("residual", &SolverReport::residual)
        .def_ro("relative_residual", &SolverReport::relative_residual)
        .def_ro("history", &SolverReport::history)
        .def_ro("seconds", &SolverReport::seconds)
        .def_ro("ms_per_iteration", &SolverReport::ms_per_iteration)
        .def_ro("gbps", &SolverReport::gbps)
        .def_ro("launches_per_iteration", &SolverReport::launches_per_iteration)
        .def_ro("operator_form", &SolverReport::operator_form)
        .def("__repr__", [](const SolverReport& r) {
            char residual[32];
            std::snprintf(residual, sizeof residual, "%.3g", r.relative_residual);
            return "<xgpu.SolverReport " + r.method + ": " + name(r.status) + " after " + std::to_string(r.iterations) +
                   " iterations, relative residual " + residual + ">";
        });
    m.def(
        "solve",
        [](const std::string& method, nb::handle a, nb::handle m, const ArrayDesc& b, const ArrayDesc& x, double rtol,
           double atol, std::int64_t maxiter, const std::string& variant, int check_interval, nb::object callback,
           int restart, nb::object progress) {
            const SolveArgs args{method,
                                 rtol,
                                 atol,
                                 maxiter,
                                 variant,
                                 check_interval,
                                 std::move(callback),
                                 restart,
                                 std::move(progress)};
            if (b.dtype == DType::float32) return solve_t<float>(a, m, b, x, args);
            if (b.dtype == DType::float64) return solve_t<double>(a, m, b, x, args);
            throw nb::type_error(
                ("xgpu: the solvers take float32 or float64 vectors, not " + std::string(dtype_name(b.dtype))).c_str());
        },
        nb::arg("method"), nb::arg("a"), nb::arg("m").none(), nb::arg("b"), nb::arg("x"), nb::arg("rtol"),
        nb::arg("atol"), nb::arg("maxiter"), nb::arg("variant"), nb::arg("check_interval"), nb::arg("callback").none(),
        nb::arg("restart") = 30, nb::arg("progress").none() = nb::none());
}

} // namespace xgpu::python
