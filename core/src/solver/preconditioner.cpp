// The preconditioners as operators: Jacobi (the inverse diagonal; the solvers fuse it into their
// kernels) and Chebyshev (a fixed polynomial in A from array expressions and A's products).
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "xgpu/reduction.hpp"
#include "xgpu/solver.hpp"

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

template <class T>
Chebyshev<T>::Chebyshev(const Context& ctx, std::int64_t n, std::function<void(const Array<T>&, Array<T>&)> a,
                        const ChebyshevOptions& o)
    : ctx_(ctx), n_(n), a_(std::move(a)), o_(o) {
    if (o.degree < 1 || o.power_steps < 1 || !(o.safety >= 1) || !(o.lower_ratio > 1))
        throw InvalidArgument(fmt::format("xgpu: Chebyshev: degree and power_steps must be >= 1, safety >= 1 and "
                                          "lower_ratio > 1 (got {}, {}, {}, {})",
                                          o.degree, o.power_steps, o.safety, o.lower_ratio));
    if (n < 1) throw InvalidArgument("xgpu: Chebyshev: the operator has no rows");
    // The largest eigenvalue by power iteration on the device (the norms stay there until the end).
    std::mt19937_64 gen(12345);
    std::uniform_real_distribution<double> dist(0.5, 1.5);
    std::vector<T> start(std::size_t(n), T(0));
    for (auto& v : start)
        v = T(dist(gen));
    Array<T> v = to_device(ctx, start), w = empty<T>(ctx, {std::size_t(n)});
    v = v / norm(v);
    for (int k = 0; k < o.power_steps; ++k) {
        a_(v, w);
        v = w / norm(w);
    }
    a_(v, w);
    const double estimate = double(norm(w).get());
    if (!(estimate > 0) || !std::isfinite(estimate))
        throw InvalidArgument(
            fmt::format("xgpu: Chebyshev: the operator's largest eigenvalue estimate is {}", estimate));
    lmax_ = estimate * o.safety;
    lmin_ = lmax_ / o.lower_ratio;
    r_ = empty<T>(ctx, {std::size_t(n)});
    d_ = empty<T>(ctx, {std::size_t(n)});
    t_ = empty<T>(ctx, {std::size_t(n)});
}

// Chebyshev iteration for A y = x from y = 0 (Saad, Iterative Methods, algorithm 12.1).
template <class T> void Chebyshev<T>::apply(const Array<T>& x, Array<T>& y) const {
    if (x.size() != std::size_t(n_) || y.size() != std::size_t(n_))
        throw ShapeError(
            fmt::format("xgpu: Chebyshev of {} rows: x and y have {} and {} elements", n_, x.size(), y.size()));
    const double theta = (lmax_ + lmin_) / 2, delta = (lmax_ - lmin_) / 2, sigma = theta / delta;
    double rho = 1 / sigma;
    d_ = x * T(1 / theta);
    y.assign(d_);
    if (o_.degree == 1) return;
    r_.assign(x);
    for (int k = 1; k < o_.degree; ++k) {
        a_(d_, t_);
        r_ -= t_;
        const double next = 1 / (2 * sigma - rho);
        d_ = T(next * rho) * d_ + T(2 * next / delta) * r_;
        y += d_;
        rho = next;
    }
}

template <class T> void Chebyshev<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    Array<T> t = empty<T>(ctx_, {std::size_t(n_)});
    apply(x, t);
    if (beta == T(0))
        y = alpha * t;
    else
        y = alpha * t + beta * y;
}

template class Jacobi<float>;
template class Jacobi<double>;
template class Chebyshev<float>;
template class Chebyshev<double>;

} // namespace xgpu
