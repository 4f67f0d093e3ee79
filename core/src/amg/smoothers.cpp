// Each level's smoother, set up once its operator is known: rho(D^-1 A) (the preconditioner
// layer's Lanczos estimate), L1-Jacobi's row sums, or Chebyshev's recurrence coefficients, which
// the cycle applies with kernels/amg.kernel's fused sweeps; or the user's (SmootherFactory).
#include <algorithm>

#include "../solver/spectral.hpp"
#include "hierarchy.hpp"
#include "xgpu/preconditioner.hpp"

namespace xgpu::amg::detail {

template <class S> double spectral_radius(const sparse::Csr<S>& a, int steps) {
    const Context& ctx = a.context();
    const std::size_t n = std::size_t(a.rows());
    const Array<S> d = a.diagonal();
    // A start with every frequency in it, the same on every run and device.
    Array<S> u = empty<S>(ctx, {n});
    amg_kernel<S>(ctx, "xgpu_amg_start").launch(ctx.current_queue(), rows_grid(ctx, n), u, std::uint64_t(n));
    // Rows without a diagonal (a coarse level's zero rows and columns) take no part: 0 from the
    // start, they stay 0 (outside the D norm they would grow unchecked).
    u = where(d == S(0), S(0), u);
    xgpu::detail::OperatorRef<S> op;
    op.rows = op.cols = a.rows();
    op.forms.push_back({"csr", [&a](const Array<S>& x, Array<S>& y) { sparse::spmv(a, x, y); }, {}});
    return xgpu::detail::lanczos_max(op, u, d, inverse_or_zero(d, 1), steps);
}

template <class S> void setup_smoother(Level<S>& L, const Options& o, const SmootherFactory<S>& own, bool coarsest) {
    const Context& ctx = L.a.context();
    const Queue q = ctx.current_queue();
    const auto n = std::size_t(L.a.rows());
    if (own) {
        L.own = own(L.a);
        if (L.own.none() || L.own.rows() != L.a.rows() || L.own.cols() != L.a.rows())
            throw ShapeError(fmt::format("xgpu: amg: the smoother made for a level of {} rows is {}", L.a.rows(),
                                         L.own.none() ? "empty" : fmt::format("{} x {}", L.own.rows(), L.own.cols())));
        if (L.own.context().impl() && !(L.own.context() == ctx))
            throw InvalidArgument("xgpu: amg: the smoother made for a level belongs to another context");
        const int steps = coarsest ? coarse_sweeps : std::max(o.presmooth, o.postsmooth);
        L.t = steps > 1 ? empty<S>(ctx, {n}) : Array<S>();
        L.d = empty<S>(ctx, {n});
        return;
    }
    // Where the sparse layer's own product for this level is not a work-item a row (long rows,
    // as on 3-D coarse levels, or another format that the environment or the tuning database
    // chose), the smoothers take A x from it: it reads long rows faster than a work-item can.
    L.ax_apart = !L.a.fuses_dot(sparse::Format::automatic);
    // The other half of the iterate, where a smoothing takes more than one step.
    const int steps = (o.smoother == Smoother::chebyshev ? o.chebyshev_degree : 1) *
                      (coarsest ? coarse_sweeps : std::max(o.presmooth, o.postsmooth));
    L.t = steps > 1 ? empty<S>(ctx, {n}) : Array<S>();
    if (o.smoother == Smoother::l1_jacobi) {
        L.l1 = empty<S>(ctx, {n});
        amg_kernel<S>(ctx, "xgpu_amg_l1")
            .launch(q, rows_grid(ctx, n), L.a.row_ptr(), L.a.values(), L.l1, std::uint64_t(n));
        return;
    }
    if (L.rho == 0) L.rho = spectral_radius(L.a, o.lanczos_steps);
    if (o.smoother == Smoother::jacobi) return;
    // Chebyshev on D^-1 A, over the preconditioner's interval (ChebyshevOptions' bounds) and by
    // its recurrence: each step's coefficients.
    L.d = empty<S>(ctx, {n});
    const ChebyshevOptions bounds;
    const double upper = bounds.safety * L.rho, lower = upper / bounds.lower_ratio;
    auto c = xgpu::detail::chebyshev_steps(lower, upper, o.chebyshev_degree);
    L.c_d = std::move(c.c_d);
    L.c_r = std::move(c.c_r);
}

template double spectral_radius(const sparse::Csr<float>&, int);
template double spectral_radius(const sparse::Csr<double>&, int);
template void setup_smoother(Level<float>&, const Options&, const SmootherFactory<float>&, bool);
template void setup_smoother(Level<double>&, const Options&, const SmootherFactory<double>&, bool);

} // namespace xgpu::amg::detail
