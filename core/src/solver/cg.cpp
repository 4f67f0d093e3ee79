// Conjugate gradients, classic and pipelined, on any LinearOperator: each variant is a
// krylov::Method, its recurrences as launches of kernels/cg.kernel and kernels/pipecg.kernel
// between the operator's products, every scalar on the device; krylov::solve runs the loop with
// its deferred checks.
//
// Kernels per iteration beside the operator's product: classic 3 (p.q; the update of x, r and z
// with r.z and r.r; the new direction), pipelined (Chronopoulos-Gear) 2 (the update with u = M r;
// the three dot products), Ghysels-Vanroose 1 (everything); a preconditioner that is not Jacobi
// adds its own application (and, classic, one more dot product). Where the operator fuses a dot
// product into its product (FusedDotOperator), classic runs 2 beside it (p.q comes with q = A p)
// and pipelined 1 (the update sums r.u and r.r, w.u comes with w = A u).
#include <fmt/format.h>

#include "krylov.hpp"

namespace xgpu {

CgVariant automatic_variant(std::uint64_t n, DeviceType device) {
    return device != DeviceType::cpu && n <= (std::uint64_t(1) << 19) ? CgVariant::pipelined : CgVariant::classic;
}

} // namespace xgpu

namespace xgpu::detail {

namespace {

using namespace krylov;

// Whether to take a dot product from the operator's product (FusedDotOperator): as the options
// say, else wherever the operator offers it (`poisson --2d 1024 --solver cg --fuse on|off`
// on PoCL decides the default).
template <class T> bool fuse_dots(const Setup<T>& k) {
    return k.a.fuses() && k.o.fused_dots.value_or(true);
}

// Classic (Hestenes-Stiefel) CG. Its vectors r, p, q, z = M r and the blocks of partial sums
// (p.q; r.z and r.r) lie in one workspace.
template <class T> class Classic final : public Method<T> {
public:
    static constexpr const char* name = "cg";
    static constexpr const char* program = "cg.kernel";

    explicit Classic(Setup<T>& k)
        : k_(k), ws_(k, {&Vectors::r, &Vectors::p, &Vectors::q}, &Vectors::z), r_(ws_[&Vectors::r]),
          p_(ws_[&Vectors::p]), q_(ws_[&Vectors::q]), z_(ws_[&Vectors::z]), pq_(ws_.block_row(0, 0)),
          rz_(ws_.block_row(1, 0)), dinv_(k.inverse_diagonal()), fused_(fuse_dots(k)) {}

    void start() override { // r = b - A x, z = M r, p = z; rho = r.z
        const Solve<T>& s = k_.s;
        k_.a.apply(k_.p.x, q_);
        s.launch("xgpu_cg_init", s.partial(0), k_.p.b.buffer(), ws_.buffer(), ws_.at(), dinv_);
        if (k_.kind == Precond::external) {
            k_.o.preconditioner.apply(r_, z_);
            p_.assign(z_);
            s.launch("xgpu_krylov_dot", s.partial_sums(0), r_, z_);
        }
        s.gather(0, 3, Slot::rho, Slot::rr, Slot::bb);
    }

    void step(std::int64_t it) override {
        const Solve<T>& s = k_.s;
        // q = A p with p.q (fused into the product where the operator offers it; it may decline:
        // then never again, unless the trial changes the operator's form).
        if (k_.trial.before(it)) fused_ = fuse_dots(k_);
        fused_ = fused_ && k_.a.apply_dot(p_, q_, pq_);
        k_.report.fused_dot = fused_;
        if (!fused_) {
            k_.a.apply(p_, q_);
            s.launch("xgpu_krylov_dot", pq_, p_, q_);
        }
        k_.trial.after(it);
        s.sum(ws_.buffer(), ws_.block(0), 1);
        // alpha = rho / p.q; x += alpha p; r -= alpha q; z = M r (Jacobi); r.z and r.r
        s.launch("xgpu_cg_update", ws_.buffer(), ws_.at(), k_.p.x.buffer(), dinv_, it);
        if (k_.kind == Precond::external) {
            k_.o.preconditioner.apply(r_, z_);
            s.launch("xgpu_krylov_dot", rz_, r_, z_);
        }
        s.sum(ws_.buffer(), ws_.block(1), 2);
        // the convergence test; beta = r.z / rho; p = z + beta p
        s.launch("xgpu_cg_direction", ws_.buffer(), ws_.at(), T(k_.tolerance2()), it);
    }

    // p.q (2 vectors, none where the operator fuses it into its product), the update (x, p, r, q
    // read; x, r written; with Jacobi the inverse diagonal read and z written), the direction (z
    // or r, p read; p written).
    double vectors_per_iteration() const override {
        return (k_.kind == Precond::jacobi ? 13 : 11) - (k_.report.fused_dot ? 2 : 0);
    }
    Array<T> scratch() const override { return q_; }

private:
    Setup<T>& k_;
    Workspace<T> ws_;
    Array<T> r_, p_, q_, z_, pq_, rz_;
    Buffer dinv_;
    bool fused_;
};

// Pipelined CG after Chronopoulos and Gear: one update and (unless fused into the product) one
// kernel of three dot products an iteration, r.u and r.r from the update, w.u from w = A u. Its
// vectors r, w, s, p, u = M r and the two blocks of partial sums that the iterations pass on lie
// in one workspace.
template <class T> class ChronopoulosGear final : public Method<T> {
public:
    static constexpr const char* name = "pipelined cg";
    static constexpr const char* program = "pipecg.kernel";

    explicit ChronopoulosGear(Setup<T>& k)
        : k_(k), ws_(k, {&Vectors::r, &Vectors::w, &Vectors::s, &Vectors::p}, &Vectors::u), r_(ws_[&Vectors::r]),
          w_(ws_[&Vectors::w]), u_(ws_[&Vectors::u]), wu_{ws_.block_row(0, 1), ws_.block_row(1, 1)},
          dinv_(k.inverse_diagonal()), fused_(fuses()) {}

    void start() override { // r = b - A x, u = M r
        const Solve<T>& s = k_.s;
        k_.a.apply(k_.p.x, w_);
        s.launch("xgpu_pipecg_residual", s.partial(1), k_.p.b.buffer(), w_, r_, u_, dinv_);
        if (k_.kind == Precond::external) k_.o.preconditioner.apply(r_, u_);
        s.gather(1, 2, Slot::rr, Slot::bb);
    }
    void prime() override { // w = A u; r.u, w.u, r.r into the sums iteration 1 reads
        k_.a.apply(u_, w_);
        k_.s.launch("xgpu_cgcg_dots", ws_.buffer(), ws_.at(), std::int64_t(0));
        k_.s.sum(ws_.buffer(), ws_.block(0), 3);
    }

    void step(std::int64_t it) override {
        const Solve<T>& s = k_.s;
        // The test; p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = M r; r.u, r.r
        s.launch("xgpu_cgcg_update", ws_.buffer(), ws_.at(), k_.p.x.buffer(), dinv_, T(k_.tolerance2()), it);
        if (k_.kind == Precond::external) k_.o.preconditioner.apply(r_, u_);
        // w = A u with w.u (fused into the product where the operator offers it)
        if (k_.trial.before(it)) fused_ = fuses();
        fused_ = fused_ && k_.a.apply_dot(u_, w_, wu_[it & 1]);
        k_.report.fused_dot = fused_;
        if (!fused_) {
            k_.a.apply(u_, w_);
            s.launch("xgpu_cgcg_dots", ws_.buffer(), ws_.at(), it);
        }
        k_.trial.after(it);
        // r.u, w.u and r.r over every process, for the next update
        s.sum(ws_.buffer(), ws_.block(std::uint64_t(it & 1)), 3);
    }

    // The update reads u (or r), p, w, s, x, r and writes p, s, x, r (with Jacobi it also reads the
    // inverse diagonal and writes u); the dot products, unless fused into the product, read r, w
    // (and u).
    double vectors_per_iteration() const override {
        const bool jacobi = k_.kind == Precond::jacobi;
        return (jacobi ? 14 : 11) - (k_.report.fused_dot ? (jacobi ? 3 : 2) : 0);
    }
    Array<T> scratch() const override { return w_; }
    int lag() const override { return 1; }
    bool recurrent_breakdown() const override { return true; }

private:
    // w.u comes with w = A u where the operator fuses it, but not after an external
    // preconditioner, whose u the update does not know yet.
    bool fuses() const { return fuse_dots(k_) && k_.kind != Precond::external; }

    Setup<T>& k_;
    Workspace<T> ws_;
    Array<T> r_, w_, u_, wu_[2];
    Buffer dinv_;
    bool fused_;
};

// Pipelined CG after Ghysels and Vanroose: one kernel an iteration beside the product, which
// overlaps it; every `replacement_interval` iterations the recurrences are recomputed from their
// definitions against drift. Without a preconditioner u is r, m is w and q is s.
template <class T> class GhyselsVanroose final : public Method<T> {
public:
    static constexpr const char* name = "pipelined cg (ghysels-vanroose)";
    static constexpr const char* program = "pipecg.kernel";

    explicit GhyselsVanroose(Setup<T>& k)
        : k_(k), dinv_(k.inverse_diagonal()), r(k.vector()), w(k.vector()), nv(k.vector()), z(k.zero_vector()),
          sv(k.zero_vector()), d(k.zero_vector()), u(k.preconditioned(r)), m(k.preconditioned(w)),
          q(k.kind == Precond::none ? sv : k.zero_vector()) {}

    void start() override {
        residuals();
        k_.s.gather(2, 2, Slot::rr, Slot::bb);
    }
    void prime() override {
        k_.a.apply(u, w);
        dots(1);
        k_.s.begin_sum(k_.s.partial(1), 0, 3);
    }

    void step(std::int64_t it) override {
        const Solve<T>& s = k_.s;
        const OperatorRef<T>& a = k_.a;
        // Over several processes, the sum of the dot products this update reads runs while the
        // product does (the one sum across processes an iteration).
        s.send_sum();
        k_.trial.before(it);
        a.apply(m, nv);
        k_.trial.after(it);
        s.end_sum();
        s.launch("xgpu_pipecg_update", s.partial(int(it & 1)), s.partial(int((it + 1) & 1)), k_.p.x.buffer(),
                 r.buffer(), u.buffer(), w.buffer(), m.buffer(), nv.buffer(), z.buffer(), q.buffer(), sv.buffer(),
                 d.buffer(), dinv_, T(k_.tolerance2()), it);
        if (k_.kind == Precond::external) k_.o.preconditioner.apply(w, m);
        const int replace = k_.o.replacement_interval;
        if (replace > 0 && it % replace == 0) { // residual replacement: every recurrence from its definition
            residuals();
            a.apply(u, w);
            a.apply(d, sv);
            if (k_.kind == Precond::jacobi) s.launch("xgpu_pipecg_precond", sv.buffer(), q.buffer(), dinv_);
            if (k_.kind == Precond::external) k_.o.preconditioner.apply(sv, q);
            a.apply(q, z);
            dots(int((it + 1) & 1));
        }
        s.begin_sum(s.partial(int((it + 1) & 1)), 0, 3);
    }

    // The update reads n, z, w, s, r, p, x and writes z, s, p, x, r, w; with Jacobi it also reads
    // m, q, u and the inverse diagonal and writes q, u, m.
    double vectors_per_iteration() const override { return k_.kind == Precond::jacobi ? 20 : 13; }
    Array<T> scratch() const override { return nv; }
    int lag() const override { return 1; }
    bool recurrent_breakdown() const override { return true; }

private:
    // r = b - A x and u = M r, with the partial sums of r.r and b.b in partial(2).
    void residuals() {
        k_.a.apply(k_.p.x, nv);
        k_.s.launch("xgpu_pipecg_residual", k_.s.partial(2), k_.p.b.buffer(), nv, r, u, dinv_);
        if (k_.kind == Precond::external) k_.o.preconditioner.apply(r, u);
    }
    // The partial sums of r.u, w.u and r.r that the next update reads, and m = M w.
    void dots(int parity) {
        k_.s.launch("xgpu_pipecg_dots", k_.s.partial(parity), r.buffer(), u.buffer(), w.buffer(), m.buffer(), dinv_);
        if (k_.kind == Precond::external) k_.o.preconditioner.apply(w, m);
    }

    Setup<T>& k_;
    Buffer dinv_;
    Array<T> r, w, nv, z, sv, d, u, m, q;
};

} // namespace

template <class T> SolverReport cg(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o) {
    krylov::agree_on_options("cg", a.global, o);
    CgVariant variant = o.variant;
    if (variant == CgVariant::automatic) { // an empty b has no device to ask; solve() refuses it
        double rows = double(b.size()), gpus = !b.empty() && b.context().device().type() != DeviceType::cpu;
        if (a.global) { // every process must pick the same: by the global rows, GPUs only if all are
            double v[2] = {rows, gpus};
            a.global->sum(v, 2);
            rows = v[0];
            gpus = v[1] == a.global->processes();
        }
        variant = b.empty() && !a.global
                      ? CgVariant::classic
                      : automatic_variant(std::uint64_t(rows), gpus ? DeviceType::gpu : DeviceType::cpu);
    }
    switch (variant) {
    case CgVariant::pipelined: return solve<ChronopoulosGear<T>>(a, b, x, o);
    case CgVariant::ghysels_vanroose: return solve<GhyselsVanroose<T>>(a, b, x, o);
    default: return solve<Classic<T>>(a, b, x, o);
    }
}

template SolverReport cg(const OperatorRef<float>&, const Array<float>&, Array<float>&, const SolverOptions<float>&);
template SolverReport cg(const OperatorRef<double>&, const Array<double>&, Array<double>&,
                         const SolverOptions<double>&);

} // namespace xgpu::detail
