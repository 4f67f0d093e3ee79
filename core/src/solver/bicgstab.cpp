// BiCGStab on any square LinearOperator, right-preconditioned: a krylov::Method, its recurrence as
// launches of kernels/bicgstab.kernel between the operator's two products, every scalar on the
// device; krylov::solve runs the loop with its deferred checks. Kernels per iteration beside the
// two products: 5 (the direction, rhat.v, the half step, t.s, t.t and s.s, the step); a
// preconditioner that is not Jacobi adds its two applications.
#include "krylov.hpp"

namespace xgpu::detail {

namespace {

using namespace krylov;

// Without a preconditioner phat is p and shat is s.
template <class T> class BiCGStab final : public Method<T> {
public:
    static constexpr const char* name = "bicgstab";
    static constexpr const char* program = "bicgstab.kernel";

    explicit BiCGStab(Setup<T>& k)
        : k_(k), r(k.vector()), rhat(k.vector()), d(k.zero_vector()), v(k.zero_vector()), sv(k.vector()), t(k.vector()),
          phat(k.preconditioned(d)), shat(k.preconditioned(sv)), dinv(k.inverse_diagonal()) {}

    void start() override { // r = rhat = b - A x
        const Solve<T>& s = k_.s;
        k_.a.apply(k_.p.x, t);
        s.launch("xgpu_bicgstab_init", s.partial(0), k_.p.b.buffer(), t.buffer(), r.buffer(), rhat.buffer());
        s.gather(0, 3, Slot::beta, Slot::rr, Slot::bb);
    }

    void step(std::int64_t it) override {
        const Solve<T>& s = k_.s;
        const OperatorRef<T>& a = k_.a;
        const auto& M = k_.o.preconditioner;
        const T thr = T(k_.tolerance2());
        // the test; p = r + beta (p - omega v); phat = M p
        s.launch("xgpu_bicgstab_direction", s.partial(0), r.buffer(), d.buffer(), v.buffer(), phat.buffer(), dinv, thr,
                 it);
        if (k_.kind == Precond::external) M.apply(d, phat);
        // v = A phat; alpha = rho / rhat.v; s = r - alpha v; shat = M s
        a.apply(phat, v);
        s.launch("xgpu_krylov_dot", s.partial_sums(1), rhat, v);
        s.sum(s.partial(1), 0, 1);
        s.launch("xgpu_bicgstab_half", s.partial(1), r.buffer(), v.buffer(), sv.buffer(), shat.buffer(), dinv, it);
        if (k_.kind == Precond::external) M.apply(sv, shat);
        // t = A shat; omega = t.s / t.t; x += alpha phat + omega shat; r = s - omega t
        a.apply(shat, t);
        s.launch("xgpu_bicgstab_dots", s.partial(2), t.buffer(), sv.buffer());
        s.sum(s.partial(2), 0, 3);
        s.launch("xgpu_bicgstab_step", s.partial(2), s.partial(0), k_.p.x.buffer(), r.buffer(), rhat.buffer(),
                 phat.buffer(), shat.buffer(), sv.buffer(), t.buffer(), thr, it);
        s.sum(s.partial(0), 0, 2);
    }

    // direction (r, p, v read; p written), rhat.v (2), half (r, v read; s written), t.s (2), step
    // (x, p, s, t, rhat read; x, r written); with Jacobi also the inverse diagonal twice, phat and
    // shat written and read once more each.
    double vectors_per_iteration() const override { return k_.kind == Precond::jacobi ? 24 : 18; }
    Array<T> scratch() const override { return t; }
    int lag() const override { return 1; }

private:
    Setup<T>& k_;
    Array<T> r, rhat, d, v, sv, t, phat, shat;
    Buffer dinv;
};

} // namespace

template <class T>
SolverReport bicgstab(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o) {
    krylov::agree_on_options("bicgstab", a.global, o);
    return krylov::solve<BiCGStab<T>>(a, b, x, o);
}

template SolverReport bicgstab(const OperatorRef<float>&, const Array<float>&, Array<float>&,
                               const SolverOptions<float>&);
template SolverReport bicgstab(const OperatorRef<double>&, const Array<double>&, Array<double>&,
                               const SolverOptions<double>&);

} // namespace xgpu::detail
