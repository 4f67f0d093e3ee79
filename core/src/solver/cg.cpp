// Conjugate gradients, classic and pipelined, on any LinearOperator: the recurrences as launches of
// kernels/cg.kernel and kernels/pipecg.kernel between the operator's products, every scalar on the
// device, the loop and its deferred checks in krylov.cpp.
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
// say, else wherever the operator offers it (PoCL, 2-D Poisson 1024^2 f64, classic CG under load:
// 6.9-7.7 ms an iteration fused against 8.1-8.7 unfused; the matrix-free stencil 3.8 against
// 4.8-5.1).
template <class T> bool fuse_dots(const OperatorRef<T>& a, const SolverOptions<T>& o) {
    return a.fuses() && o.fused_dots.value_or(true);
}

template <class T>
SolverReport classic(const OperatorRef<T>& a, Prepared<T>& p, Array<T>& x, const SolverOptions<T>& o) {
    SolverReport rep;
    rep.method = "cg";
    const Context& ctx = p.b.context();
    const std::size_t n = p.b.size();
    const Precond kind = precond_kind(o.preconditioner);
    const Solve<T> s(ctx, "cg.kernel", n, kind);
    FormTrial<T> trial(a, s.queue(), o);
    // r, p (and z where there is a preconditioner; without one z is r) and two blocks of
    // partial sums (p.q; r.z and r.r) in one workspace.
    const Workspace<T> ws(ctx, n, kind == Precond::none ? 3 : 4, s.groups(), 2);
    Vectors at;
    at.r = ws.offset(0);
    at.p = ws.offset(1);
    at.q = ws.offset(2);
    at.z = kind == Precond::none ? at.r : ws.offset(3);
    at.sums[0] = ws.block(0);
    at.sums[1] = ws.block(1);
    Array<T> r = ws.vector(0), d = ws.vector(1), q = ws.vector(2), z = kind == Precond::none ? r : ws.vector(3);
    Array<T> pq = ws.block_row(0, 0);
    const Array<T> rz = ws.block_row(1, 0);
    const Buffer dinv = kind == Precond::jacobi ? o.preconditioner.inverse_diagonal().buffer() : s.dummy();
    const Buffer& wsb = ws.buffer();

    bool fused = fuse_dots(a, o);
    Method<T> m;
    m.scratch = q;
    m.start = [&] { // r = b - A x, z = M r, p = z; rho = r.z
        a.apply(p.x, q);
        s.launch("xgpu_cg_init", s.partial(0), p.b.buffer(), wsb, at, dinv);
        if (kind == Precond::external) {
            o.preconditioner.apply(r, z);
            d.assign(z);
            s.launch("xgpu_krylov_dot", s.partial_sums(0), r, z);
        }
        s.gather(0, 3, Slot::rho, Slot::rr, Slot::bb);
    };
    m.step = [&](std::int64_t it) {
        // q = A p with p.q (fused into the product where the operator offers it; it may decline:
        // then never again, unless the trial changes the operator's form).
        if (trial.before(it)) fused = fuse_dots(a, o);
        fused = fused && a.apply_dot(d, q, pq);
        rep.fused_dot = fused;
        if (!fused) {
            a.apply(d, q);
            s.launch("xgpu_krylov_dot", pq, d, q);
        }
        trial.after(it);
        // alpha = rho / p.q; x += alpha p; r -= alpha q; z = M r (Jacobi); r.z and r.r
        s.launch("xgpu_cg_update", wsb, at, p.x.buffer(), dinv, it);
        if (kind == Precond::external) {
            o.preconditioner.apply(r, z);
            s.launch("xgpu_krylov_dot", rz, r, z);
        }
        // the convergence test; beta = r.z / rho; p = z + beta p
        s.launch("xgpu_cg_direction", wsb, at, T(threshold(o, rep.rhs_norm)), it);
    };
    run(s, a, p, x, o, m, rep);
    // Counted per iteration: p.q (2 vectors, none where the operator fuses it into its product),
    // the update (x, p, r, q read; x, r written; with Jacobi the inverse diagonal read and z
    // written), the direction (z or r, p read; p written).
    const double vectors = (kind == Precond::jacobi ? 13 : 11) - (rep.fused_dot ? 2 : 0);
    trial.report(rep);
    count_traffic(a, vectors * double(n) * sizeof(T), rep);
    return rep;
}

template <class T>
SolverReport chronopoulos_gear(const OperatorRef<T>& a, Prepared<T>& p, Array<T>& x, const SolverOptions<T>& o) {
    SolverReport rep;
    rep.method = "pipelined cg";
    const Context& ctx = p.b.context();
    const std::size_t n = p.b.size();
    const Precond kind = precond_kind(o.preconditioner);
    const Solve<T> s(ctx, "pipecg.kernel", n, kind);
    FormTrial<T> trial(a, s.queue(), o);
    // r, w, s, p (and u where there is a preconditioner; without one u is r) and the two blocks of
    // partial sums the iterations pass on, in one buffer (krylov.hpp's Workspace says why).
    const Workspace<T> ws(ctx, n, kind == Precond::none ? 4 : 5, s.groups(), 2);
    Vectors at;
    at.r = ws.offset(0);
    at.w = ws.offset(1);
    at.s = ws.offset(2);
    at.p = ws.offset(3);
    at.u = kind == Precond::none ? at.r : ws.offset(4);
    at.sums[0] = ws.block(0);
    at.sums[1] = ws.block(1);
    Array<T> r = ws.vector(0), w = ws.vector(1); // s and p: the update's alone
    Array<T> u = kind == Precond::none ? r : ws.vector(4);
    const Buffer dinv = kind == Precond::jacobi ? o.preconditioner.inverse_diagonal().buffer() : s.dummy();
    const Buffer& wsb = ws.buffer();

    // The update writes r.u and r.r; w.u comes with w = A u where the operator fuses it (not after
    // an external preconditioner, whose u the update does not know yet).
    bool fused = fuse_dots(a, o) && kind != Precond::external;
    const Array<T> wu[2] = {ws.block_row(0, 1), ws.block_row(1, 1)};
    Method<T> m;
    m.scratch = w;
    m.lag = 1;
    m.recurrent_breakdown = true;
    m.start = [&] { // r = b - A x, u = M r
        a.apply(p.x, w);
        s.launch("xgpu_pipecg_residual", s.partial(1), p.b.buffer(), w, r, u, dinv);
        if (kind == Precond::external) o.preconditioner.apply(r, u);
        s.gather(1, 2, Slot::rr, Slot::bb);
    };
    m.prime = [&] { // w = A u; r.u, w.u, r.r into sums[0], what iteration 1 reads
        a.apply(u, w);
        s.launch("xgpu_cgcg_dots", wsb, at, std::int64_t(0));
    };
    m.step = [&](std::int64_t it) {
        // The test; p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = M r; r.u, r.r
        s.launch("xgpu_cgcg_update", wsb, at, p.x.buffer(), dinv, T(threshold(o, rep.rhs_norm)), it);
        if (kind == Precond::external) o.preconditioner.apply(r, u);
        // w = A u with w.u (fused into the product where the operator offers it)
        Array<T> row = wu[it & 1];
        if (trial.before(it)) fused = fuse_dots(a, o) && kind != Precond::external;
        fused = fused && a.apply_dot(u, w, row);
        rep.fused_dot = fused;
        if (!fused) {
            a.apply(u, w);
            s.launch("xgpu_cgcg_dots", wsb, at, it);
        }
        trial.after(it);
    };
    run(s, a, p, x, o, m, rep);
    // Counted per iteration: the update reads u (or r), p, w, s, x, r and writes p, s, x, r (with
    // Jacobi it also reads the inverse diagonal and writes u); the dot products, unless fused into
    // the product, read r, w (and u).
    const double vectors =
        (kind == Precond::jacobi ? 14 : 11) - (rep.fused_dot ? (kind == Precond::jacobi ? 3 : 2) : 0);
    trial.report(rep);
    count_traffic(a, vectors * double(n) * sizeof(T), rep);
    return rep;
}

template <class T>
SolverReport ghysels_vanroose(const OperatorRef<T>& a, Prepared<T>& p, Array<T>& x, const SolverOptions<T>& o) {
    SolverReport rep;
    rep.method = "pipelined cg (ghysels-vanroose)";
    const Context& ctx = p.b.context();
    const std::size_t n = p.b.size();
    const Precond kind = precond_kind(o.preconditioner);
    const bool none = kind == Precond::none;
    const Solve<T> s(ctx, "pipecg.kernel", n, kind);
    FormTrial<T> trial(a, s.queue(), o);
    const auto vec = [&] { return empty<T>(ctx, {n}); };
    const auto zero = [&] { return zeros<T>(ctx, {n}); };
    // Without a preconditioner u is r, m is w and q is s.
    Array<T> r = vec(), w = vec(), nv = vec(), z = zero(), sv = zero(), d = zero();
    Array<T> u = none ? r : vec(), m = none ? w : vec(), q = none ? sv : zero();
    const Buffer dinv = kind == Precond::jacobi ? o.preconditioner.inverse_diagonal().buffer() : s.dummy();
    const auto& M = o.preconditioner;
    const auto buf = [](const Array<T>& v) { return v.buffer(); };

    // r = b - A x and u = M r, with the partial sums of r.r and b.b in partial(2); then (dots) the
    // partial sums of r.u, w.u and r.r that the next update reads, and m = M w.
    const auto residuals = [&] {
        a.apply(p.x, nv);
        s.launch("xgpu_pipecg_residual", s.partial(2), buf(p.b), nv, r, u, dinv);
        if (kind == Precond::external) M.apply(r, u);
    };
    const auto dots = [&](int parity) {
        s.launch("xgpu_pipecg_dots", s.partial(parity), buf(r), buf(u), buf(w), buf(m), dinv);
        if (kind == Precond::external) M.apply(w, m);
    };
    const int mrep = o.replacement_interval;
    Method<T> method;
    method.scratch = nv;
    method.lag = 1;
    method.recurrent_breakdown = true;
    method.start = [&] {
        residuals();
        s.gather(2, 2, Slot::rr, Slot::bb);
    };
    method.prime = [&] {
        a.apply(u, w);
        dots(1);
    };
    method.step = [&](std::int64_t it) {
        trial.before(it);
        a.apply(m, nv);
        trial.after(it);
        s.launch("xgpu_pipecg_update", s.partial(int(it & 1)), s.partial(int((it + 1) & 1)), buf(p.x), buf(r), buf(u),
                 buf(w), buf(m), buf(nv), buf(z), buf(q), buf(sv), buf(d), dinv, T(threshold(o, rep.rhs_norm)), it);
        if (kind == Precond::external) M.apply(w, m);
        if (mrep > 0 && it % mrep == 0) { // residual replacement: every recurrence from its definition
            residuals();
            a.apply(u, w);
            a.apply(d, sv);
            if (kind == Precond::jacobi) s.launch("xgpu_pipecg_precond", buf(sv), buf(q), dinv);
            if (kind == Precond::external) M.apply(sv, q);
            a.apply(q, z);
            dots(int((it + 1) & 1));
        }
    };
    run(s, a, p, x, o, method, rep);
    // Counted per iteration: the update reads n, z, w, s, r, p, x and writes z, s, p, x, r, w; with
    // Jacobi it also reads m, q, u and the inverse diagonal and writes q, u, m.
    const double vectors = kind == Precond::jacobi ? 20 : 13;
    trial.report(rep);
    count_traffic(a, vectors * double(n) * sizeof(T), rep);
    return rep;
}

} // namespace

template <class T> SolverReport cg(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o) {
    CgVariant variant = o.variant;
    if (variant == CgVariant::automatic) // an empty b has no device to ask; prepare() checks it
        variant =
            b.empty() ? CgVariant::classic : automatic_variant(std::uint64_t(b.size()), b.context().device().type());
    const char* method = variant == CgVariant::classic ? "cg" : "pipelined cg";
    Prepared<T> p = krylov::prepare(method, a, b, x, o);
    switch (variant) {
    case CgVariant::pipelined: return chronopoulos_gear(a, p, x, o);
    case CgVariant::ghysels_vanroose: return ghysels_vanroose(a, p, x, o);
    default: return classic(a, p, x, o);
    }
}

template SolverReport cg(const OperatorRef<float>&, const Array<float>&, Array<float>&, const SolverOptions<float>&);
template SolverReport cg(const OperatorRef<double>&, const Array<double>&, Array<double>&,
                         const SolverOptions<double>&);

} // namespace xgpu::detail
