// The sparse layer's objects as the bindings hold them: CSR matrices of every value and index type,
// and the Laplacian stencils; and the native operators (those with real values) visited by type.
#pragma once

#include "common.hpp"

#include <complex>
#include <cstdint>
#include <type_traits>
#include <variant>

#include <xgpu/operator.hpp>
#include <xgpu/sparse.hpp>

namespace xgpu::python {

template <class T> using Csr32 = sparse::Csr<T, std::int32_t>;
template <class T> using Csr64 = sparse::Csr<T, std::int64_t>;

// A CSR matrix of any value and index type the library has.
struct Matrix {
    using cfloat = std::complex<float>;
    using cdouble = std::complex<double>;
    std::variant<Csr32<float>, Csr32<double>, Csr32<cfloat>, Csr32<cdouble>, Csr64<float>, Csr64<double>, Csr64<cfloat>,
                 Csr64<cdouble>>
        m;
};

// A Laplacian stencil (2-D or 3-D, float or double).
struct Stencil {
    std::variant<Laplacian2D<float>, Laplacian2D<double>, Laplacian3D<float>, Laplacian3D<double>> s;
};

// f(op) for the native operator `a` holds (a Matrix or a Stencil with float or double values);
// false where `a` is neither, DTypeError for a complex matrix.
template <class F> bool visit_real_operator(nb::handle a, F&& f) {
    if (nb::isinstance<Matrix>(a)) {
        std::visit(
            [&](const auto& mat) {
                using V = typename std::remove_cvref_t<decltype(mat)>::value_type;
                if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>)
                    f(mat);
                else
                    throw DTypeError("xgpu: a complex matrix: the solvers and preconditioners take float32 or "
                                     "float64 operators");
            },
            nb::cast<const Matrix&>(a).m);
        return true;
    }
    if (nb::isinstance<Stencil>(a)) {
        std::visit([&](const auto& s) { f(s); }, nb::cast<const Stencil&>(a).s);
        return true;
    }
    return false;
}

// The value type of a native operator: float or double.
template <class Op> struct value_of;
template <class T, class I> struct value_of<sparse::Csr<T, I>> { using type = T; };
template <class T> struct value_of<Laplacian2D<T>> { using type = T; };
template <class T> struct value_of<Laplacian3D<T>> { using type = T; };
template <class Op> using value_of_t = typename value_of<std::remove_cvref_t<Op>>::type;

} // namespace xgpu::python
