// The one spectral estimate of the library: the largest eigenvalue of D^-1 A for a symmetric A
// and a positive diagonal D (or of A itself), by Lanczos. The Chebyshev preconditioner bounds its
// polynomial with it, and multigrid's smoothers and prolongator weigh by it (core/src/amg).
#pragma once

#include <vector>

#include "xgpu/operator.hpp"

namespace xgpu::detail {

// `steps` Lanczos steps (fewer where the space is exhausted) from `start` (any vector with every
// frequency in it; rows whose start is zero take no part), in the inner product <x, y>_D = x^T D y
// where `diagonal` holds D (then `inverse_diagonal` holds D^-1, 0 where D is 0), else the
// Euclidean one; the largest Ritz value, a lower bound of the largest eigenvalue that power
// iteration approaches far slower. Over several processes (a.global) every scalar is summed
// across them, so all get the same estimate; else the scalars stay on the device until the end.
template <class T>
double lanczos_max(const OperatorRef<T>& a, Array<T> start, const Array<T>& diagonal, const Array<T>& inverse_diagonal,
                   int steps);

// The largest eigenvalue of the symmetric tridiagonal matrix (alpha on the diagonal, beta beside
// it): bisection on the Sturm count, to double precision.
double tridiagonal_max(const std::vector<double>& alpha, const std::vector<double>& beta);

} // namespace xgpu::detail
