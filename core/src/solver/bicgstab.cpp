// BiCGStab on any square LinearOperator, right-preconditioned: the recurrence as launches of
// kernels/bicgstab.kernel between the operator's two products, every scalar on the device, the
// loop and its deferred checks in krylov.cpp. Kernels per iteration beside the two products: 5
// (the direction, rhat.v, the half step, t.s, t.t and s.s, the step); a preconditioner that is
// not Jacobi adds its two applications.
#include "krylov.hpp"

namespace xgpu::detail {

template <class T>
SolverReport bicgstab(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o) {
    using namespace krylov;
    Prepared<T> p = prepare("bicgstab", a, b, x, o);
    SolverReport rep;
    rep.method = "bicgstab";
    const Context& ctx = p.b.context();
    const std::size_t n = p.b.size();
    const Precond kind = precond_kind(o.preconditioner);
    const bool none = kind == Precond::none;
    const Solve<T> s(ctx, "bicgstab.kernel", n, kind);
    const auto vec = [&] { return empty<T>(ctx, {n}); };
    // Without a preconditioner phat is p and shat is s.
    Array<T> r = vec(), rhat = vec(), d = zeros<T>(ctx, {n}), v = zeros<T>(ctx, {n}), sv = vec(), t = vec();
    Array<T> phat = none ? d : vec(), shat = none ? sv : vec();
    const Buffer dinv = kind == Precond::jacobi ? o.preconditioner.inverse_diagonal().buffer() : s.dummy();
    const auto& M = o.preconditioner;
    const auto buf = [](const Array<T>& a) { return a.buffer(); };

    Method<T> m;
    m.scratch = t;
    m.lag = 1;
    m.start = [&] {
        a.apply(p.x, t);
        s.launch("xgpu_bicgstab_init", s.partial(0), buf(p.b), buf(t), buf(r), buf(rhat));
        s.gather(0, 3, Slot::beta, Slot::rr, Slot::bb);
    };
    m.step = [&](std::int64_t it) {
        const T thr = T(threshold(o, rep.rhs_norm));
        s.launch("xgpu_bicgstab_direction", s.partial(0), buf(r), buf(d), buf(v), buf(phat), dinv, thr, it);
        if (kind == Precond::external) M.apply(d, phat);
        a.apply(phat, v);
        s.launch("xgpu_krylov_dot", s.partial_sums(1), rhat, v);
        s.launch("xgpu_bicgstab_half", s.partial(1), buf(r), buf(v), buf(sv), buf(shat), dinv, it);
        if (kind == Precond::external) M.apply(sv, shat);
        a.apply(shat, t);
        s.launch("xgpu_bicgstab_dots", s.partial(2), buf(t), buf(sv));
        s.launch("xgpu_bicgstab_step", s.partial(2), s.partial(0), buf(p.x), buf(r), buf(rhat), buf(phat), buf(shat),
                 buf(sv), buf(t), thr, it);
    };
    run(s, a, p, x, o, m, rep);
    // Counted per iteration: direction (r, p, v read; p written), rhat.v (2), half (r, v read; s
    // written), t.s (2), step (x, p, s, t, rhat read; x, r written); with Jacobi also the inverse
    // diagonal twice, phat and shat written and read once more each.
    const double vectors = kind == Precond::jacobi ? 24 : 18;
    count_traffic(a, vectors * double(n) * sizeof(T), rep);
    return rep;
}

template SolverReport bicgstab(const OperatorRef<float>&, const Array<float>&, Array<float>&,
                               const SolverOptions<float>&);
template SolverReport bicgstab(const OperatorRef<double>&, const Array<double>&, Array<double>&,
                               const SolverOptions<double>&);

} // namespace xgpu::detail
