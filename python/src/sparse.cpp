// Sparse matrices (CSR, with the library's automatic SpMV format), the Laplacian stencils, and the
// Krylov solvers over them or over a Python operator.
#include "common.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <cstdio>
#include <cstring>
#include <memory>
#include <variant>

#include <xgpu/amg.hpp>
#include <xgpu/solver.hpp>
#include <xgpu/sparse.hpp>
#include <xgpu/xgpu.hpp>

namespace xgpu::python {

namespace {

using detail::ArrayDesc;
using cfloat = std::complex<float>;
using cdouble = std::complex<double>;

template <class T> using Csr32 = sparse::Csr<T, std::int32_t>;
template <class T> using Csr64 = sparse::Csr<T, std::int64_t>;

// A CSR matrix of any value and index type the library has.
struct Matrix {
    std::variant<Csr32<float>, Csr32<double>, Csr32<cfloat>, Csr32<cdouble>, Csr64<float>, Csr64<double>, Csr64<cfloat>,
                 Csr64<cdouble>>
        m;
};

// A Laplacian stencil (2-D or 3-D, float or double).
struct Stencil {
    std::variant<Laplacian2D<float>, Laplacian2D<double>, Laplacian3D<float>, Laplacian3D<double>> s;
};

// A smoothed aggregation hierarchy (xgpu/amg.hpp) of a float32 or float64 matrix.
struct Multilevel {
    std::variant<amg::SmoothedAggregation<float>, amg::SmoothedAggregation<double>> h;
};

using HostArray = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig, nb::ndim<1>>;

template <class T> std::span<const T> span_of(const HostArray& a) {
    return {static_cast<const T*>(a.data()), a.shape(0)};
}

template <class T> DType dtype_of() {
    return dtype_v<T>;
}

template <class T, class I>
Matrix make(const Context& ctx, std::int64_t rows, std::int64_t cols, const HostArray& ptr, const HostArray& idx,
            const HostArray& val) {
    const std::span<const T> values = span_of<T>(val);
    sparse::Csr<T, I> m(ctx, rows, cols, span_of<I>(ptr), span_of<I>(idx), values);
    return Matrix{std::move(m)};
}

template <class I>
Matrix make_values(const Context& ctx, std::int64_t rows, std::int64_t cols, const HostArray& ptr, const HostArray& idx,
                   const HostArray& val) {
    const auto dt = val.dtype();
    if (dt == nb::dtype<float>()) return make<float, I>(ctx, rows, cols, ptr, idx, val);
    if (dt == nb::dtype<double>()) return make<double, I>(ctx, rows, cols, ptr, idx, val);
    if (dt == nb::dtype<cfloat>()) return make<cfloat, I>(ctx, rows, cols, ptr, idx, val);
    if (dt == nb::dtype<cdouble>()) return make<cdouble, I>(ctx, rows, cols, ptr, idx, val);
    throw nb::type_error("xgpu: sparse matrix values must be float32, float64, complex64 or complex128");
}

// Host arrays of the matrix: (indptr, indices, data) as numpy arrays.
template <class T> nb::object numpy_of(std::vector<T> v) {
    auto* held = new std::vector<T>(std::move(v));
    nb::capsule owner(held, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(held->data(), {held->size()}, owner));
}

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
        Array<T> ax = empty<T>(x.context(), {std::size_t(n)});
        apply(x, ax);
        y = alpha * ax + beta * y;
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
};

// The operator argument: a Matrix, a Stencil, or a Python operator (n, call).
template <class T>
SolverReport solve_t(nb::handle a, nb::handle m, const ArrayDesc& bd, const ArrayDesc& xd, const SolveArgs& args) {
    SolverOptions<T> o;
    o.rtol = args.rtol;
    o.atol = args.atol;
    o.max_iterations = args.maxiter;
    o.variant = variant_of(args.variant);
    o.check_interval = args.check_interval;
    const Array<T> b(bd);
    Array<T> x(xd);
    std::unique_ptr<PyOperator<T>> py_m;
    if (nb::isinstance<nb::str>(m)) {
        if (nb::cast<std::string>(m) != "jacobi") throw nb::value_error("xgpu: M must be 'jacobi' or an operator");
        if (nb::isinstance<Matrix>(a)) {
            std::visit(
                [&](const auto& mat) {
                    using M = std::remove_cvref_t<decltype(mat)>;
                    if constexpr (std::is_same_v<typename M::value_type, T>) o.preconditioner = Jacobi<T>(mat);
                },
                nb::cast<const Matrix&>(a).m);
        } else if (nb::isinstance<Stencil>(a)) {
            throw nb::value_error("xgpu: M='jacobi' on a Laplacian stencil: its diagonal is constant, so Jacobi "
                                  "changes nothing; pass no M");
        } else {
            throw nb::value_error("xgpu: M='jacobi' needs a sparse matrix A (the diagonal comes from it)");
        }
    } else if (nb::isinstance<Multilevel>(m)) { // applied natively: no Python call per application
        std::visit(
            [&](const auto& h) {
                if constexpr (std::is_same_v<std::remove_cvref_t<decltype(h)>, amg::SmoothedAggregation<T>>)
                    o.preconditioner = h;
                else
                    throw InvalidArgument("xgpu: M: the hierarchy's type and b's differ");
            },
            nb::cast<const Multilevel&>(m).h);
    } else if (nb::isinstance<Matrix>(m)) { // M as a matrix: y = M x by its SpMV
        std::visit(
            [&](const auto& mat) {
                if constexpr (std::is_same_v<typename std::remove_cvref_t<decltype(mat)>::value_type, T>)
                    o.preconditioner = Preconditioner<T>(mat);
                else
                    throw InvalidArgument("xgpu: M: the matrix's values and b have different types");
            },
            nb::cast<const Matrix&>(m).m);
    } else if (nb::isinstance<Stencil>(m)) {
        std::visit(
            [&](const auto& st) {
                using L = std::remove_cvref_t<decltype(st)>;
                if constexpr (std::is_same_v<L, Laplacian2D<T>> || std::is_same_v<L, Laplacian3D<T>>)
                    o.preconditioner = Preconditioner<T>(st);
                else
                    throw InvalidArgument("xgpu: M: the stencil's type and b's differ");
            },
            nb::cast<const Stencil&>(m).s);
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
        return args.method == "cg" ? cg<T>(op, b, x, o) : bicgstab<T>(op, b, x, o);
    };
    if (nb::isinstance<Matrix>(a)) {
        return std::visit(
            [&](const auto& mat) -> SolverReport {
                using M = std::remove_cvref_t<decltype(mat)>;
                if constexpr (std::is_same_v<typename M::value_type, T>)
                    return run(mat);
                else
                    throw nb::type_error("xgpu: the matrix's values and b have different types");
            },
            nb::cast<const Matrix&>(a).m);
    }
    if (nb::isinstance<Stencil>(a)) {
        return std::visit(
            [&](const auto& s) -> SolverReport {
                using S = std::remove_cvref_t<decltype(s)>;
                if constexpr (std::is_same_v<S, Laplacian2D<T>> || std::is_same_v<S, Laplacian3D<T>>)
                    return run(s);
                else
                    throw nb::type_error("xgpu: the stencil's type and b's differ");
            },
            nb::cast<const Stencil&>(a).s);
    }
    const auto [n, call] = nb::cast<std::pair<std::int64_t, nb::object>>(a);
    return run(PyOperator<T>{n, call});
}

} // namespace

void bind_sparse(nb::module_& m) {
    nb::class_<Matrix>(m, "CsrMatrix")
        .def_prop_ro("shape",
                     [](const Matrix& a) {
                         return std::visit([](const auto& x) { return std::pair(x.rows(), x.cols()); }, a.m);
                     })
        .def_prop_ro("nnz", [](const Matrix& a) { return std::visit([](const auto& x) { return x.nnz(); }, a.m); })
        .def_prop_ro("dtype",
                     [](const Matrix& a) {
                         return std::visit(
                             [](const auto& x) {
                                 return std::string(
                                     dtype_name(dtype_v<typename std::remove_cvref_t<decltype(x)>::value_type>));
                             },
                             a.m);
                     })
        .def_prop_ro("index_dtype",
                     [](const Matrix& a) {
                         return std::visit(
                             [](const auto& x) {
                                 return sizeof(typename std::remove_cvref_t<decltype(x)>::index_type) == 4 ? "int32"
                                                                                                           : "int64";
                             },
                             a.m);
                     })
        .def_prop_ro("context",
                     [](const Matrix& a) { return std::visit([](const auto& x) { return x.context(); }, a.m); })
        .def("diagonal",
             [](const Matrix& a) { return std::visit([](const auto& x) { return x.diagonal().desc(); }, a.m); })
        .def("spmv",
             [](const Matrix& a, const ArrayDesc& x, const ArrayDesc& y) {
                 nb::gil_scoped_release unlocked; // the first product may compile and time formats
                 std::visit(
                     [&](const auto& mat) {
                         using T = typename std::remove_cvref_t<decltype(mat)>::value_type;
                         const Array<T> xa(x);
                         Array<T> ya(y);
                         sparse::spmv(mat, xa, ya);
                     },
                     a.m);
             })
        .def("to_host", [](const Matrix& a) {
            return std::visit(
                [](const auto& x) {
                    auto h = x.to_host();
                    return nb::make_tuple(numpy_of(std::move(h.row_ptr)), numpy_of(std::move(h.col_idx)),
                                          numpy_of(std::move(h.values)));
                },
                a.m);
        });
    m.def(
        "csr_matrix",
        [](const Context& ctx, std::int64_t rows, std::int64_t cols, HostArray ptr, HostArray idx, HostArray val) {
            if (ptr.dtype() != idx.dtype()) throw nb::type_error("xgpu: indptr and indices must have one type");
            nb::gil_scoped_release unlocked;
            if (ptr.dtype() == nb::dtype<std::int32_t>())
                return make_values<std::int32_t>(ctx, rows, cols, ptr, idx, val);
            if (ptr.dtype() == nb::dtype<std::int64_t>())
                return make_values<std::int64_t>(ctx, rows, cols, ptr, idx, val);
            throw nb::type_error("xgpu: sparse indices must be int32 or int64");
        },
        nb::arg("context"), nb::arg("rows"), nb::arg("cols"), nb::arg("indptr"), nb::arg("indices"), nb::arg("data"));

    nb::class_<Stencil>(m, "Stencil")
        .def_prop_ro("shape",
                     [](const Stencil& s) {
                         return std::visit([](const auto& x) { return std::pair(x.rows(), x.cols()); }, s.s);
                     })
        .def_prop_ro("dtype",
                     [](const Stencil& s) {
                         return std::visit(
                             [](const auto& x) {
                                 using L = std::remove_cvref_t<decltype(x)>;
                                 return std::is_same_v<L, Laplacian2D<float>> || std::is_same_v<L, Laplacian3D<float>>
                                            ? "float32"
                                            : "float64";
                             },
                             s.s);
                     })
        .def("apply", [](const Stencil& s, const ArrayDesc& x, const ArrayDesc& y) {
            std::visit(
                [&](const auto& op) {
                    using L = std::remove_cvref_t<decltype(op)>;
                    using T = std::conditional_t<
                        std::is_same_v<L, Laplacian2D<float>> || std::is_same_v<L, Laplacian3D<float>>, float, double>;
                    const Array<T> xa(x);
                    Array<T> ya(y);
                    op.apply(xa, ya);
                },
                s.s);
        });
    m.def("laplacian", [](const Context& ctx, std::string_view dtype, const std::vector<std::int64_t>& n) {
        const bool f64 = dtype_from_name(dtype) == DType::float64;
        if (!f64 && dtype_from_name(dtype) != DType::float32)
            throw nb::type_error("xgpu: a Laplacian stencil is float32 or float64");
        if (n.size() == 2)
            return f64 ? Stencil{Laplacian2D<double>(ctx, n[0], n[1])} : Stencil{Laplacian2D<float>(ctx, n[0], n[1])};
        if (n.size() == 3)
            return f64 ? Stencil{Laplacian3D<double>(ctx, n[0], n[1], n[2])}
                       : Stencil{Laplacian3D<float>(ctx, n[0], n[1], n[2])};
        throw nb::value_error("xgpu: a Laplacian stencil has 2 or 3 dimensions");
    });

    nb::class_<Multilevel>(m, "SmoothedAggregation")
        .def_prop_ro("levels",
                     [](const Multilevel& a) { return std::visit([](const auto& h) { return h.levels(); }, a.h); })
        .def_prop_ro("rows",
                     [](const Multilevel& a) { return std::visit([](const auto& h) { return h.rows(); }, a.h); })
        .def("level",
             [](const Multilevel& a, std::size_t l, std::string_view which) {
                 return std::visit(
                     [&](const auto& h) {
                         if (which == "P") return Matrix{h.prolongator_at(l)};
                         if (which == "R") return Matrix{h.restriction_at(l)};
                         return Matrix{h.operator_at(l)};
                     },
                     a.h);
             })
        .def("aggregates",
             [](const Multilevel& a, std::size_t l) {
                 return std::visit([&](const auto& h) { return h.aggregates_at(l).desc(); }, a.h);
             })
        .def("candidates",
             [](const Multilevel& a, std::size_t l) {
                 return std::visit([&](const auto& h) { return h.candidate_at(l).desc(); }, a.h);
             })
        .def("report",
             [](const Multilevel& a) {
                 const amg::Report& r = std::visit([](const auto& h) -> const amg::Report& { return h.report(); }, a.h);
                 nb::dict d;
                 nb::list levels;
                 for (const auto& l : r.levels)
                     levels.append(nb::make_tuple(l.rows, l.nnz, l.rho));
                 d["levels"] = levels;
                 d["operator_complexity"] = r.operator_complexity;
                 d["grid_complexity"] = r.grid_complexity;
                 d["bytes"] = r.bytes;
                 d["setup"] =
                     nb::make_tuple(r.strength_aggregation, r.prolongator, r.galerkin, r.coarse_solve, r.total);
                 d["precision"] = r.precision;
                 d["coarse"] = r.coarse;
                 return d;
             })
        .def("refresh",
             [](Multilevel& a, const Matrix& mat) {
                 std::visit(
                     [&](auto& h) {
                         using T = std::remove_cvref_t<decltype(h)>;
                         using V =
                             std::conditional_t<std::is_same_v<T, amg::SmoothedAggregation<float>>, float, double>;
                         const auto* csr = std::get_if<Csr32<V>>(&mat.m);
                         if (!csr) throw InvalidArgument("xgpu: refresh: the matrix must have the hierarchy's type");
                         nb::gil_scoped_release unlocked;
                         h.refresh(*csr);
                     },
                     a.h);
             })
        .def("apply", [](const Multilevel& a, const ArrayDesc& x, const ArrayDesc& y) {
            std::visit(
                [&](const auto& h) {
                    using T = std::remove_cvref_t<decltype(h)>;
                    using V = std::conditional_t<std::is_same_v<T, amg::SmoothedAggregation<float>>, float, double>;
                    if (x.dtype != dtype_v<V> || y.dtype != dtype_v<V>)
                        throw InvalidArgument("xgpu: the hierarchy applies to vectors of its own type");
                    const Array<V> xa(x);
                    Array<V> ya(y);
                    h.apply(xa, ya);
                },
                a.h);
        });
    m.def(
        "smoothed_aggregation",
        [](const Matrix& a, double theta, double theta_decay, std::int64_t max_coarse, int max_levels,
           std::string_view smoother, int presmooth, int postsmooth, bool single_precision,
           std::optional<ArrayDesc> b) {
            amg::Options o;
            o.theta = theta;
            o.theta_decay = theta_decay;
            o.max_coarse = max_coarse;
            o.max_levels = max_levels;
            if (smoother == "jacobi")
                o.smoother = amg::Smoother::jacobi;
            else if (smoother == "l1_jacobi")
                o.smoother = amg::Smoother::l1_jacobi;
            else if (smoother == "chebyshev")
                o.smoother = amg::Smoother::chebyshev;
            else
                throw InvalidArgument("xgpu: no smoother '" + std::string(smoother) +
                                      "' (jacobi, l1_jacobi, chebyshev)");
            o.presmooth = presmooth;
            o.postsmooth = postsmooth;
            o.single_precision = single_precision;
            const auto near_null_space = [&]<class V>() {
                if (!b) return Array<V>();
                if (b->dtype != dtype_v<V>)
                    throw InvalidArgument("xgpu: smoothed aggregation: B must have the matrix's dtype");
                return Array<V>(*b);
            };
            if (const auto* d = std::get_if<Csr32<double>>(&a.m)) {
                const Array<double> bd = near_null_space.template operator()<double>();
                nb::gil_scoped_release unlocked;
                return Multilevel{amg::SmoothedAggregation<double>(*d, bd, o)};
            }
            if (const auto* f = std::get_if<Csr32<float>>(&a.m)) {
                const Array<float> bf = near_null_space.template operator()<float>();
                nb::gil_scoped_release unlocked;
                return Multilevel{amg::SmoothedAggregation<float>(*f, bf, o)};
            }
            throw InvalidArgument("xgpu: smoothed aggregation takes a float32 or float64 matrix with int32 indices");
        },
        nb::arg("a"), nb::arg("theta"), nb::arg("theta_decay"), nb::arg("max_coarse"), nb::arg("max_levels"),
        nb::arg("smoother"), nb::arg("presmooth"), nb::arg("postsmooth"), nb::arg("single_precision"),
        nb::arg("b").none());

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
           double atol, std::int64_t maxiter, const std::string& variant, int check_interval) {
            const SolveArgs args{method, rtol, atol, maxiter, variant, check_interval};
            if (b.dtype == DType::float32) return solve_t<float>(a, m, b, x, args);
            if (b.dtype == DType::float64) return solve_t<double>(a, m, b, x, args);
            throw nb::type_error(
                ("xgpu: the solvers take float32 or float64 vectors, not " + std::string(dtype_name(b.dtype))).c_str());
        },
        nb::arg("method"), nb::arg("a"), nb::arg("m").none(), nb::arg("b"), nb::arg("x"), nb::arg("rtol"),
        nb::arg("atol"), nb::arg("maxiter"), nb::arg("variant"), nb::arg("check_interval"));
}

} // namespace xgpu::python
