// What the Krylov solvers share: their programs (kernels/cg.kernel, pipecg.kernel, bicgstab.kernel
// around kernels/krylov.h), the launch geometry, the device state (scalars and flags) with its
// layout, the checks every solve makes before any work, and the iteration loop with deferred
// convergence checking through a pinned ring buffer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xgpu/solver.hpp"

namespace xgpu::detail::krylov {

// The state's layout, written into kernels/krylov.h by the program builder (one source of truth).
enum Slot : int { rho = 0, alpha = 2, gamma = 4, beta = 6, omega = 7, rr = 8, bb = 9, slots = 16 };
enum Flag : int { status = 0, iteration = 1, flags = 4 };
enum Code : std::int32_t { running = 0, converged = 1, breakdown = 2, nan = 3 };

// How the preconditioner enters the kernels (K_PRECOND).
enum class Precond { none = 0, jacobi = 1, external = 2 };
template <class T> Precond precond_kind(const Preconditioner<T>& m) {
    if (m.none()) return Precond::none;
    return m.inverse_diagonal().empty() ? Precond::external : Precond::jacobi;
}

// The device state as the host reads it.
template <class T> struct Snapshot {
    T slot[slots];
    std::int32_t flag[flags];
    std::int32_t code() const { return flag[status]; }
};

// One solve's kernels, geometry and device state.
template <class T> class Solve {
public:
    // `program`: the kernel file ("cg.kernel", ...), n the rows.
    Solve(const Context& ctx, std::string_view program, std::uint64_t n, Precond precond);

    // The kernel `name` of the program, looked up once per solve (the solvers launch a few kernels
    // thousands of times; each lookup in the context's table built a key and took its lock).
    Kernel kernel(std::string_view name) const;
    // Launches `name` over the vectors (n, chunk, state first), or over one work-group (`single`).
    template <class... Args> void launch(std::string_view name, const Args&... args) const {
        kernel(name).launch(queue_, grid_, n_, chunk_, state_, args...);
    }
    template <class... Args> void launch_single(std::string_view name, const Args&... args) const {
        kernel(name).launch(queue_, Grid{wg_, wg_}, state_, args...);
    }

    const Context& context() const { return ctx_; }
    const Queue& queue() const { return queue_; }
    const Buffer& state() const { return state_; }
    // Partial-sum buffers (3 rows of `groups` values each).
    Buffer partial(int i) const { return partial_[i].buffer(); }
    std::uint64_t groups() const { return groups_; }
    // A buffer to pass where a kernel's unused vector argument goes.
    const Buffer& dummy() const { return state_; }
    std::size_t state_bytes() const { return sizeof(Snapshot<T>); }
    Snapshot<T> read() const; // blocking
    // The totals of the first m rows of partial(i) into the slots given (one work-group).
    void gather(int i, std::int32_t m, std::int32_t s0, std::int32_t s1 = 0, std::int32_t s2 = 0) const;

private:
    Context ctx_;
    Queue queue_;
    std::string key_;
    std::string program_;
    Precond precond_;
    std::uint64_t n_, chunk_ = 1, groups_ = 1;
    std::size_t wg_ = 1;
    Grid grid_{1};
    Buffer state_;
    Array<T> partial_[3];
    mutable std::vector<std::pair<std::string, Kernel>> kernels_; // a Solve is used by one thread
};

// A solve's vectors and the blocks of partial sums its iterations pass on, in one buffer: NVIDIA's
// OpenCL spends about 0.5 us of host time per buffer argument of a launch (H200, 2026-12-02,
// bench/array_bench.cpp --latency: 5.8 us with 1 buffer, 10.9 with 12), and a small system's
// iteration is its launches' host time, so the kernels take the buffer once and offsets (in
// values). Vector i starts at a multiple of 64 values; each block holds 3 rows of `groups` sums.
template <class T> class Workspace {
public:
    Workspace(const Context& ctx, std::uint64_t n, std::uint64_t vectors, std::uint64_t groups, std::uint64_t blocks)
        : n_(n), stride_((n + 63) / 64 * 64), groups_(groups), sums_(vectors * stride_),
          all_(zeros<T>(ctx, {std::size_t(sums_ + 3 * groups * blocks)})) {}
    const Buffer& buffer() const { return all_.buffer(); }
    std::uint64_t offset(std::uint64_t i) const { return i * stride_; }
    Array<T> vector(std::uint64_t i) const { return view(offset(i), n_); }
    // Where block i's row `row` starts, and that row as an array (a FusedDotOperator's partial).
    std::uint64_t block(std::uint64_t i, std::uint64_t row = 0) const { return sums_ + (3 * i + row) * groups_; }
    Array<T> block_row(std::uint64_t i, std::uint64_t row) const { return view(block(i, row), groups_); }

private:
    Array<T> view(std::uint64_t first, std::uint64_t count) const {
        return all_(slice(std::int64_t(first), std::int64_t(first + count)));
    }
    std::uint64_t n_, stride_, groups_, sums_;
    Array<T> all_;
};

// A solve's inputs, checked and made contiguous: throws before any work.
template <class T> struct Prepared {
    Array<T> b, x;  // contiguous, offset 0 (copies where the caller's were not)
    bool copy_back; // x was copied: assign the answer back to the caller's
    std::int64_t max_iterations;
};
template <class T>
Prepared<T> prepare(const char* method, const OperatorRef<T>& a, const Array<T>& b, Array<T>& x,
                    const SolverOptions<T>& o);

// The iteration loop: step(it) enqueues iteration it (1, 2, ...) until the device flags a status,
// the host sees it at a check, or max_iterations; `lag` is how far behind `it` the residual that
// iteration leaves in the state is (0: its own; 1: the one before). Fills the report's status,
// iterations, history and timing; the caller recomputes the true residual after.
template <class T>
void iterate(const Solve<T>& s, const SolverOptions<T>& o, std::int64_t max_iterations, double bnorm, int lag,
             const std::function<void(std::int64_t)>& step, SolverReport& report);

// The end of a solve: the true residual |b - A x| (t is scratch), the relative residual, the
// status where the loop ran out (converged if the true residual meets the tolerance), the answer
// copied back, GB/s from `vector_bytes` (the solver's own traffic per iteration).
template <class T>
void finish(const OperatorRef<T>& a, Prepared<T>& p, Array<T>& x, Array<T>& t, const SolverOptions<T>& o,
            double vector_bytes, SolverReport& report);

// Tries the operator's forms of its product in a solve's first iterations (SolverOptions::
// try_forms): form i runs iterations i*k+1 .. (i+1)*k (k = form_trial_iterations), each product
// (with the dot product that goes with it) between two markers; after the last, the host waits for
// its marker, and the form of the least median time runs the rest of the solve.
template <class T> class FormTrial {
public:
    FormTrial(const OperatorRef<T>& a, const Queue& q, const SolverOptions<T>& o);
    // Around the product of iteration it (1, 2, ...). before() says whether the form changed from
    // this iteration on (the solver may then try fusing its dot product again).
    bool before(std::int64_t it);
    void after(std::int64_t it);
    // The form kept (or running) and the trial's times.
    void report(SolverReport& rep) const;

private:
    const OperatorRef<T>* a_;
    Queue q_;
    std::int64_t per_ = 0; // iterations per form; 0: no trial
    std::size_t current_ = 0;
    bool switched_ = false;
    Event start_;
    std::vector<std::vector<std::pair<Event, Event>>> events_;
    std::vector<double> ms_;
};

// The tolerance on |r|^2.
template <class T> double threshold(const SolverOptions<T>& o, double bnorm) {
    const double t = std::max(o.rtol * bnorm, o.atol);
    return t * t;
}

// After a solve's setup, from the state's |b|^2 and |r0|^2: whether it needs no iteration (b = 0:
// x = 0; NaN or infinity in b or r0; r0 already meets the tolerance), with the report filled so far.
template <class T> bool settled(const Snapshot<T>& st, Prepared<T>& p, const SolverOptions<T>& o, SolverReport& rep) {
    const double b2 = double(st.slot[bb]), r2 = double(st.slot[rr]);
    rep.rhs_norm = std::sqrt(b2);
    rep.history.clear();
    if (!std::isfinite(b2) || !std::isfinite(r2)) {
        rep.status = SolverStatus::nan;
        rep.status_iteration = 0;
        return true;
    }
    if (b2 == 0) {
        p.x.fill(T(0));
        rep.status = SolverStatus::converged;
        rep.status_iteration = 0;
        return true;
    }
    rep.history.emplace_back(0, std::sqrt(r2 / b2));
    if (r2 <= threshold(o, rep.rhs_norm)) {
        rep.status = SolverStatus::converged;
        rep.status_iteration = 0;
        return true;
    }
    return false;
}

} // namespace xgpu::detail::krylov
