// The coarsest level's solver: its inverse, from a dense LU on the host.
#include <cmath>
#include <limits>

#include "hierarchy.hpp"

namespace xgpu::amg::detail {

// The inverse of a small matrix on the host (LU with partial pivoting), by columns; `dropped`
// counts the unknowns left out where the matrix is singular.
//
// A zero row (and column: the operator is R A P) from a zero column of P, and an unknown whose
// pivot vanishes (at most sqrt(eps(S)) times its column's largest entry: well above what the
// Galerkin product's rounding leaves of a singular operator's pivot, some hundred eps, and below
// a regular one; a pure Neumann problem's coarsest level is as singular as A) are left out: their
// row and column become those of the identity, the rest is inverted, and the inverse's row and
// column there are 0. That is the inverse of A restricted to the other unknowns, symmetric where
// A is, and for a consistent right-hand side of a symmetric A with a null space of that
// dimension an exact solution.
template <class S> std::vector<S> dense_inverse(const sparse::Csr<S>& a, std::size_t& dropped) {
    const auto h = a.to_host();
    const std::size_t n = std::size_t(h.rows);
    std::vector<double> a0(n * n, 0.0); // row-major
    for (std::size_t i = 0; i < n; ++i)
        for (auto k = std::size_t(h.row_ptr[i]); k < std::size_t(h.row_ptr[i + 1]); ++k)
            a0[i * n + std::size_t(h.col_idx[k])] += double(h.values[k]);
    std::vector<bool> out_of(n, true); // left out
    std::vector<double> column_max(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            out_of[i] = out_of[i] && a0[i * n + j] == 0;
            column_max[j] = std::max(column_max[j], std::abs(a0[i * n + j]));
        }
    const double tiny = std::sqrt(double(std::numeric_limits<S>::epsilon()));
    std::vector<double> m(n * n);
    std::vector<std::size_t> perm(n);
    // Each singular pivot found restarts the factorization with its unknown left out; a few at most.
    constexpr std::size_t max_singular = 16;
    for (std::size_t found = 0;; ++found) {
        for (std::size_t i = 0; i < n; ++i) {
            perm[i] = i;
            for (std::size_t j = 0; j < n; ++j)
                m[i * n + j] = out_of[i] || out_of[j] ? double(i == j) : a0[i * n + j];
        }
        std::size_t singular = n; // the column of a vanishing pivot
        for (std::size_t c = 0; c < n && singular == n; ++c) {
            std::size_t pivot = c;
            for (std::size_t r = c + 1; r < n; ++r)
                if (std::abs(m[r * n + c]) > std::abs(m[pivot * n + c])) pivot = r;
            if (!out_of[c] && !(std::abs(m[pivot * n + c]) > tiny * column_max[c])) {
                singular = c;
                break;
            }
            if (pivot != c) {
                for (std::size_t j = 0; j < n; ++j)
                    std::swap(m[c * n + j], m[pivot * n + j]);
                std::swap(perm[c], perm[pivot]);
            }
            const double d = m[c * n + c];
            for (std::size_t r = c + 1; r < n; ++r) {
                const double f = m[r * n + c] / d;
                if (f == 0) continue;
                m[r * n + c] = f;
                for (std::size_t j = c + 1; j < n; ++j)
                    m[r * n + j] -= f * m[c * n + j];
            }
        }
        if (singular == n) {
            dropped = found;
            break;
        }
        if (found == max_singular)
            throw InvalidArgument(fmt::format("xgpu: amg: the coarsest level ({} rows) is singular in more than {} "
                                              "dimensions",
                                              n, max_singular));
        out_of[singular] = true;
    }
    // Column j of the inverse: solve L U x = e_perm.
    std::vector<double> x(n);
    std::vector<S> out(n * n);
    for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t i = 0; i < n; ++i) {
            double s = perm[i] == j ? 1.0 : 0.0;
            for (std::size_t k = 0; k < i; ++k)
                s -= m[i * n + k] * x[k];
            x[i] = s;
        }
        for (std::size_t i = n; i-- > 0;) {
            double s = x[i];
            for (std::size_t k = i + 1; k < n; ++k)
                s -= m[i * n + k] * x[k];
            x[i] = s / m[i * n + i];
        }
        for (std::size_t i = 0; i < n; ++i)
            out[j * n + i] = out_of[i] || out_of[j] ? S(0) : S(x[i]);
    }
    return out;
}

template std::vector<float> dense_inverse(const sparse::Csr<float>&, std::size_t&);
template std::vector<double> dense_inverse(const sparse::Csr<double>&, std::size_t&);

} // namespace xgpu::amg::detail
