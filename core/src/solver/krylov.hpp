// What the Krylov solvers share: their programs (kernels/cg.kernel, pipecg.kernel, bicgstab.kernel
// around kernels/krylov.h), the launch geometry, the device state (scalars and flags) with its
// layout, the checks every solve makes before any work, and the iteration loop with deferred
// convergence checking through a pinned ring buffer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xgpu/solver.hpp"

namespace xgpu::detail::krylov {

// The state's layout, written into kernels/krylov.h by the program builder (one source of truth).
enum Slot : int { rho = 0, alpha = 2, gamma = 4, beta = 6, omega = 7, rr = 8, bb = 9, slots = 16 };
// GMRES's flags: the Arnoldi columns of the cycle not yet folded into x, and those its last
// least-squares solve folds in.
enum Flag : int { status = 0, iteration = 1, columns = 2, solved = 3, flags = 4 };
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
    // `program`: the kernel file ("cg.kernel", ...), n the rows (this process's, where `global`
    // sums over processes), `sum_rows` the most rows of partial sums one sum() takes.
    Solve(const Context& ctx, std::string_view program, std::uint64_t n, Precond precond,
          const GlobalSum* global = nullptr, std::int32_t sum_rows = 3);

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
    // Partial-sum buffers (3 rows of `groups` values each), as buffers and as arrays.
    Buffer partial(int i) const { return partial_[i].buffer(); }
    const Array<T>& partial_sums(int i) const { return partial_[i]; }
    std::uint64_t groups() const { return groups_; }
    // A buffer to pass where a kernel's unused vector argument goes.
    const Buffer& dummy() const { return state_; }
    std::size_t state_bytes() const { return sizeof(Snapshot<T>); }
    Snapshot<T> read() const; // blocking
    // Zeroes the state (the status flag running again), as a new solve has it.
    void reset() const;
    // The totals of the first m rows of partial(i) into the slots given (one work-group), summed
    // over the processes first where there are several.
    void gather(int i, std::int32_t m, std::int32_t s0, std::int32_t s1 = 0, std::int32_t s2 = 0) const;

    // Where the rows are spread over processes: rows 0 .. m-1 (m <= sum_rows) of the partial sums at
    // `offset` values into `b` summed over the processes in place, so that every kernel that sums
    // them reads the global sums; nothing in one process. begin_sum enqueues the local totals and
    // their copy to the host, send_sum waits for that copy and starts the sum across processes,
    // end_sum waits for it and enqueues the write back: work enqueued between send_sum and
    // end_sum overlaps the sum. One at a time; sum() is the three in a row.
    bool distributed() const { return global_ != nullptr; }
    const GlobalSum* global() const { return global_; }
    void sum(const Buffer& b, std::uint64_t offset, std::int32_t m) const;
    void begin_sum(const Buffer& b, std::uint64_t offset, std::int32_t m) const;
    void send_sum() const;
    void end_sum() const;

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
    const GlobalSum* global_;
    // A sum across processes: the local totals on the device and in pinned memory, as doubles
    // while MPI sums them, and where they go back.
    struct Pending {
        Buffer totals;
        HostBuffer host;
        Event copied;
        std::vector<double> values; // sum_rows
        Buffer target;
        std::uint64_t offset = 0;
        std::int32_t rows = 0;
        int stage = 0; // 0: none; 1: begun; 2: sent
    };
    mutable Pending pending_;
    mutable std::vector<std::pair<std::string, Kernel>> kernels_; // a Solve is used by one thread
};

// A solve's vectors and the blocks of partial sums its iterations pass on, in one buffer: NVIDIA's
// OpenCL spends host time on every buffer argument of a launch (`array-bench --latency` measures
// it; docs/performance.md has the figures), and a small system's iteration is its launches' host
// time, so the kernels take the buffer once and offsets (in values). Vector i starts at a multiple
// of 64 values; each block holds 3 rows of `groups` sums.
//
// Vectors names where each vector and the two blocks lie: the kernels take it as one argument,
// kernels/krylov.h's KrylovVectors (the same fields in the same order), and reach each vector by
// name. A method leaves the vectors it does not have at 0.
struct Vectors {
    std::uint64_t r = 0, p = 0, q = 0, z = 0, w = 0, s = 0, u = 0;
    std::uint64_t sums[2] = {0, 0};
};
// A solve's inputs, checked and made contiguous: throws before any work.
template <class T> struct Prepared {
    Array<T> b, x;  // contiguous, offset 0 (copies where the caller's were not)
    bool copy_back; // x was copied: assign the answer back to the caller's
    std::int64_t max_iterations;
};
// Over several processes: throws InvalidArgument on every process alike unless all pass the same
// method and options (one collective sum; the first collective of a solve, so that processes
// running different methods meet in it). Nothing for one process.
template <class T> void agree_on_options(const char* method, const GlobalSum* global, const SolverOptions<T>& o);
template <class T>
Prepared<T> prepare(const char* method, const OperatorRef<T>& a, const Array<T>& b, Array<T>& x,
                    const SolverOptions<T>& o);

// Waits for a queue when the scope it guards is left by an exception. Declared after the buffers
// that queued work reads and writes (a pinned ring, a solve's vectors), it runs before they are
// freed, so no copy or kernel still in flight writes into freed memory whatever throws (a progress
// callback, the operator, a launch). What the wait itself throws is dropped: the first exception is
// the one the caller gets.
class Drain {
public:
    explicit Drain(const Queue& q) : q_(q), unwinding_(std::uncaught_exceptions()) {}
    Drain(const Drain&) = delete;
    Drain& operator=(const Drain&) = delete;
    ~Drain() {
        if (std::uncaught_exceptions() > unwinding_) try {
                q_.finish();
            } catch (...) {
            }
    }

private:
    Queue q_;
    int unwinding_;
};

// Tries the operator's forms of its product in a solve's first iterations (SolverOptions::
// try_forms): form i runs iterations i*k+1 .. (i+1)*k (k = form_trial_iterations), each product
// (with the dot product that goes with it) between two markers; after the last, the host waits for
// its marker, and the form of the least median time runs the rest of the solve.
template <class T> class FormTrial {
public:
    FormTrial(const OperatorRef<T>& a, const Queue& q, const SolverOptions<T>& o);
    // Around the product of iteration it (1, 2, ... from the solve's last start). before() says
    // whether the form changed from this iteration on (the solver may then try fusing its dot
    // product again).
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
    bool decided_ = false; // once: a solve that starts again from x (residual replacement) keeps the form
    Event start_;
    std::vector<std::vector<std::pair<Event, Event>>> events_;
    std::vector<double> ms_;
};

// A Krylov method as the driver sees it: its recurrences as launches between the operator's
// products, every scalar on the device.
template <class T> class Method {
public:
    virtual ~Method() = default;
    // Enqueues the residual of p.x with |b|^2 and |r|^2 in the state's slots bb and rr.
    virtual void start() = 0;
    // What the first iteration reads beyond start(), unless no iteration runs.
    virtual void prime() {}
    // Enqueues iteration it (1, 2, ... from the last start).
    virtual void step(std::int64_t it) = 0;
    // Enqueues what puts the iterations' answer into x once they stop (GMRES's least-squares
    // update of the last cycle), and says whether x changed; the methods that update x every
    // iteration have nothing to do.
    virtual bool finish() { return false; }
    // Whether x holds iteration it's iterate (it counted from the last start) once it ran
    // (GMRES's only at the ends of cycles), so that a callback is shown it.
    virtual bool x_current(std::int64_t) const { return true; }
    // The vectors of n values an iteration reads or writes beside the operator's product (its
    // traffic, asked once the solve is done).
    virtual double vectors_per_iteration() const = 0;
    // A vector the method does not need once its iterations are done (the true residual's
    // product goes there).
    virtual Array<T> scratch() const = 0;
    // How far behind `it` the residual that an iteration leaves in the state is (0: its own; 1: the
    // one before).
    virtual int lag() const { return 0; }
    // The method's denominators come from recurrences (the pipelined forms), so a breakdown may
    // be their drift rather than A's: it is checked and replaced like a convergence claim.
    virtual bool recurrent_breakdown() const { return false; }
};

// What a method is built from, once the solve's inputs are checked: the operator, the inputs,
// the options, the kernels and state, the trial of the operator's forms and the report.
template <class T> struct Setup {
    const OperatorRef<T>& a;
    Prepared<T>& p;
    const SolverOptions<T>& o;
    const Solve<T>& s;
    FormTrial<T>& trial;
    SolverReport& report;
    Precond kind;
    std::size_t n;
    // A vector of n values, uninitialized or zero.
    Array<T> vector() const { return empty<T>(s.context(), {n}); }
    Array<T> zero_vector() const { return zeros<T>(s.context(), {n}); }
    // The vector for M v: v itself where there is no preconditioner.
    Array<T> preconditioned(const Array<T>& v) const { return kind == Precond::none ? v : vector(); }
    // The inverse diagonal of a Jacobi preconditioner, else a buffer the kernels ignore.
    Buffer inverse_diagonal() const {
        return kind == Precond::jacobi ? o.preconditioner.inverse_diagonal().buffer() : s.dummy();
    }
    // The tolerance on |r|^2 (the kernels compare it with r.r).
    double tolerance2() const {
        const double t = std::max(o.rtol * report.rhs_norm, o.atol);
        return t * t;
    }
};

using VectorName = std::uint64_t Vectors::*;
template <class T> class Workspace {
public:
    // The vectors `names` (in that order) and two blocks of partial sums, for a solve of k.n rows.
    // `preconditioned` is M r: without a preconditioner it is r itself.
    Workspace(const Setup<T>& k, std::initializer_list<VectorName> names, VectorName preconditioned)
        : n_(k.n), stride_((n_ + 63) / 64 * 64), groups_(k.s.groups()),
          sums_((names.size() + (k.kind == Precond::none ? 0 : 1)) * stride_),
          all_(zeros<T>(k.s.context(), {std::size_t(sums_ + 3 * groups_ * 2)})) {
        std::uint64_t i = 0;
        for (const VectorName v : names)
            at_.*v = i++ * stride_;
        at_.*preconditioned = k.kind == Precond::none ? at_.r : i * stride_;
        at_.sums[0] = block(0);
        at_.sums[1] = block(1);
    }
    const Buffer& buffer() const { return all_.buffer(); }
    const Vectors& at() const { return at_; }
    Array<T> operator[](VectorName v) const { return view(at_.*v, n_); }
    // Where block i's row `row` starts, and that row as an array (a FusedDotOperator's partial).
    std::uint64_t block(std::uint64_t i, std::uint64_t row = 0) const { return sums_ + (3 * i + row) * groups_; }
    Array<T> block_row(std::uint64_t i, std::uint64_t row) const { return view(block(i, row), groups_); }

private:
    Array<T> view(std::uint64_t first, std::uint64_t count) const {
        return all_(slice(std::int64_t(first), std::int64_t(first + count)));
    }
    std::uint64_t n_, stride_, groups_, sums_;
    Array<T> all_;
    Vectors at_;
};

// The loop of solve() below, its true residual and its report (but for the method's name); puts
// the answer in x.
template <class T> void run(Setup<T>& k, Method<T>& m, Array<T>& x);

// A solve from the checks to the report, with method M (its `name`, its kernels' `program` and a
// constructor from Setup): the checks before any work, then start, the iterations with deferred
// convergence checking, and the true residual |b - A x| from the returned x, which alone decides
// `converged`. Where the device's recurrence met the tolerance but the true residual does not
// (the recurrences drift from b - A x on ill-conditioned systems, pipelined ones most), the
// recurrences are replaced: the solve starts again from x, every recurrence recomputed from its
// definition, until the true residual meets the tolerance, iterations run out (max_iterations)
// or a replacement no longer lowers the true residual (stagnation; breakdown where the method's
// recurrent denominators broke down again).
template <class M, class T>
SolverReport solve(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o) {
    Prepared<T> p = prepare(M::name, a, b, x, o);
    SolverReport report;
    report.method = M::name;
    const Precond kind = precond_kind(o.preconditioner);
    // Over several processes a sum takes up to restart + 1 rows (GMRES's dot products).
    const Solve<T> s(p.b.context(), M::program, p.b.size(), kind, a.global, std::max(3, o.restart + 1));
    FormTrial<T> trial(a, s.queue(), o);
    Setup<T> setup{a, p, o, s, trial, report, kind, p.b.size()};
    M method(setup);
    run(setup, method, x);
    return report;
}

} // namespace xgpu::detail::krylov
