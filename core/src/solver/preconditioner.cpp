// The preconditioners as operators: Jacobi (the inverse diagonal; the solvers fuse it into their
// kernels) and Chebyshev (a fixed polynomial in A from array expressions and A's products).
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "spectral.hpp"
#include "xgpu/preconditioner.hpp"
#include "xgpu/reduction.hpp"

namespace xgpu {

template <class T> Jacobi<T>::Jacobi(const Array<T>& diagonal) {
    if (diagonal.empty()) throw InvalidArgument("xgpu: Jacobi: the diagonal is an empty Array");
    std::vector<T> d = diagonal.get();
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (d[i] == T(0) || !std::isfinite(d[i]))
            throw InvalidArgument(fmt::format("xgpu: Jacobi: diagonal entry {} is {}: it has no inverse", i, d[i]));
        d[i] = T(1) / d[i];
    }
    inverse_ = to_device(diagonal.context(), d);
}

template <class T> void Jacobi<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    if (x.size() != inverse_.size() || y.size() != inverse_.size())
        throw ShapeError(fmt::format("xgpu: Jacobi of {} rows: x and y have {} and {} elements", inverse_.size(),
                                     x.size(), y.size()));
    if (beta == T(0))
        y = alpha * inverse_ * x;
    else
        y = alpha * inverse_ * x + beta * y;
}

namespace detail {
ChebyshevSteps chebyshev_steps(double lmin, double lmax, int degree) {
    const double theta = (lmax + lmin) / 2, delta = (lmax - lmin) / 2, sigma = theta / delta;
    ChebyshevSteps s{{0.0}, {1 / theta}};
    double rho = 1 / sigma;
    for (int k = 1; k < degree; ++k) {
        const double next = 1 / (2 * sigma - rho);
        s.c_d.push_back(next * rho);
        s.c_r.push_back(2 * next / delta);
        rho = next;
    }
    return s;
}
} // namespace detail

template <class T>
Chebyshev<T>::Chebyshev(const Context& ctx, detail::OperatorRef<T> a, const ChebyshevOptions& o)
    : ctx_(ctx), n_(a.rows), a_(std::move(a)), o_(o) {
    if (a_.rows != a_.cols)
        throw ShapeError(fmt::format("xgpu: Chebyshev: the operator is {}x{}: it must be square", a_.rows, a_.cols));
    if (o.degree < 1 || o.lanczos_steps < 1 || !(o.safety >= 1) || !(o.lower_ratio > 1))
        throw InvalidArgument(fmt::format("xgpu: Chebyshev: degree and lanczos_steps must be >= 1, safety >= 1 and "
                                          "lower_ratio > 1 (got {}, {}, {}, {})",
                                          o.degree, o.lanczos_steps, o.safety, o.lower_ratio));
    // A process of a distributed operator may hold no rows; the operator as a whole must have some.
    double total = double(n_);
    if (a_.global) a_.global->sum(&total, 1);
    if (total < 1) throw InvalidArgument("xgpu: Chebyshev: the operator has no rows");
    // The start vector is a hash of each row's global index, so that it is the same vector
    // however the rows are spread over processes.
    std::vector<T> start(std::size_t(n_), T(0));
    for (std::size_t i = 0; i < start.size(); ++i) {
        std::uint64_t z = std::uint64_t(a_.first_row) + i + 0x9e3779b97f4a7c15ull; // splitmix64
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        start[i] = T(0.5 + double(z >> 11) * 0x1.0p-53);
    }
    // The largest eigenvalue by Lanczos (its scalars global where the operator is distributed).
    const double estimate = detail::lanczos_max(a_, to_device(ctx, start), Array<T>(), Array<T>(), o.lanczos_steps);
    if (!(estimate > 0) || !std::isfinite(estimate))
        throw InvalidArgument(
            fmt::format("xgpu: Chebyshev: the operator's largest eigenvalue estimate is {}", estimate));
    lmax_ = estimate * o.safety;
    lmin_ = lmax_ / o.lower_ratio;
    steps_ = detail::chebyshev_steps(lmin_, lmax_, o.degree);
    r_ = empty<T>(ctx, {std::size_t(n_)});
    d_ = empty<T>(ctx, {std::size_t(n_)});
    t_ = empty<T>(ctx, {std::size_t(n_)});
}

// Chebyshev iteration for A y = x from y = 0 (detail::chebyshev_steps).
template <class T> void Chebyshev<T>::apply(const Array<T>& x, Array<T>& y) const {
    if (x.size() != std::size_t(n_) || y.size() != std::size_t(n_))
        throw ShapeError(
            fmt::format("xgpu: Chebyshev of {} rows: x and y have {} and {} elements", n_, x.size(), y.size()));
    d_ = x * T(steps_.c_r[0]);
    y.assign(d_);
    if (o_.degree == 1) return;
    r_.assign(x);
    for (int k = 1; k < o_.degree; ++k) {
        a_.apply(d_, t_);
        r_ -= t_;
        d_ = T(steps_.c_d[std::size_t(k)]) * d_ + T(steps_.c_r[std::size_t(k)]) * r_;
        y += d_;
    }
}

template <class T> void Chebyshev<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    detail::scaled_apply(*this, alpha, x, beta, y);
}

template class Jacobi<float>;
template class Jacobi<double>;
template class Chebyshev<float>;
template class Chebyshev<double>;

} // namespace xgpu
