// The Krylov solvers' shared machinery (krylov.hpp): programs, geometry, state, checks, the loop
// with deferred convergence checking, and the end of a solve.
#include "krylov.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "../array/tuning.hpp"
#include "../codegen/generated.hpp"
#include "../codegen/operations.hpp"
#include "../codegen/skeleton.hpp"
#include "xgpu/reduction.hpp"
#include "xgpu/tune.hpp"

namespace xgpu::detail::krylov {

namespace {

// The state's layout and status codes as kernel macros, from the enums in krylov.hpp.
std::string layout_macros() {
    return fmt::format("#define KS_RHO {}\n#define KS_ALPHA {}\n#define KS_GAMMA {}\n#define KS_BETA {}\n"
                       "#define KS_OMEGA {}\n#define KS_RR {}\n#define KS_BB {}\n#define KS_SLOTS {}\n"
                       "#define KF_STATUS {}\n#define KF_ITERATION {}\n#define KF_COLUMNS {}\n#define KF_SOLVED {}\n"
                       "#define KF_FLAGS {}\n#define KST_CONVERGED {}\n#define KST_BREAKDOWN {}\n#define KST_NAN {}\n"
                       "#define K_MAX_RESTART {}",
                       int(rho), int(alpha), int(gamma), int(beta), int(omega), int(rr), int(bb), int(slots),
                       int(status), int(iteration), int(columns), int(solved), int(flags), int(converged),
                       int(breakdown), int(nan), max_restart);
}

} // namespace

template <class T>
Solve<T>::Solve(const Context& ctx, std::string_view program, std::uint64_t n, Precond precond, const GlobalSum* global,
                std::int32_t sum_rows)
    : ctx_(ctx), queue_(ctx.current_queue()), program_(program), precond_(precond), n_(n),
      global_(global && global->processes() > 1 ? global : nullptr) { // one process: nothing to sum
    // The reductions' shape for this device: a power-of-two work-group; a contiguous chunk per
    // work-item on CPUs, a grid-stride loop on GPUs; a few work-groups per compute unit.
    register_shape_problems(); // the reductions' shape may be tuned on first use
    const LaunchShape shape = launch_shape(ctx, KernelFamily::reduction, dtype_v<T>);
    wg_ = shape.group_size;
    const std::uint64_t units = std::max(1u, ctx.device().info().compute_units);
    const std::uint64_t per_group = std::uint64_t(wg_) * (shape.blocked ? 64 : 8);
    groups_ = std::clamp<std::uint64_t>((n + per_group - 1) / per_group, 1, units * (shape.blocked ? 4 : 8));
    const std::uint64_t items = groups_ * wg_;
    chunk_ = std::max<std::uint64_t>(1, (n + items - 1) / items);
    grid_ = Grid{std::size_t(groups_ * wg_), wg_};
    key_ =
        fmt::format("krylov|{}|{}|g{}{}|p{}|", program, name(dtype_v<T>), wg_, shape.blocked ? "b" : "s", int(precond));
    state_ = ctx.alloc(sizeof(Snapshot<T>));
    queue_.fill(state_, std::uint8_t(0));
    for (auto& p : partial_)
        p = empty<T>(ctx, {std::size_t(3 * groups_)});
    key_ += fmt::format("{}", shape.blocked ? 1 : 0);
    if (global_) {
        pending_.totals = ctx.alloc(std::size_t(sum_rows) * sizeof(T));
        pending_.host = ctx.alloc_host(std::size_t(sum_rows) * sizeof(T));
        pending_.values.assign(std::size_t(sum_rows), 0.0);
    }
}

template <class T> Kernel Solve<T>::kernel(std::string_view name) const {
    for (const auto& [n, k] : kernels_)
        if (n == name) return k;
    const std::string key = key_ + std::string(name);
    Kernel k = generated_kernel(
        ctx_, key,
        [&] {
            const std::string common = codegen::fill(
                "krylov.h", {{"value", codegen::device_type(dtype_v<T>)},
                             {"wg", std::to_string(wg_)},
                             {"chunked", launch_shape(ctx_, KernelFamily::reduction, dtype_v<T>).blocked ? "1" : "0"},
                             {"precond", std::to_string(int(precond_))},
                             {"slots", layout_macros()}});
            return codegen::fill(program_, {{"krylov_h", common}});
        },
        name);
    kernels_.emplace_back(std::string(name), k);
    return k;
}

template <class T> Snapshot<T> Solve<T>::read() const {
    Snapshot<T> s;
    queue_.read(state_, &s, sizeof s);
    return s;
}

template <class T>
void Solve<T>::gather(int i, std::int32_t m, std::int32_t s0, std::int32_t s1, std::int32_t s2) const {
    sum(partial_[i].buffer(), 0, m);
    launch_single("xgpu_krylov_gather", partial_[i].buffer(), groups_, m, s0, s1, s2);
}

template <class T> void Solve<T>::sum(const Buffer& b, std::uint64_t offset, std::int32_t m) const {
    if (!global_) return;
    begin_sum(b, offset, m);
    send_sum();
    end_sum();
}

template <class T> void Solve<T>::begin_sum(const Buffer& b, std::uint64_t offset, std::int32_t m) const {
    if (!global_) return;
    Pending& p = pending_;
    if (m < 1 || std::size_t(m) > p.values.size())
        throw Error(fmt::format("xgpu: solver: a sum of {} rows where the solve holds {}", m, p.values.size()));
    p.target = b;
    p.offset = offset;
    p.rows = m;
    launch_single("xgpu_krylov_totals", b, std::int64_t(offset), groups_, m, p.totals);
    p.copied = queue_.read_async(p.totals, p.host.data(), std::size_t(m) * sizeof(T));
    p.stage = 1;
}

template <class T> void Solve<T>::send_sum() const {
    Pending& p = pending_;
    if (p.stage != 1) return;
    p.copied.wait();
    const T* local = static_cast<const T*>(p.host.data());
    for (std::int32_t k = 0; k < p.rows; ++k)
        p.values[k] = double(local[k]);
    global_->start_sum(p.values.data(), p.rows);
    p.stage = 2;
}

template <class T> void Solve<T>::end_sum() const {
    Pending& p = pending_;
    if (p.stage != 2) return;
    global_->finish_sum();
    T* local = static_cast<T*>(p.host.data());
    for (std::int32_t k = 0; k < p.rows; ++k)
        local[k] = T(p.values[k]);
    // In queue order: the next begin_sum's copy into the same pinned memory comes after this one.
    queue_.write_async(p.totals, p.host.data(), std::size_t(p.rows) * sizeof(T));
    launch_single("xgpu_krylov_spread", p.target, std::int64_t(p.offset), groups_, p.rows, p.totals);
    p.stage = 0;
}

namespace {

// Why a solve's inputs are refused (empty: they are not), and whether it is a matter of shape.
// Options out of range (empty where none is).
template <class T> std::string option_refusal(const char* method, const SolverOptions<T>& o) {
    if (!(o.rtol >= 0) || !(o.atol >= 0))
        return fmt::format("xgpu: {}: rtol and atol must be >= 0 (got {} and {})", method, o.rtol, o.atol);
    if (o.max_iterations < 0)
        return fmt::format("xgpu: {}: max_iterations must be >= 0, not {}", method, o.max_iterations);
    if (o.check_interval < 1 || o.ring_depth < 1)
        return fmt::format("xgpu: {}: check_interval and ring_depth must be >= 1 (got {} and {})", method,
                           o.check_interval, o.ring_depth);
    if (o.replacement_interval < 0)
        return fmt::format("xgpu: {}: replacement_interval must be >= 0, not {}", method, o.replacement_interval);
    if (o.restart < 1 || o.restart > max_restart)
        return fmt::format("xgpu: {}: restart must be from 1 to {}, not {}", method, max_restart, o.restart);
    return {};
}

struct Refusal {
    bool shape = false;
    std::string message;
};

template <class T>
Refusal refusal(const char* method, const OperatorRef<T>& a, const Array<T>& b, const Array<T>& x,
                const SolverOptions<T>& o) {
    if (a.rows != a.cols)
        return Refusal{true, fmt::format("xgpu: {}: the operator is {}x{}: it must be square", method, a.rows, a.cols)};
    if (b.empty()) return Refusal{false, fmt::format("xgpu: {}: b is an empty Array", method)};
    if (b.size() != std::size_t(a.rows))
        return Refusal{true,
                       fmt::format("xgpu: {}: b has {} elements, the operator {} rows", method, b.size(), a.rows)};
    if (!x.empty() && x.size() != std::size_t(a.rows))
        return Refusal{true,
                       fmt::format("xgpu: {}: x has {} elements, the operator {} columns", method, x.size(), a.cols)};
    if (!x.empty() && !(x.context() == b.context()))
        return Refusal{false, fmt::format("xgpu: {}: x and b live on different contexts", method)};
    if (!x.empty() && may_share_memory(x.desc(), b.desc()))
        return Refusal{false, fmt::format("xgpu: {}: x shares memory with b", method)};
    if (std::string why = option_refusal(method, o); !why.empty()) return Refusal{false, std::move(why)};
    const auto& m = o.preconditioner;
    if (!m.none() && (m.rows() != a.rows || m.cols() != a.rows))
        return Refusal{true, fmt::format("xgpu: {}: the preconditioner is {}x{}, the operator {}x{}", method, m.rows(),
                                         m.cols(), a.rows, a.cols)};
    if (!m.none() && m.context().impl() && !(m.context() == b.context()))
        return Refusal{false,
                       fmt::format("xgpu: {}: the preconditioner was built on another context than b's", method)};
    return {};
}

} // namespace

// Every process must run the same solve, or the sums of its iterations pair up wrongly and the
// processes wait on each other forever. The options that decide the solve are compared through
// one sum of each and of its square: they are P x and P x^2 exactly when every one of the P
// processes has x (otherwise P sum(x^2) > sum(x)^2). Every process sees the same sums, so all
// refuse alike, naming the first option that differs.
template <class T> void agree_on_options(const char* method, const GlobalSum* global, const SolverOptions<T>& o) {
    if (!global || global->processes() < 2) return;
    // Options out of range on any process first, with the first such process's reason.
    // (The agreement's protocol as prepare's: "S" or "I", then the message.)
    const std::string mine = option_refusal(method, o);
    if (const std::string why = global->agree(mine.empty() ? "" : "I" + mine); !why.empty()) {
        if (why[0] == 'S') throw ShapeError(why.substr(1));
        throw InvalidArgument(why.substr(1));
    }
    const auto tri = [](const std::optional<bool>& b) { return b ? (*b ? 1.0 : 0.0) : -1.0; };
    const auto& m = o.preconditioner;
    const std::pair<const char*, double> options[] = {
        {"methods (CG, BiCGStab, GMRES or FGMRES)", std::string_view(method) == "bicgstab" ? 1.0
                                                    : std::string_view(method) == "gmres"  ? 2.0
                                                    : std::string_view(method) == "fgmres" ? 3.0
                                                                                           : 0.0},
        {"CG variants", double(int(o.variant))},
        {"rtol", o.rtol},
        {"atol", o.atol},
        {"max_iterations", double(o.max_iterations)},
        {"check_interval", double(o.check_interval)},
        {"ring_depth", double(o.ring_depth)},
        {"replacement_interval", double(o.replacement_interval)},
        {"restart", double(o.restart)},
        {"preconditioners (none, Jacobi or an operator)", m.none()                       ? 0.0
                                                          : m.inverse_diagonal().empty() ? 2.0
                                                                                         : 1.0},
        {"fused_dots", tri(o.fused_dots)},
        {"try_forms", tri(o.try_forms)},
        {"form_trial_iterations", double(o.form_trial_iterations)},
    };
    constexpr int count = int(std::size(options));
    double sums[2 * count];
    for (int i = 0; i < count; ++i) {
        sums[2 * i] = options[i].second;
        sums[2 * i + 1] = options[i].second * options[i].second;
    }
    global->sum(sums, 2 * count);
    const double p = global->processes();
    for (int i = 0; i < count; ++i) {
        const double s = sums[2 * i], q = sums[2 * i + 1];
        if (std::abs(p * q - s * s) > 1e-9 * std::max(p * q, 1e-300))
            throw InvalidArgument(fmt::format("xgpu: solve: the processes pass different {}: every process must "
                                              "solve with the same options",
                                              options[i].first));
    }
}

template <class T>
Prepared<T> prepare(const char* method, const OperatorRef<T>& a, const Array<T>& b, Array<T>& x,
                    const SolverOptions<T>& o) {
    Refusal r = refusal(method, a, b, x, o);
    if (a.global) { // every process refuses, with the first process's reason
        const std::string agreed = a.global->agree(r.message.empty() ? "" : (r.shape ? "S" : "I") + r.message);
        if (!agreed.empty()) r = Refusal{agreed[0] == 'S', agreed.substr(1)};
    }
    if (!r.message.empty()) {
        if (r.shape) throw ShapeError(r.message);
        throw InvalidArgument(r.message);
    }
    require_fp64(b.context(), dtype_v<T>);
    // The iteration limit counts every process's rows, so that all stop at the same iteration.
    double rows = double(a.rows);
    if (a.global) a.global->sum(&rows, 1);

    Prepared<T> p;
    const auto plain = [](const Array<T>& v) { return v.is_contiguous() && v.offset() == 0; };
    // Vectors of n values whatever the caller's shapes (x keeps its own).
    p.b = (plain(b) ? b : b.copy()).ravel();
    p.copy_back = !x.empty() && !plain(x);
    p.x = x.empty() ? zeros<T>(b.context(), {b.size()}) : (p.copy_back ? x.copy() : x).ravel();
    p.max_iterations = o.max_iterations ? o.max_iterations : std::max<std::int64_t>(100, 10 * std::int64_t(rows));
    return p;
}

namespace {

// What one run of the iteration loop did.
struct Pass {
    std::int64_t enqueued = 0;  // iterations enqueued
    std::uint64_t launches = 0; // kernel launches meanwhile (the solver's and the operator's)
    double seconds = 0;         // from the first enqueue to the last completion
};

// The iteration loop: step(it) enqueues iteration it (1, 2, ...) until the device flags a status,
// the host sees it at a check, or `base + it` reaches max_iterations (base: the iterations of the
// passes before this one, which the report counts on from). Sets the report's status and
// iterations (as the device claims them: run() checks a claimed convergence) and adds to its
// history.
template <class T> Pass iterate(const Setup<T>& k, Method<T>& m, std::int64_t base) {
    const Solve<T>& s = k.s;
    const SolverOptions<T>& o = k.o;
    SolverReport& report = k.report;
    const std::int64_t max_iterations = k.p.max_iterations;
    const double bnorm = report.rhs_norm;
    const std::size_t bytes = s.state_bytes();
    // A preconditioner other than Jacobi runs kernels of its own, which the device's stop flag
    // does not end: every iteration enqueued past the stop would run it in full. So the host
    // checks every iteration with at most two checks in flight (the device still works ahead
    // of the host by an iteration).
    const bool heavy = !o.preconditioner.none() && o.preconditioner.inverse_diagonal().empty();
    // A callback sees each iteration's x: every iteration is checked and waited for.
    const bool each = bool(o.callback);
    const int interval = heavy || each ? 1 : o.check_interval;
    const std::size_t depth = each ? 1 : heavy ? std::size_t(std::min(o.ring_depth, 2)) : std::size_t(o.ring_depth);
    const HostBuffer ring = s.context().alloc_host(bytes * depth);
    const Drain drain(s.queue()); // the ring outlives the copies into it, whatever throws
    struct Pending {
        Event done;
        std::size_t slot;
        std::int64_t it; // counted from the solve's start
    };
    std::deque<Pending> pending;
    std::size_t next = 0;
    bool stop = false;
    // Reads a completed check: its residual into the history and the progress callback; with a
    // callback (one check in flight, taken before the next iteration is enqueued), iteration e.it
    // ran unless the device stopped before it.
    const auto take = [&](const Pending& e) {
        const auto* snap = reinterpret_cast<const Snapshot<T>*>(static_cast<const char*>(ring.data()) + e.slot * bytes);
        const std::int64_t at = snap->code() == running ? e.it - m.lag() : base + snap->flag[iteration];
        const double rel = std::sqrt(double(snap->slot[rr])) / bnorm;
        if (snap->code() != running) stop = true;
        if (report.history.empty() || report.history.back().first != at) report.history.emplace_back(at, rel);
        if (o.progress) o.progress(at, rel);
        if (each) {
            const std::int64_t last = snap->code() == running     ? e.it
                                      : snap->code() == breakdown ? base + snap->flag[iteration] - 1
                                                                  : base + snap->flag[iteration];
            if (e.it <= last && m.x_current(e.it - base)) o.callback(e.it, k.p.x);
        }
    };
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t launches = s.context().launch_count();
    std::int64_t it = 1;
    for (; base + it <= max_iterations && !stop; ++it) {
        m.step(it);
        if ((base + it) % interval == 0 || base + it == max_iterations) {
            Event e = s.queue().read_async(s.state(), static_cast<char*>(ring.data()) + next * bytes, bytes);
            pending.push_back({e, next, base + it});
            next = (next + 1) % depth;
        }
        // Over several processes every one must stop after the same iteration (each iteration sums
        // across them), so each waits for its checks as they come: their states agree, since every
        // decision in them comes from the same global sums.
        if (s.distributed() && !pending.empty()) pending.front().done.wait();
        // Polled every iteration, not only at checks: on OpenCL the poll flushes the queue, and
        // NVIDIA's driver starts queued work only then (pipelined CG on a small system runs much
        // slower an iteration polling only at checks: `poisson --2d 256 --solver pipecg`).
        while (!pending.empty() && pending.front().done.is_complete()) {
            const Pending e = pending.front();
            pending.pop_front();
            take(e);
        }
        if (!stop && pending.size() == depth) { // the ring is full: wait for its oldest
            pending.front().done.wait();
            const Pending e = pending.front();
            pending.pop_front();
            take(e);
        }
    }
    s.queue().finish();
    while (!pending.empty()) {
        const Pending e = pending.front();
        pending.pop_front();
        take(e);
    }
    Pass pass;
    pass.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    pass.enqueued = it - 1;
    pass.launches = s.context().launch_count() - launches;
    const Snapshot<T> end = s.read();
    switch (end.code()) {
    case converged:
        report.status = SolverStatus::converged;
        report.iterations = base + end.flag[iteration];
        break;
    case breakdown:
        report.status = SolverStatus::breakdown;
        report.iterations = base + end.flag[iteration] - 1;
        break;
    case nan:
        report.status = SolverStatus::nan;
        report.iterations = base + end.flag[iteration];
        break;
    default: report.status = SolverStatus::max_iterations; report.iterations = base + pass.enqueued;
    }
    report.status_iteration = end.code() != running ? base + end.flag[iteration] : -1;
    return pass;
}

// |b - A x| for the solve's x, in the solver's precision (t: scratch for A x).
template <class T> double true_residual(const OperatorRef<T>& a, const Prepared<T>& p, Array<T> t) {
    a.apply(p.x, t);
    const double local = double(norm(p.b - t).get());
    if (!a.global) return local;
    double squares = local * local;
    a.global->sum(&squares, 1);
    return std::sqrt(squares);
}

} // namespace

template <class T> void Solve<T>::reset() const {
    queue_.fill(state_, std::uint8_t(0));
}

template <class T> void run(Setup<T>& k, Method<T>& m, Array<T>& x) {
    const Solve<T>& s = k.s;
    const OperatorRef<T>& a = k.a;
    Prepared<T>& p = k.p;
    SolverReport& report = k.report;
    const Drain drain(s.queue()); // the solver's vectors outlive the work queued on them
    m.start();
    Snapshot<T> st = s.read();
    const double b2 = double(st.slot[bb]);
    report.rhs_norm = std::sqrt(b2);
    report.history.clear();
    if (b2 == 0) { // x = 0 is the answer, exactly
        p.x.fill(T(0));
        report.status = SolverStatus::converged;
        report.status_iteration = 0;
    }
    const double thr = k.tolerance2();
    std::optional<double> residual; // |b - A x| for the x that p.x holds now
    std::int64_t launches = 0, enqueued = 0;
    double last = std::numeric_limits<double>::infinity(); // the true residual at the last replacement
    while (b2 != 0) {
        // st: the state after a start, its residual b - A x computed from x.
        const double r2 = double(st.slot[rr]);
        if (!std::isfinite(b2) || !std::isfinite(r2)) {
            report.status = SolverStatus::nan;
            report.status_iteration = report.iterations;
            break;
        }
        if (report.history.empty() || report.history.back().first != report.iterations)
            report.history.emplace_back(report.iterations, std::sqrt(r2 / b2));
        if (r2 > thr && report.iterations < p.max_iterations) {
            m.prime();
            const Pass pass = iterate(k, m, report.iterations);
            // A method whose x moves only now shows the callback the x it returns.
            if (m.finish() && k.o.callback) k.o.callback(report.iterations, p.x);
            report.seconds += pass.seconds;
            launches += std::int64_t(pass.launches);
            enqueued += pass.enqueued;
        } else {
            report.status = r2 > thr ? SolverStatus::max_iterations : SolverStatus::converged;
            report.status_iteration = r2 > thr ? -1 : report.iterations;
        }
        const bool claimed = report.status == SolverStatus::converged;
        if (!claimed && !(report.status == SolverStatus::breakdown && m.recurrent_breakdown())) break;
        // The device's residual met the tolerance (or a denominator it derives by recurrence
        // turned non-positive): the true residual decides.
        residual = true_residual(a, p, m.scratch());
        if (*residual * *residual <= thr) {
            report.status = SolverStatus::converged;
            report.status_iteration = report.iterations;
            break;
        }
        // The recurrences drifted from b - A x. Replace them, unless that no longer helps.
        if (!(*residual < last)) {
            if (claimed) report.status = SolverStatus::stagnation; // else a breakdown that persists
            break;
        }
        if (report.iterations >= p.max_iterations) {
            report.status = SolverStatus::max_iterations;
            report.status_iteration = -1;
            break;
        }
        last = *residual;
        ++report.replacements;
        residual.reset();
        s.reset();
        m.start();
        st = s.read();
    }
    if (enqueued > 0) report.launches_per_iteration = double(launches) / double(enqueued);
    report.ms_per_iteration = report.iterations ? 1e3 * report.seconds / double(report.iterations) : 0;
    if (!residual) residual = true_residual(a, p, m.scratch());
    report.residual = *residual;
    report.relative_residual = report.rhs_norm > 0 ? report.residual / report.rhs_norm : 0;
    // Where the iterations ran out with an x that meets the tolerance after all.
    if (report.status == SolverStatus::max_iterations && report.residual * report.residual <= thr)
        report.status = SolverStatus::converged;
    report.history.emplace_back(report.iterations, report.relative_residual);
    if (p.copy_back)
        x.assign(p.x.reshape(x.shape()));
    else if (x.empty())
        x = p.x;
    k.trial.report(report);
    // The traffic: the operator's bytes a product plus the method's own, and GB/s over the
    // iterations' time.
    const double vectors = m.vectors_per_iteration() * double(k.n) * sizeof(T);
    report.bytes_per_iteration = a.bytes > 0 ? a.bytes + vectors : 0;
    if (report.bytes_per_iteration > 0 && report.seconds > 0 && report.iterations > 0)
        report.gbps = report.bytes_per_iteration * double(report.iterations) / report.seconds * 1e-9;
}

template <class T>
FormTrial<T>::FormTrial(const OperatorRef<T>& a, const Queue& q, const SolverOptions<T>& o) : a_(&a), q_(q) {
    if (a.forms.size() < 2 || o.form_trial_iterations <= 0) return;
    const bool automatic = !a.fixed && (tune::mode() == tune::Mode::on || tune::mode() == tune::Mode::force);
    if (!o.try_forms.value_or(automatic)) return;
    per_ = o.form_trial_iterations;
    events_.resize(a.forms.size());
}

template <class T> bool FormTrial<T>::before(std::int64_t it) {
    const std::int64_t n = per_ * std::int64_t(events_.size());
    if (per_ > 0 && !decided_ && it <= n) {
        const auto form = std::size_t((it - 1) / per_);
        if (form != current_ || it == 1) {
            a_->current = form;
            switched_ = switched_ || form != current_;
            current_ = form;
        }
        start_ = q_.marker();
    }
    const bool s = switched_;
    switched_ = false;
    return s;
}

template <class T> void FormTrial<T>::after(std::int64_t it) {
    const std::int64_t n = per_ * std::int64_t(events_.size());
    if (per_ == 0 || decided_ || it > n) return;
    events_[current_].emplace_back(start_, q_.marker());
    if (it < n) return;
    decided_ = true;
    events_.back().back().second.wait();
    for (auto& e : events_) {
        std::vector<double> t;
        for (const auto& [a, b] : e)
            t.push_back(a.elapsed_ms(b));
        std::sort(t.begin(), t.end());
        ms_.push_back(t.empty() ? 0 : t[t.size() / 2]);
        e.clear();
    }
    const auto best = std::size_t(std::min_element(ms_.begin(), ms_.end()) - ms_.begin());
    if (best != current_) {
        a_->current = best;
        switched_ = true;
        current_ = best;
    }
}

template <class T> void FormTrial<T>::report(SolverReport& rep) const {
    rep.operator_form = a_->forms[current_].name;
    for (std::size_t i = 0; i < ms_.size(); ++i)
        rep.form_trial_ms.emplace_back(a_->forms[i].name, ms_[i]);
}

#define XGPU_KRYLOV_INSTANTIATE(T)                                                                                     \
    template class Solve<T>;                                                                                           \
    template class FormTrial<T>;                                                                                       \
    template void agree_on_options(const char*, const GlobalSum*, const SolverOptions<T>&);                            \
    template Prepared<T> prepare(const char*, const OperatorRef<T>&, const Array<T>&, Array<T>&,                       \
                                 const SolverOptions<T>&);                                                             \
    template void run(Setup<T>&, Method<T>&, Array<T>&);
XGPU_KRYLOV_INSTANTIATE(float)
XGPU_KRYLOV_INSTANTIATE(double)

} // namespace xgpu::detail::krylov

namespace xgpu {
const char* name(SolverStatus s) {
    switch (s) {
    case SolverStatus::converged: return "converged";
    case SolverStatus::max_iterations: return "max_iterations";
    case SolverStatus::breakdown: return "breakdown";
    case SolverStatus::nan: return "nan";
    case SolverStatus::stagnation: return "stagnation";
    }
    return "unknown";
}
} // namespace xgpu
