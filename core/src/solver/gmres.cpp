// GMRES(m) and FGMRES(m) on any square LinearOperator, right-preconditioned: a krylov::Method
// whose Arnoldi steps are launches of kernels/gmres.kernel around the operator's product, with the
// Hessenberg matrix, its Givens rotations and the least-squares residual on the device; krylov::
// solve runs the loop with its deferred checks (a step's |g_j| is its residual). Orthogonalisation
// is classical Gram-Schmidt with one reorthogonalisation (CGS2): each pass is one read of the basis
// (a pass's dot products fused into one kernel, its subtraction into the next pass's), so a step is
// 4 kernels over the vectors beside the product, 3 one-work-group totals and the one-work-item
// rotation, where modified Gram-Schmidt would cost a reduction per basis vector; two passes keep
// the basis orthogonal to working precision, which one pass of classical Gram-Schmidt does not.
//
// x moves only at the end of a cycle (y = R^-1 g, x += M V y; FGMRES keeps each z_i = M v_i and
// adds Z y), so the solve that stops mid-cycle folds the cycle's columns in after its iterations
// (finish()).
#include <algorithm>

#include "krylov.hpp"

namespace xgpu::detail {

namespace {

using namespace krylov;

// The Hessenberg work's size for restart m (kernels/gmres.kernel's GH_ layout): H, the rotations'
// cosines and sines, g, y, the projection's coefficients, |w|.
constexpr std::size_t hessenberg_values(std::size_t m) {
    return (m + 1) * m + 2 * m + (m + 1) + m + (m + 1) + 1;
}

template <class T> class Gmres : public Method<T> {
public:
    Gmres(Setup<T>& k, bool flexible)
        : k_(k), m_(k.o.restart), stride_((k.n + 63) / 64 * 64), flexible_(flexible && k.kind == Precond::external),
          basis_(zeros<T>(k.s.context(), {std::size_t(m_ + 1) * stride_})), w_(k.vector()),
          z_(k.kind == Precond::none ? Array<T>()
                                     : zeros<T>(k.s.context(), {std::size_t(flexible_ ? m_ : 1) * stride_})),
          h_(zeros<T>(k.s.context(), {hessenberg_values(std::size_t(m_))})),
          dots_(empty<T>(k.s.context(), {std::size_t(m_ + 1) * k.s.groups()})), dinv_(k.inverse_diagonal()) {}

    void start() override { // w = b - A x, with |b|^2 and |w|^2 in the state
        const Solve<T>& s = k_.s;
        k_.a.apply(k_.p.x, w_);
        s.launch("xgpu_gmres_residual", s.partial(0), k_.p.b.buffer(), w_.buffer());
        s.gather(0, 2, Slot::rr, Slot::bb);
    }

    void step(std::int64_t it) override {
        const Solve<T>& s = k_.s;
        const auto j = std::int32_t((it - 1) % m_ + 1); // the column this step adds
        const T thr = T(k_.tolerance2());
        const Buffer V = basis_.buffer(), dots = dots_.buffer(), h = h_.buffer();
        const std::uint64_t stride = stride_, groups = s.groups();
        if (j == 1) { // V_0 = r / |r|, r in w
            s.launch_single("xgpu_krylov_gather", s.partial(0), groups, 1, r2, 0, 0);
            one("xgpu_gmres_begin", h, m_, thr, it);
            s.launch("xgpu_gmres_normalize", V, stride, std::int32_t(0), w_.buffer(), operand_buffer(), dinv_, h, m_);
        }
        // w = A z, z = M V_{j-1}
        const Array<T> v = vector(basis_, j - 1);
        Array<T> z = k_.kind == Precond::none ? v : operand(j - 1);
        if (k_.kind == Precond::external) k_.o.preconditioner.apply(v, z);
        k_.a.apply(z, w_);
        // Two passes of classical Gram-Schmidt, then |w| and the column's rotation.
        s.launch("xgpu_gmres_project", dots, V, stride, j, w_.buffer());
        s.sum(dots, 0, j);
        s.launch_single("xgpu_gmres_coefficients", dots, groups, j, h, m_, 0);
        s.launch("xgpu_gmres_reproject", dots, V, stride, j, w_.buffer(), h, m_);
        s.sum(dots, 0, j);
        s.launch_single("xgpu_gmres_coefficients", dots, groups, j, h, m_, 1);
        s.launch("xgpu_gmres_subtract", dots, V, stride, j, w_.buffer(), h, m_);
        s.sum(dots, 0, 1);
        s.launch_single("xgpu_krylov_gather", dots, groups, 1, w2, 0, 0);
        one("xgpu_gmres_rotate", j, h, m_, thr, it);
        if (j < m_) {
            s.launch("xgpu_gmres_normalize", V, stride, j, w_.buffer(), operand_buffer(), dinv_, h, m_);
            return;
        }
        // The cycle's end: x += M V y, and the new residual into w (the next begin normalises it into V_0).
        fold();
        k_.a.apply(k_.p.x, w_);
        s.launch("xgpu_gmres_residual", s.partial(0), k_.p.b.buffer(), w_.buffer());
        s.sum(s.partial(0), 0, 1);
    }

    // The columns of the cycle that the iterations stopped in.
    bool finish() override {
        if (k_.s.read().flag[columns] == 0) return false;
        fold();
        return true;
    }

    // A step (j the column it adds, m the restart): the basis read 4 times (the two passes, the
    // reorthogonalisation's subtraction and the last), w read 4 times and written 3 times, V_j
    // written (with Jacobi z too, and D^-1 read): averaged over the cycle, j = (m + 1) / 2. The
    // cycle's end reads the basis once more, x and b, and writes x and the residual (over m steps).
    double vectors_per_iteration() const override {
        const double j = (m_ + 1) / 2.0;
        return 4 * j + 8 + (k_.kind == Precond::jacobi ? 2 : 0) + (j + 4) * 2 / m_;
    }
    Array<T> scratch() const override { return w_; }
    bool x_current(std::int64_t it) const override { return it % m_ == 0; }

private:
    static Array<T> vector(const Array<T>& all, std::int64_t i, std::uint64_t stride, std::size_t n) {
        const auto first = std::int64_t(std::uint64_t(i) * stride);
        return all(slice(first, first + std::int64_t(n)));
    }
    Array<T> vector(const Array<T>& all, std::int64_t i) const { return vector(all, i, stride_, k_.n); }
    // Where M V_i goes: FGMRES's Z_i, else the one operand vector.
    Array<T> operand(std::int64_t i) const { return vector(z_, flexible_ ? i : 0); }
    // A kernel of one work-item (the serial steps: the rotations, the triangular solve).
    template <class... Args> void one(std::string_view name, const Args&... args) const {
        k_.s.kernel(name).launch(k_.s.queue(), Grid{1, 1}, k_.s.state(), args...);
    }
    // The state's slots for |w|^2 and |r|^2 (kernels/gmres.kernel's KS_W2 and KS_R2).
    static constexpr std::int32_t w2 = 10, r2 = 11;
    Buffer operand_buffer() const { return k_.kind == Precond::none ? k_.s.dummy() : z_.buffer(); }

    // y = R^-1 g over the columns not yet in x, then x += M V y (FGMRES: x += Z y).
    void fold() {
        const Solve<T>& s = k_.s;
        const Buffer x = k_.p.x.buffer(), h = h_.buffer();
        const std::uint64_t stride = stride_;
        one("xgpu_gmres_solve", h, m_);
        if (flexible_) {
            s.launch("xgpu_gmres_update", x, z_.buffer(), stride, s.dummy(), h, m_, 0, 1);
        } else if (k_.kind != Precond::external) {
            s.launch("xgpu_gmres_update", x, basis_.buffer(), stride, dinv_, h, m_,
                     std::int32_t(k_.kind == Precond::jacobi), 1);
        } else { // u = V y, then x += M u
            const Array<T> u = operand(0);
            s.launch("xgpu_gmres_update", z_.buffer(), basis_.buffer(), stride, s.dummy(), h, m_, 0, 0);
            k_.o.preconditioner.apply(u, w_);
            s.launch("xgpu_gmres_add", x, w_.buffer());
        }
    }

    Setup<T>& k_;
    std::int32_t m_;
    std::uint64_t stride_;
    bool flexible_;
    Array<T> basis_, w_, z_, h_, dots_;
    Buffer dinv_;
};

template <class T> struct Plain final : Gmres<T> {
    static constexpr const char* name = "gmres";
    static constexpr const char* program = "gmres.kernel";
    explicit Plain(Setup<T>& k) : Gmres<T>(k, false) {}
};
template <class T> struct Flexible final : Gmres<T> {
    static constexpr const char* name = "fgmres";
    static constexpr const char* program = "gmres.kernel";
    explicit Flexible(Setup<T>& k) : Gmres<T>(k, true) {}
};

} // namespace

template <class T>
SolverReport gmres(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o) {
    krylov::agree_on_options("gmres", a.global, o);
    return krylov::solve<Plain<T>>(a, b, x, o);
}
template <class T>
SolverReport fgmres(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o) {
    krylov::agree_on_options("fgmres", a.global, o);
    return krylov::solve<Flexible<T>>(a, b, x, o);
}

#define XGPU_GMRES_INSTANTIATE(T)                                                                                      \
    template SolverReport gmres(const OperatorRef<T>&, const Array<T>&, Array<T>&, const SolverOptions<T>&);           \
    template SolverReport fgmres(const OperatorRef<T>&, const Array<T>&, Array<T>&, const SolverOptions<T>&);
XGPU_GMRES_INSTANTIATE(float)
XGPU_GMRES_INSTANTIATE(double)

} // namespace xgpu::detail
