// The Krylov solvers' shared machinery (krylov.hpp): programs, geometry, state, checks, the loop
// with deferred convergence checking, and the end of a solve.
#include "krylov.hpp"

#include <chrono>
#include <cmath>
#include <deque>

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
                       "#define KF_STATUS {}\n#define KF_ITERATION {}\n#define KF_FLAGS {}\n"
                       "#define KST_CONVERGED {}\n#define KST_BREAKDOWN {}\n#define KST_NAN {}",
                       int(rho), int(alpha), int(gamma), int(beta), int(omega), int(rr), int(bb), int(slots),
                       int(status), int(iteration), int(flags), int(converged), int(breakdown), int(nan));
}

} // namespace

template <class T>
Solve<T>::Solve(const Context& ctx, std::string_view program, std::uint64_t n, Precond precond)
    : ctx_(ctx), queue_(ctx.current_queue()), program_(program), precond_(precond), n_(n) {
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
    launch_single("xgpu_krylov_gather", partial_[i].buffer(), groups_, m, s0, s1, s2);
}

template <class T>
Prepared<T> prepare(const char* method, const OperatorRef<T>& a, const Array<T>& b, Array<T>& x,
                    const SolverOptions<T>& o) {
    if (a.rows != a.cols)
        throw ShapeError(fmt::format("xgpu: {}: the operator is {}x{}: it must be square", method, a.rows, a.cols));
    if (b.empty()) throw InvalidArgument(fmt::format("xgpu: {}: b is an empty Array", method));
    if (b.size() != std::size_t(a.rows))
        throw ShapeError(fmt::format("xgpu: {}: b has {} elements, the operator {} rows", method, b.size(), a.rows));
    if (!x.empty() && x.size() != std::size_t(a.rows))
        throw ShapeError(fmt::format("xgpu: {}: x has {} elements, the operator {} columns", method, x.size(), a.cols));
    if (!x.empty() && !(x.context() == b.context()))
        throw InvalidArgument(fmt::format("xgpu: {}: x and b live on different contexts", method));
    if (!x.empty() && may_share_memory(x.desc(), b.desc()))
        throw InvalidArgument(fmt::format("xgpu: {}: x shares memory with b", method));
    if (!(o.rtol >= 0) || !(o.atol >= 0))
        throw InvalidArgument(
            fmt::format("xgpu: {}: rtol and atol must be >= 0 (got {} and {})", method, o.rtol, o.atol));
    if (o.max_iterations < 0)
        throw InvalidArgument(fmt::format("xgpu: {}: max_iterations must be >= 0, not {}", method, o.max_iterations));
    if (o.check_interval < 1 || o.ring_depth < 1)
        throw InvalidArgument(fmt::format("xgpu: {}: check_interval and ring_depth must be >= 1 (got {} and {})",
                                          method, o.check_interval, o.ring_depth));
    if (o.replacement_interval < 0)
        throw InvalidArgument(
            fmt::format("xgpu: {}: replacement_interval must be >= 0, not {}", method, o.replacement_interval));
    const auto& m = o.preconditioner;
    if (!m.none() && (m.rows() != a.rows || m.cols() != a.rows))
        throw ShapeError(fmt::format("xgpu: {}: the preconditioner is {}x{}, the operator {}x{}", method, m.rows(),
                                     m.cols(), a.rows, a.cols));
    if (!m.inverse_diagonal().empty() && !(m.inverse_diagonal().context() == b.context()))
        throw InvalidArgument(fmt::format("xgpu: {}: the preconditioner lives on another context", method));
    require_fp64(b.context(), dtype_v<T>);

    Prepared<T> p;
    const auto plain = [](const Array<T>& v) { return v.is_contiguous() && v.offset() == 0; };
    p.b = plain(b) ? b : b.copy();
    p.copy_back = !x.empty() && !plain(x);
    p.x = x.empty() ? zeros<T>(b.context(), {b.size()}) : p.copy_back ? x.copy() : x.ravel();
    p.max_iterations = o.max_iterations ? o.max_iterations : std::max<std::int64_t>(100, 10 * a.rows);
    return p;
}

template <class T>
void iterate(const Solve<T>& s, const SolverOptions<T>& o, std::int64_t max_iterations, double bnorm, int lag,
             const std::function<void(std::int64_t)>& step, SolverReport& report) {
    const std::size_t bytes = s.state_bytes();
    const HostBuffer ring = s.context().alloc_host(bytes * std::size_t(o.ring_depth));
    struct Pending {
        Event done;
        std::size_t slot;
        std::int64_t it;
    };
    std::deque<Pending> pending;
    std::size_t next = 0;
    bool stop = false;
    // Reads a completed check: its residual into the history and the progress callback.
    const auto take = [&](const Pending& e) {
        const auto* snap = reinterpret_cast<const Snapshot<T>*>(static_cast<const char*>(ring.data()) + e.slot * bytes);
        const std::int64_t at = snap->code() == running ? e.it - lag : snap->flag[iteration];
        const double rel = std::sqrt(double(snap->slot[rr])) / bnorm;
        if (report.history.empty() || report.history.back().first != at) report.history.emplace_back(at, rel);
        if (o.progress) o.progress(at, rel);
        if (snap->code() != running) stop = true;
    };
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t launches = s.context().launch_count();
    std::int64_t it = 1;
    for (; it <= max_iterations && !stop; ++it) {
        step(it);
        if (it % o.check_interval == 0 || it == max_iterations) {
            Event e = s.queue().read_async(s.state(), static_cast<char*>(ring.data()) + next * bytes, bytes);
            pending.push_back({e, next, it});
            next = (next + 1) % std::size_t(o.ring_depth);
        }
        // Polled every iteration, not only at checks: on OpenCL the poll flushes the queue, and
        // NVIDIA's driver starts queued work only then (H200, 2-D Poisson 256^2, 2026-12-02: polling
        // every 10th iteration took pipelined CG from 22.1 to 25.3-40.6 us an iteration).
        while (!pending.empty() && pending.front().done.is_complete()) {
            take(pending.front());
            pending.pop_front();
        }
        if (!stop && pending.size() == std::size_t(o.ring_depth)) { // the ring is full: wait for its oldest
            pending.front().done.wait();
            take(pending.front());
            pending.pop_front();
        }
    }
    s.queue().finish();
    for (const auto& e : pending)
        take(e);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const Snapshot<T> end = s.read();
    report.seconds = seconds;
    const std::int64_t enqueued = it - 1;
    if (enqueued > 0) report.launches_per_iteration = double(s.context().launch_count() - launches) / double(enqueued);
    switch (end.code()) {
    case converged:
        report.status = SolverStatus::converged;
        report.iterations = end.flag[iteration];
        break;
    case breakdown:
        report.status = SolverStatus::breakdown;
        report.iterations = end.flag[iteration] - 1;
        break;
    case nan:
        report.status = SolverStatus::nan;
        report.iterations = end.flag[iteration];
        break;
    default: report.status = SolverStatus::max_iterations; report.iterations = enqueued;
    }
    if (end.code() != running) report.status_iteration = end.flag[iteration];
    report.ms_per_iteration = report.iterations ? 1e3 * seconds / double(report.iterations) : 0;
}

template <class T>
void finish(const OperatorRef<T>& a, Prepared<T>& p, Array<T>& x, Array<T>& t, const SolverOptions<T>& o,
            double vector_bytes, SolverReport& report) {
    a.apply(p.x, t);
    const double res = double(norm(p.b - t).get());
    report.residual = res;
    report.relative_residual = report.rhs_norm > 0 ? res / report.rhs_norm : 0;
    if (report.status == SolverStatus::max_iterations && res * res <= threshold(o, report.rhs_norm))
        report.status = SolverStatus::converged;
    report.history.emplace_back(report.iterations, report.relative_residual);
    if (p.copy_back)
        x.assign(p.x.reshape(x.shape()));
    else if (x.empty())
        x = p.x;
    report.bytes_per_iteration = a.bytes > 0 ? a.bytes + vector_bytes : 0;
    if (report.bytes_per_iteration > 0 && report.seconds > 0 && report.iterations > 0)
        report.gbps = report.bytes_per_iteration * double(report.iterations) / report.seconds * 1e-9;
}

template <class T>
FormTrial<T>::FormTrial(const OperatorRef<T>& a, const Queue& q, const SolverOptions<T>& o) : a_(&a), q_(q) {
    if (a.forms.size() < 2 || !a.use_form || o.form_trial_iterations <= 0) return;
    const bool automatic = !a.forced && (tune::mode() == tune::Mode::on || tune::mode() == tune::Mode::force);
    if (!o.try_forms.value_or(automatic)) return;
    per_ = o.form_trial_iterations;
    events_.resize(a.forms.size());
}

template <class T> bool FormTrial<T>::before(std::int64_t it) {
    const std::int64_t n = per_ * std::int64_t(events_.size());
    if (per_ > 0 && it <= n) {
        const auto form = std::size_t((it - 1) / per_);
        if (form != current_ || it == 1) {
            a_->use_form(form);
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
    if (per_ == 0 || it > n) return;
    events_[current_].emplace_back(start_, q_.marker());
    if (it < n) return;
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
        a_->use_form(best);
        switched_ = true;
        current_ = best;
    }
}

template <class T> void FormTrial<T>::report(SolverReport& rep) const {
    if (a_->forms.empty()) return;
    rep.operator_form = a_->forms[current_];
    for (std::size_t i = 0; i < ms_.size(); ++i)
        rep.form_trial_ms.emplace_back(a_->forms[i], ms_[i]);
}

#define XGPU_KRYLOV_INSTANTIATE(T)                                                                                     \
    template class Solve<T>;                                                                                           \
    template class FormTrial<T>;                                                                                       \
    template Prepared<T> prepare(const char*, const OperatorRef<T>&, const Array<T>&, Array<T>&,                       \
                                 const SolverOptions<T>&);                                                             \
    template void iterate(const Solve<T>&, const SolverOptions<T>&, std::int64_t, double, int,                         \
                          const std::function<void(std::int64_t)>&, SolverReport&);                                    \
    template void finish(const OperatorRef<T>&, Prepared<T>&, Array<T>&, Array<T>&, const SolverOptions<T>&, double,   \
                         SolverReport&);
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
    }
    return "unknown";
}
} // namespace xgpu
