// Every native preconditioner as the solvers' binding sees it: one type, whatever made it (Jacobi,
// Chebyshev, the multigrid hierarchy, a matrix or stencil applied as M, or a new one): its context,
// its rows and the C++ Preconditioner of its value type. A new preconditioner's binding returns one
// (or a type derived from it, as the hierarchy's); the solvers' binding lists none of them.
#pragma once

#include "common.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include <xgpu/preconditioner.hpp>

namespace xgpu::python {

struct NativePreconditioner {
    NativePreconditioner() = default;
    template <class T>
    NativePreconditioner(const Context& ctx, std::string kind, Preconditioner<T> p)
        : context(ctx), rows(p.rows()), kind(std::move(kind)), m(std::move(p)) {}

    Context context;
    std::int64_t rows = 0;
    std::string kind; // what it is, for messages: "jacobi", "chebyshev", "smoothed aggregation", ...
    std::variant<Preconditioner<float>, Preconditioner<double>> m;

    DType dtype() const { return m.index() == 0 ? DType::float32 : DType::float64; }
};

} // namespace xgpu::python
