// xgpu solvers: Krylov methods for A x = b on the device, written against LinearOperator
// (xgpu/operator.hpp) and arrays only, with every scalar (alpha, beta, rho, residuals) kept on the
// device and convergence checked without stalling the queue.
//
//   xgpu::sparse::Csr<double> A(ctx, host);
//   xgpu::SolverOptions<double> o;
//   o.rtol = 1e-8;
//   o.preconditioner = xgpu::Jacobi<double>(A);            // fused into the solver's kernels
//   auto report = xgpu::cg(A, b, x, o);                     // x: the initial guess, then the answer
//   if (!report.converged()) ... report.status, report.status_iteration
//
// Deferred checking: every iteration the device tests its own residual and, once it meets the
// tolerance (or breaks down, or turns NaN), sets a flag in device memory that makes every kernel
// queued behind it return at once; so the answer is the iterate of the first iteration that met the
// tolerance. Every `check_interval` iterations the residual is copied into a small pinned ring
// buffer; the host polls those copies' events without blocking while it keeps enqueueing, and
// stops enqueueing once one shows the flag (at most ring_depth * check_interval iterations ahead).
//
// `converged` is a claim about the returned x: the solver recomputes r = b - A x with the operator
// and the array layer in T (one product and one norm) and reports converged only where
// |r| <= max(rtol |b|, atol). The residual a method updates by recurrence drifts from b - A x on
// ill-conditioned systems (pipelined CG most); where the device's residual met the tolerance and
// the true one does not, the solve starts again from x (every recurrence recomputed from its
// definition) until the true residual meets it, iterations run out, or it stops falling
// (stagnation). Failures are statuses in the report (breakdown with its iteration, NaN or
// infinity, the iteration limit, stagnation); misuse (a non-square operator, mismatched sizes, bad
// options) throws ShapeError or InvalidArgument before any work. b and x may have any shape whose
// size is the operator's rows (a contiguous nx x ny grid for a 2-D stencil); x keeps its shape. A
// zero right-hand side gives x = 0 at once.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "xgpu/operator.hpp"
#include "xgpu/preconditioner.hpp"

namespace xgpu {

// The largest SolverOptions::restart.
inline constexpr int max_restart = 256;

enum class SolverStatus {
    converged,      // the true residual |b - A x| of the returned x meets max(rtol * |b|, atol)
    max_iterations, // the limit came first (x is the last iterate; report.residual says how far)
    breakdown,      // a denominator of the method was exactly zero, negative where the method needs
                    // it positive (CG: p.Ap <= 0 or r.z <= 0, A or M not positive definite), or
                    // BiCGStab's rho, rhat.v, t.t or t.s exactly zero
    nan,            // NaN or infinity in b, the residual or a scalar
    stagnation,     // the device's residual met the tolerance, the true one did not, and replacing
                    // the residual (starting again from x) no longer lowered the true one
};
const char* name(SolverStatus s);

enum class CgVariant {
    classic,          // 3 kernels per iteration beside the operator: p.q, the update (with r.z and r.r), p
    pipelined,        // Chronopoulos and Gear (ViennaCL's form): one reduction phase, 2 kernels beside the
                      // operator (the update with Jacobi's u = M r; the three dot products); as stable as classic
    ghysels_vanroose, // Ghysels and Vanroose 2014: 1 kernel beside the operator (with Jacobi too), the
                      // reduction overlapping the product; more recurrences, so less stable on
                      // ill-conditioned matrices (residual replacement every replacement_interval)
    automatic,        // pipelined on GPUs for systems of at most 2^19 unknowns, where launches cost more
                      // than its extra vector traffic, classic otherwise (see automatic_variant)
};
// The variant `automatic` runs for n unknowns on a device of type `device`: on GPUs the pipelined
// form while launches dominate an iteration (2-D Poisson up to 512^2), classic above, where the
// pipelined update's lower bandwidth costs more than its saved launches; CPUs, where launches are
// cheap, always classic. docs/performance.md (Krylov solvers) has the measurements.
CgVariant automatic_variant(std::uint64_t n, DeviceType device);

struct SolverReport {
    std::string method; // "cg", "pipelined cg", "pipelined cg (ghysels-vanroose)", "bicgstab", "gmres", "fgmres"
    SolverStatus status = SolverStatus::max_iterations;
    std::int64_t iterations = 0;        // the iterate returned in x is after this many iterations
    std::int64_t status_iteration = -1; // where breakdown or NaN appeared (or convergence); -1 if none
    double rhs_norm = 0;                // |b|
    double residual = 0;                // |b - A x|, recomputed at the end from x (see converged)
    double relative_residual = 0;       // residual / |b| (0 for b = 0)
    // Times the device's residual met the tolerance while the true residual did not, so that the
    // solve started again from x with every recurrence recomputed (residual replacement).
    std::int64_t replacements = 0;
    // (iteration, |r| / |b| of the solver's own residual) at every checked iteration, and at the end.
    std::vector<std::pair<std::int64_t, double>> history;
    double seconds = 0; // the iterations, from the first enqueue to the last completion
    double ms_per_iteration = 0;
    double bytes_per_iteration = 0;    // the traffic counted: each vector and the operator once a pass
    double gbps = 0;                   // bytes_per_iteration over the time, 0 where the operator's is unknown
    double launches_per_iteration = 0; // kernel launches (the solver's and the operator's) per iteration
    bool fused_dot = false;            // the operator's product carried the solver's dot product
    // The operator's form of the product that the solve kept (a sparse matrix's SpMV format; empty
    // for an operator with one form), and where CG tried its forms in the first iterations
    // (SolverOptions::try_forms), each form's device time per product (median, ms; with the dot
    // product where it fused one or ran one beside the product).
    std::string operator_form;
    std::vector<std::pair<std::string, double>> form_trial_ms;
    bool converged() const { return status == SolverStatus::converged; }
};

template <class T> struct SolverOptions {
    double rtol = 1e-8; // stop when |r| <= max(rtol * |b|, atol)
    double atol = 0;
    std::int64_t max_iterations = 0;  // 0: 10 * rows, at least 100
    Preconditioner<T> preconditioner; // none by default
    // k: the host looks at the residual every k iterations. With a preconditioner other than
    // Jacobi (its kernels are not ended by the device's stop flag), every iteration, with at most
    // two checks in flight, so that at most two iterations' preconditioner work runs past the stop.
    int check_interval = 10;
    int ring_depth = 4;            // checks in flight: how far the host may run ahead of the device
    int replacement_interval = 50; // m: Ghysels-Vanroose recomputes its recurrences every m iterations (0: never)
    // GMRES(m) and FGMRES(m): the Arnoldi vectors kept before a restart, from 1 to max_restart (the
    // solve holds m + 2 vectors of n values, FGMRES with a preconditioner m more).
    int restart = 30;
    CgVariant variant = CgVariant::automatic;
    // CG takes a dot product from the operator's product where the operator offers it
    // (FusedDotOperator in xgpu/operator.hpp): unset or true, wherever it can; false never.
    std::optional<bool> fused_dots;
    // CG first checks that A equals its transpose (an operator with asymmetry(), such as a sparse
    // matrix: downloaded and compared on the host in O(nnz)); an asymmetric one throws InvalidArgument naming the first
    // entry that differs from its mirror, before any work.
    bool check_symmetry = false;
    // CG (every variant) may try the operator's interchangeable forms of its product (a sparse
    // matrix's SpMV formats whose device layout costs nothing more to use: the CSR formats, and
    // SELL or packeted once built) during its first iterations, form_trial_iterations each, timed
    // with device events, and keep the fastest for the rest of the solve: the iterates do not
    // change (the forms' products agree up to rounding), the host waits once for the trial's
    // last event. Unset: where XGPU_AUTOTUNE is on or force and the matrix's format is automatic
    // (not forced by XGPU_SPMV_FORMAT); true: always (where the operator has several forms).
    std::optional<bool> try_forms;
    int form_trial_iterations = 3;
    // Called at every check the host reads (iteration, |r| / |b|), from the solving thread.
    std::function<void(std::int64_t, double)> progress;
    // Called after every iteration that ran, with its number and the iterate x (scipy's
    // callback(xk)), from the solving thread. The host then waits for each iteration before it
    // enqueues the next (as check_interval 1 with no check in flight): a small solve's iteration
    // costs a round trip to the device more, and the callback's own time.
    std::function<void(std::int64_t, const Array<T>&)> callback;
};

namespace detail {
template <class T> SolverReport cg(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o);
template <class T>
SolverReport bicgstab(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o);
template <class T>
SolverReport gmres(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o);
template <class T>
SolverReport fgmres(const OperatorRef<T>& a, const Array<T>& b, Array<T>& x, const SolverOptions<T>& o);
} // namespace detail

// Conjugate gradients for a symmetric positive definite A (classic or pipelined: options.variant).
// x holds the initial guess (an empty x starts from zero and is allocated) and receives the answer.
template <class T, class Op>
requires LinearOperator<Op, T> SolverReport cg(const Op& a, const Array<T>& b, Array<T>& x,
                                               const SolverOptions<T>& o = {}) {
    if (o.check_symmetry) {
        if constexpr (SymmetryCheckedOperator<Op>) {
            if (const std::string why = a.asymmetry(std::is_same_v<T, float> ? 1e-6 : 1e-12); !why.empty())
                throw InvalidArgument("xgpu: cg needs a symmetric matrix: " + why);
        } else {
            throw InvalidArgument("xgpu: cg: check_symmetry needs an operator with asymmetry() (a sparse matrix)");
        }
    }
    return detail::cg(detail::operator_ref<T>(a), b, x, o);
}

// BiCGStab for a general square A (right preconditioning), with the same options and report.
template <class T, class Op>
requires LinearOperator<Op, T> SolverReport bicgstab(const Op& a, const Array<T>& b, Array<T>& x,
                                                     const SolverOptions<T>& o = {}) {
    return detail::bicgstab(detail::operator_ref<T>(a), b, x, o);
}

// Restarted GMRES(m) for a general square A (right preconditioning, m = options.restart): the
// residual it minimises over each cycle's Krylov space is its check; iterations count Arnoldi
// steps. x changes at the end of each cycle only, so a callback sees x there and once more where
// the solve stops mid-cycle (scipy's gmres with callback_type 'x').
template <class T, class Op>
requires LinearOperator<Op, T> SolverReport gmres(const Op& a, const Array<T>& b, Array<T>& x,
                                                  const SolverOptions<T>& o = {}) {
    return detail::gmres(detail::operator_ref<T>(a), b, x, o);
}

// Flexible GMRES(m) (Saad 1993): as gmres, for a preconditioner that may change from one
// application to the next (a multigrid cycle with a Krylov coarse solve, an inner iteration),
// at m more vectors of n values. Without one, or with Jacobi, it is gmres.
template <class T, class Op>
requires LinearOperator<Op, T> SolverReport fgmres(const Op& a, const Array<T>& b, Array<T>& x,
                                                   const SolverOptions<T>& o = {}) {
    return detail::fgmres(detail::operator_ref<T>(a), b, x, o);
}

#define XGPU_SOLVER_EXTERN(T)                                                                                          \
    extern template SolverReport detail::cg(const detail::OperatorRef<T>&, const Array<T>&, Array<T>&,                 \
                                            const SolverOptions<T>&);                                                  \
    extern template SolverReport detail::bicgstab(const detail::OperatorRef<T>&, const Array<T>&, Array<T>&,           \
                                                  const SolverOptions<T>&);                                            \
    extern template SolverReport detail::gmres(const detail::OperatorRef<T>&, const Array<T>&, Array<T>&,              \
                                               const SolverOptions<T>&);                                               \
    extern template SolverReport detail::fgmres(const detail::OperatorRef<T>&, const Array<T>&, Array<T>&,             \
                                                const SolverOptions<T>&);
XGPU_SOLVER_EXTERN(float)
XGPU_SOLVER_EXTERN(double)
#undef XGPU_SOLVER_EXTERN

} // namespace xgpu
