// Eigen interop for xgpu::sparse (optional: include it only where Eigen 3.3+ is on the include path).
//
//   Eigen::SparseMatrix<double> E = ...;                   // column- or row-major, any index type
//   auto h = xgpu::sparse::from_eigen<std::int32_t>(E);    // HostCsr<double, int32_t>, canonical
//   xgpu::sparse::Csr<double> A(ctx, h);
//   Eigen::SparseMatrix<double, Eigen::RowMajor> F = xgpu::sparse::to_eigen(A.to_host());
//
// Explicit zeros stored in either are kept. Header-only: the library itself does not need Eigen.
#pragma once

#include <Eigen/SparseCore>

#include "xgpu/sparse.hpp"

namespace xgpu::sparse {

// The matrix as host CSR with indices of type I (by default the Eigen matrix's own index type).
template <class I = void, Value T, int Options, class EI>
auto from_eigen(const Eigen::SparseMatrix<T, Options, EI>& m) {
    using J = std::conditional_t<std::is_void_v<I>, EI, I>;
    static_assert(Index<J>, "xgpu::sparse::from_eigen: indices must be int32_t or int64_t");
    // A compressed row-major copy: Eigen's change of storage order is a transposition, which sorts
    // each row's columns; a row-major m whose rows are not sorted is sorted through COO below.
    Eigen::SparseMatrix<T, Eigen::RowMajor, EI> rm(m);
    rm.makeCompressed();
    const std::int64_t rows = rm.rows(), cols = rm.cols(), nnz = rm.nonZeros();
    check_index_width<J>(rows, cols, std::uint64_t(nnz));
    HostCsr<T, J> h;
    h.rows = rows;
    h.cols = cols;
    h.row_ptr.assign(rm.outerIndexPtr(), rm.outerIndexPtr() + rows + 1);
    h.col_idx.assign(rm.innerIndexPtr(), rm.innerIndexPtr() + nnz);
    h.values.assign(rm.valuePtr(), rm.valuePtr() + nnz);
    if (!h.is_canonical()) {
        std::vector<J> ri(static_cast<std::size_t>(nnz));
        for (std::int64_t r = 0; r < rows; ++r)
            for (auto k = h.row_ptr[std::size_t(r)]; k < h.row_ptr[std::size_t(r) + 1]; ++k)
                ri[std::size_t(k)] = J(r);
        h = from_coo<T, J>(rows, cols, ri, h.col_idx, h.values);
    }
    h.validate();
    return h;
}

// Row-major, so the arrays are copied as they are.
template <Value T, Index I> Eigen::SparseMatrix<T, Eigen::RowMajor, I> to_eigen(const HostCsr<T, I>& a) {
    a.validate();
    Eigen::SparseMatrix<T, Eigen::RowMajor, I> m(Eigen::Index(a.rows), Eigen::Index(a.cols));
    m.resizeNonZeros(Eigen::Index(a.nnz()));
    std::copy(a.row_ptr.begin(), a.row_ptr.end(), m.outerIndexPtr());
    std::copy(a.col_idx.begin(), a.col_idx.end(), m.innerIndexPtr());
    std::copy(a.values.begin(), a.values.end(), m.valuePtr());
    return m;
}

} // namespace xgpu::sparse
