// Sparse matrices (CSR, with the library's automatic SpMV format) and the Laplacian stencils.
#include "sparse.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <span>
#include <variant>

#include <xgpu/xgpu.hpp>

namespace xgpu::python {

namespace {

using detail::ArrayDesc;
using cfloat = Matrix::cfloat;
using cdouble = Matrix::cdouble;

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
}

} // namespace xgpu::python
