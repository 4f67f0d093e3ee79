// Lanczos for the largest eigenvalue of D^-1 A (spectral.hpp).
#include "spectral.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "xgpu/reduction.hpp"

namespace xgpu::detail {

double tridiagonal_max(const std::vector<double>& alpha, const std::vector<double>& beta) {
    const std::size_t m = alpha.size();
    double lo = 0, hi = 0; // Gershgorin
    for (std::size_t i = 0; i < m; ++i) {
        const double r = (i > 0 ? std::abs(beta[i - 1]) : 0.0) + (i + 1 < m ? std::abs(beta[i]) : 0.0);
        lo = i == 0 ? alpha[i] - r : std::min(lo, alpha[i] - r);
        hi = i == 0 ? alpha[i] + r : std::max(hi, alpha[i] + r);
    }
    const auto above = [&](double x) { // eigenvalues greater than x
        std::size_t below = 0;
        double d = 1;
        for (std::size_t i = 0; i < m; ++i) {
            d = alpha[i] - x - (i > 0 ? beta[i - 1] * beta[i - 1] / d : 0.0);
            if (d == 0) d = -1e-300;
            if (d < 0) ++below;
        }
        return m - below;
    };
    for (int k = 0; k < 200 && hi - lo > 1e-14 * std::max(std::abs(lo), std::abs(hi)); ++k) {
        const double mid = 0.5 * (lo + hi);
        (above(mid) > 0 ? lo : hi) = mid;
    }
    return hi;
}

namespace {

// The Ritz values' tridiagonal matrix, stopped at the first beta that vanishes (an invariant
// subspace: its Ritz values are exact) or an alpha that is not finite (no diagonal at all).
double ritz_max(const std::vector<double>& alpha, const std::vector<double>& beta) {
    std::vector<double> al, be;
    const std::size_t m = alpha.size();
    for (std::size_t k = 0; k < m; ++k) {
        if (!std::isfinite(alpha[k])) break;
        al.push_back(alpha[k]);
        if (k + 1 == m || k >= beta.size()) break;
        if (!(beta[k] > 1e-10 * std::abs(al.back()))) break;
        be.push_back(beta[k]);
    }
    return tridiagonal_max(al, be);
}

} // namespace

// D^-1 A is self-adjoint in <x, y>_D, so Lanczos in that inner product has the eigenvalues of the
// symmetric D^-1/2 A D^-1/2 without scaling A: alpha_k = v^T A v, w = D^-1 A v - alpha_k v -
// beta_k v', beta_k+1 = |w|_D. Each v is kept unnormalised, as u with its norm s (v = u / s), the
// scale applied inside the next step's expressions, so that a step reads A once and vectors 11
// times.
template <class T>
double lanczos_max(const OperatorRef<T>& a, Array<T> u, const Array<T>& d, const Array<T>& inverse_diagonal,
                   int steps) {
    const Context& ctx = u.context();
    const std::size_t n = u.size();
    const bool weighted = !d.empty();
    Array<T> y = empty<T>(ctx, {n}), w = empty<T>(ctx, {n}), previous = zeros<T>(ctx, {n});
    // Every process takes the same number of steps: the rows of all of them bound it.
    double rows = double(n);
    if (a.global) a.global->sum(&rows, 1);
    const int m = int(std::min<double>(double(steps), rows));
    std::vector<double> alpha, beta;
    if (!a.global) { // the scalars as 0-d arrays on the device, read once at the end
        std::vector<Array<T>> al, be;
        Array<T> s = weighted ? sqrt(sum(d * u * u)) : sqrt(sum(u * u)), s_previous;
        for (int k = 0; k < m; ++k) {
            a.apply(u, y); // A v = y / s
            al.push_back(dot(u, y) / (s * s));
            if (k + 1 == m) break;
            if (weighted) {
                if (k == 0)
                    w = (y * inverse_diagonal - al.back() * u) / s;
                else
                    w = (y * inverse_diagonal - al.back() * u) / s - (be.back() / s_previous) * previous;
                be.push_back(sqrt(sum(d * w * w)));
            } else {
                if (k == 0)
                    w = (y - al.back() * u) / s;
                else
                    w = (y - al.back() * u) / s - (be.back() / s_previous) * previous;
                be.push_back(sqrt(sum(w * w)));
            }
            std::swap(previous, u); // u's buffer free for w's next step, w's the new u
            std::swap(u, w);
            s_previous = s;
            s = be.back();
        }
        for (const auto& v : al)
            alpha.push_back(double(v.get()[0]));
        for (const auto& v : be)
            beta.push_back(double(v.get()[0]));
        return ritz_max(alpha, beta);
    }
    // Over several processes: each scalar summed across them on the host.
    const auto d_dot = [&](const Array<T>& x) { return weighted ? a.dot(Array<T>(d * x), x) : a.dot(x, x); };
    double s = std::sqrt(d_dot(u)), s_previous = 0;
    for (int k = 0; k < m; ++k) {
        a.apply(u, y);
        alpha.push_back(a.dot(u, y) / (s * s));
        if (k + 1 == m || !(s > 0)) break;
        const T ak = T(alpha.back()), inv_s = T(1 / s);
        if (k == 0)
            w = weighted ? Array<T>((y * inverse_diagonal - ak * u) * inv_s) : Array<T>((y - ak * u) * inv_s);
        else {
            const T c = T(beta.back() / s_previous);
            w = weighted ? Array<T>((y * inverse_diagonal - ak * u) * inv_s - c * previous)
                         : Array<T>((y - ak * u) * inv_s - c * previous);
        }
        beta.push_back(std::sqrt(d_dot(w)));
        std::swap(previous, u);
        std::swap(u, w);
        s_previous = s;
        s = beta.back();
    }
    return ritz_max(alpha, beta);
}

template double lanczos_max(const OperatorRef<float>&, Array<float>, const Array<float>&, const Array<float>&, int);
template double lanczos_max(const OperatorRef<double>&, Array<double>, const Array<double>&, const Array<double>&, int);

} // namespace xgpu::detail
