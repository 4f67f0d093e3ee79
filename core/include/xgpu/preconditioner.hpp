// Preconditioners: operators M that approximate A's inverse, for SolverOptions::preconditioner
// (xgpu/solver.hpp). Each is built on an operator through the solvers' own reference to it
// (detail::OperatorRef, xgpu/operator.hpp), so the quantities it computes (norms, eigenvalue
// estimates) are global wherever the operator's rows are spread over processes; none of them
// knows a sparse format or MPI.
//
//   xgpu::Jacobi<double> j(A);                        // diag(A)^-1, fused into the solvers' kernels
//   xgpu::Chebyshev<double> c(ctx, A, {.degree = 4}); // a polynomial in A
//   o.preconditioner = c;                             // or xgpu::amg::SmoothedAggregation (xgpu/amg.hpp)
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "xgpu/operator.hpp"

namespace xgpu {

namespace detail {
// y = alpha M x + beta y through m.apply(x, t) (beta 0: y is only written): the scaled form of an
// operator that has only y = M x.
template <class T, class M> void scaled_apply(const M& m, T alpha, const Array<T>& x, T beta, Array<T>& y) {
    Array<T> t = empty<T>(x.context(), {std::size_t(m.rows())});
    m.apply(x, t);
    if (beta == T(0))
        y = alpha * t;
    else
        y = alpha * t + beta * y;
}

// operator_ref of a copy of `a` that the reference holds (operator_ref itself refers to the
// caller's operator, which must outlive it).
template <class T, class Op> OperatorRef<T> held_operator_ref(Op a) {
    auto held = std::make_shared<Op>(std::move(a));
    OperatorRef<T> r = operator_ref<T>(*held);
    for (auto& f : r.forms) {
        f.apply = [held, g = std::move(f.apply)](const Array<T>& x, Array<T>& y) { g(x, y); };
        if (f.apply_dot)
            f.apply_dot = [held, g = std::move(f.apply_dot)](const Array<T>& x, Array<T>& y, Array<T>& p) {
                return g(x, y, p);
            };
    }
    return r;
}
} // namespace detail

// A preconditioner M (approximating A's inverse): none, Jacobi (recognised and fused into the
// solvers' kernels), or any operator with rows(), cols() and apply(x, y) (y = M x) such as
// Chebyshev below or a user type. One with context() is checked against the solve's vectors
// before any work (a preconditioner of another context is refused).
template <class T> class Preconditioner {
public:
    Preconditioner() = default;
    template <class Op>
    requires(!std::same_as<std::remove_cvref_t<Op>, Preconditioner>) &&
        requires(const Op& m, const Array<T>& x, Array<T>& y) {
        m.apply(x, y);
        { m.rows() } -> std::convertible_to<std::int64_t>;
    }
    Preconditioner(Op op) : rows_(op.rows()), cols_(op.cols()) {
        if constexpr (requires { op.inverse_diagonal(); }) inverse_diagonal_ = op.inverse_diagonal();
        if constexpr (requires {
                          { op.context() } -> std::convertible_to<Context>;
                      })
            context_ = op.context();
        else if (!inverse_diagonal_.empty())
            context_ = inverse_diagonal_.context();
        auto held = std::make_shared<Op>(std::move(op));
        apply_ = [held](const Array<T>& x, Array<T>& y) { held->apply(x, y); };
    }

    bool none() const { return !apply_; }
    // The inverse diagonal when this is Jacobi (the solvers fuse it), else empty.
    const Array<T>& inverse_diagonal() const { return inverse_diagonal_; }
    std::int64_t rows() const { return rows_; }
    std::int64_t cols() const { return cols_; }
    // The operator's context, where it says or has an inverse diagonal (an empty Context otherwise).
    const Context& context() const { return context_; }
    void apply(const Array<T>& x, Array<T>& y) const { apply_(x, y); }

private:
    std::int64_t rows_ = 0, cols_ = 0;
    Context context_;
    Array<T> inverse_diagonal_;
    std::function<void(const Array<T>&, Array<T>&)> apply_;
};

// The Jacobi preconditioner: M = diag(A)^-1. From a diagonal array, or from anything with
// diagonal() (the sparse matrices). A zero on the diagonal throws InvalidArgument.
template <class T> class Jacobi {
public:
    explicit Jacobi(const Array<T>& diagonal);
    template <class M>
    requires requires(const M& a) {
        { a.diagonal() } -> std::convertible_to<Array<T>>;
    }
    explicit Jacobi(const M& a) : Jacobi(Array<T>(a.diagonal())) {}

    std::int64_t rows() const { return std::int64_t(inverse_.size()); }
    std::int64_t cols() const { return rows(); }
    void apply(const Array<T>& x, Array<T>& y) const { apply(T(1), x, T(0), y); }
    void apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const;
    const Array<T>& inverse_diagonal() const { return inverse_; }
    const Context& context() const { return inverse_.context(); }

private:
    Array<T> inverse_;
};

// The Chebyshev polynomial's interval, which multigrid's Chebyshev smoother takes too (on D^-1 A):
// [lmax / lower_ratio, lmax] with lmax the largest eigenvalue's estimate times `safety` (the
// bounds of Adams et al. 2003, PyAMG and Ifpack2).
struct ChebyshevOptions {
    int degree = 4;          // operator products per application: degree - 1
    int lanczos_steps = 12;  // Lanczos steps for the largest eigenvalue (on the device)
    double safety = 1.1;     // the estimate is scaled by this (Lanczos's is a lower bound)
    double lower_ratio = 30; // the smallest eigenvalue aimed at: largest / lower_ratio
};

namespace detail {
// The three-term recurrence of `degree` Chebyshev steps for A y = x from y = 0 on [lmin, lmax]
// (Saad, Iterative Methods, algorithm 12.1): step k is d = c_d[k] d + c_r[k] r, y += d, with r the
// residual (c_d[0] = 0). The preconditioner applies it to A, multigrid's smoother to D^-1 A.
struct ChebyshevSteps {
    std::vector<double> c_d, c_r;
};
ChebyshevSteps chebyshev_steps(double lmin, double lmax, int degree);
} // namespace detail

// A polynomial preconditioner: `degree` steps of Chebyshev iteration for A y = x from y = 0 on
// [lmax / lower_ratio, lmax], lmax from a few Lanczos steps on the device (the library's one
// spectral estimate, which multigrid's smoothers take too). Symmetric positive definite where A
// is (so CG may take it).
template <class T> class Chebyshev {
public:
    // From any operator (copied and held): a sparse matrix, a stencil, a distributed matrix (its
    // Lanczos sums are then global), a multigrid level.
    template <LinearOperator<T> Op>
    Chebyshev(const Context& ctx, Op a, const ChebyshevOptions& o = {})
        : Chebyshev(ctx, detail::held_operator_ref<T>(std::move(a)), o) {}
    Chebyshev(const Context& ctx, detail::OperatorRef<T> a, const ChebyshevOptions& o);

    std::int64_t rows() const { return n_; }
    std::int64_t cols() const { return n_; }
    void apply(const Array<T>& x, Array<T>& y) const;
    void apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const;
    double lmax() const { return lmax_; }
    double lmin() const { return lmin_; }
    const Context& context() const { return ctx_; }

private:
    Context ctx_;
    std::int64_t n_;
    detail::OperatorRef<T> a_;
    ChebyshevOptions o_;
    double lmax_ = 0, lmin_ = 0;
    detail::ChebyshevSteps steps_;
    mutable Array<T> r_, d_, t_; // work space of apply
};

extern template class Jacobi<float>;
extern template class Jacobi<double>;
extern template class Chebyshev<float>;
extern template class Chebyshev<double>;

} // namespace xgpu
