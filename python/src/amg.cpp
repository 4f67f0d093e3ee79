// The smoothed aggregation hierarchy (xgpu/amg.hpp): a native preconditioner (preconditioner.hpp)
// with its levels, report and refresh.
#include "preconditioner.hpp"
#include "sparse.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>

#include <fmt/format.h>

#include <xgpu/amg.hpp>

namespace xgpu::python {

namespace {

using detail::ArrayDesc;

// A hierarchy of a float32 or float64 matrix; as a preconditioner, a V-cycle per application.
struct Multilevel : NativePreconditioner {
    template <class T>
    explicit Multilevel(amg::SmoothedAggregation<T> sa)
        : NativePreconditioner(sa.context(), "smoothed aggregation", Preconditioner<T>(sa)), h(std::move(sa)) {}
    std::variant<amg::SmoothedAggregation<float>, amg::SmoothedAggregation<double>> h;
};

// PyAMG's relaxation names as the hierarchy's smoothers.
amg::Smoother smoother_of(std::string_view name) {
    if (name == "jacobi") return amg::Smoother::jacobi;
    if (name == "l1_jacobi") return amg::Smoother::l1_jacobi;
    if (name == "chebyshev") return amg::Smoother::chebyshev;
    throw InvalidArgument(fmt::format("xgpu: no smoother '{}' (jacobi, l1_jacobi, chebyshev)", name));
}

} // namespace

void bind_amg(nb::module_& m) {
    nb::class_<Multilevel, NativePreconditioner>(m, "SmoothedAggregation")
        .def_prop_ro("levels",
                     [](const Multilevel& a) { return std::visit([](const auto& h) { return h.levels(); }, a.h); })
        .def(
            "level",
            [](const Multilevel& a, std::size_t l, std::string_view which) {
                return std::visit(
                    [&](const auto& h) {
                        if (which == "P") return Matrix{h.prolongator_at(l)};
                        if (which == "R") return Matrix{h.restriction_at(l)};
                        return Matrix{h.operator_at(l)};
                    },
                    a.h);
            },
            nb::arg("level"), nb::arg("which"))
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
        .def("refresh", [](Multilevel& a, const Matrix& mat) {
            std::visit(
                [&](auto& h) {
                    using V = typename std::remove_cvref_t<decltype(h)>::value_type;
                    const auto* csr = std::get_if<Csr32<V>>(&mat.m);
                    if (!csr)
                        throw DTypeError(fmt::format("xgpu: refresh: the matrix must be {} with int32 indices, as "
                                                     "the hierarchy's",
                                                     dtype_name(dtype_v<V>)));
                    nb::gil_scoped_release unlocked;
                    h.refresh(*csr);
                },
                a.h);
        });
    m.def(
        "smoothed_aggregation",
        [](const Matrix& a, nb::dict options, std::optional<ArrayDesc> b) {
            amg::Options o;
            const auto take = [&](const char* key, auto& field) {
                if (options.contains(key)) field = nb::cast<std::remove_reference_t<decltype(field)>>(options[key]);
            };
            take("theta", o.theta);
            take("theta_decay", o.theta_decay);
            take("max_coarse", o.max_coarse);
            take("max_levels", o.max_levels);
            if (options.contains("smoother")) o.smoother = smoother_of(nb::cast<std::string>(options["smoother"]));
            take("presmooth", o.presmooth);
            take("postsmooth", o.postsmooth);
            take("omega", o.omega);
            take("prolongator_omega", o.prolongator_omega);
            take("chebyshev_degree", o.chebyshev_degree);
            take("single_precision", o.single_precision);
            const auto build = [&]<class V>(const Csr32<V>& csr) {
                if (b && b->dtype != dtype_v<V>)
                    throw DTypeError("xgpu: smoothed aggregation: B must have the matrix's dtype");
                const Array<V> bv = b ? Array<V>(*b) : Array<V>();
                nb::gil_scoped_release unlocked;
                return Multilevel(amg::SmoothedAggregation<V>(csr, bv, o));
            };
            if (const auto* d = std::get_if<Csr32<double>>(&a.m)) return build(*d);
            if (const auto* f = std::get_if<Csr32<float>>(&a.m)) return build(*f);
            throw DTypeError("xgpu: smoothed aggregation takes a float32 or float64 matrix with int32 indices");
        },
        nb::arg("a"), nb::arg("options"), nb::arg("b").none());
}

} // namespace xgpu::python
