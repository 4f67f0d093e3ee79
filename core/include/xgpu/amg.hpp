// Algebraic multigrid: smoothed aggregation (Vanek, Mandel and Brezina 1996), set up and applied on
// the device, as a preconditioner for the Krylov solvers (xgpu/solver.hpp).
//
//   xgpu::sparse::Csr<double> A(ctx, xgpu::sparse::poisson<double>(1024, 1024));
//   xgpu::amg::SmoothedAggregation<double> ml(A);        // the hierarchy, built on the device
//   std::cout << ml.report();                             // levels, sizes, complexities, setup time
//   xgpu::SolverOptions<double> o;
//   o.preconditioner = ml;                                // a V-cycle per application
//   auto r = xgpu::cg(A, b, x, o);
//
// Setup, level by level: strength of connection (symmetric, theta), aggregation by a distance-2
// maximal independent set of the strength graph, the tentative prolongator from the constant
// vector, one damped Jacobi step on it (omega = 4/3 / rho(D^-1 A), rho by Lanczos), and
// the Galerkin product R A P with R = P^T (sparse::multiply and sparse::transpose); until the
// level has at most max_coarse rows, whose inverse the host computes once (dense LU; up to 4000
// rows, a larger coarsest level is smoothed) and the device applies. A singular coarsest level (a
// pure Neumann problem's) is inverted on the complement of its null space, as a pseudo-inverse
// would, so that a consistent singular system converges. The host reads only sizes and counts.
// The cycle is a V-cycle with the same smoother before and after the coarse correction, so it is
// symmetric (CG may take it) where A is. With one near-null-space vector the finest P is not
// stored but applied from A, the aggregates and the coarse B (prolongator_at(0) gives R's
// transpose).
//
// Deterministic: aggregation keys are a hash of the row index, integer atomics only count, and
// every sum runs in a fixed order, so the same matrix gives the same hierarchy and the same
// iterates on every run. refresh(A) takes new values on the same pattern and recomputes only the
// numbers. `single_precision` stores and cycles the hierarchy in float for a double solve.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "xgpu/array.hpp"
#include "xgpu/preconditioner.hpp"
#include "xgpu/sparse.hpp"

namespace xgpu::amg {

// The most near-null-space vectors a hierarchy takes: each is a coarse row of every aggregate, so
// the coarse operators' rows grow with their number (an elasticity problem's rigid body modes are 6).
inline constexpr std::size_t max_candidates = 32;

enum class Smoother {
    jacobi,    // damped Jacobi, omega / rho(D^-1 A) scaled
    l1_jacobi, // L1-Jacobi: D + the off-diagonal row sums of |a_ij|, undamped (no eigenvalue needed)
    chebyshev, // a Chebyshev polynomial in D^-1 A of chebyshev_degree per sweep, on ChebyshevOptions' interval
};
const char* name(Smoother s);

struct Options {
    double theta = 0.08; // strength of connection: a_ij^2 >= theta^2 |a_ii a_jj| on the finest level
    // theta on level l is theta * theta_decay^l (AMGCL's halving). A coarse operator's many small
    // entries left weak give small aggregates that follow the strong ones alone, and with them
    // denser coarser operators and, in 3-D, more iterations the finer the grid.
    double theta_decay = 0.5;
    std::int64_t max_coarse = 400; // the coarsest level's most rows (solved directly up to 4000)
    int max_levels = 12;
    Smoother smoother = Smoother::jacobi;
    int presmooth = 1, postsmooth = 1; // sweeps before and after the coarse correction (equal: symmetric)
    // The Jacobi smoother's damping, over rho(D^-1 A): the error modes a V-cycle leaves to the
    // smoother span about [rho / 8, rho], not only the upper half that 4/3 balances.
    double omega = 1.7;
    double prolongator_omega = 4.0 / 3.0; // the prolongator's smoothing, over rho(D^-1 A)
    int lanczos_steps = 20;               // Lanczos steps for rho(D^-1 A), each level
    int chebyshev_degree = 2;             // the Chebyshev smoother's products per sweep
    bool single_precision = false;        // a double solve with the hierarchy in float
};

// A smoother of one's own, or one of the preconditioner layer's on each level (xgpu::Chebyshev,
// xgpu::Jacobi): made from each level's operator at the setup and at each refresh; each sweep is
// x <- x + M (b - A x), M what it returned (of the level's rows and context), presmooth and
// postsmooth times, and coarse_sweeps times on a coarsest level too large for a dense inverse.
// The levels are in the solve's precision (not with single_precision for a double solve).
template <class T> using SmootherFactory = std::function<Preconditioner<T>(const sparse::Csr<T>& level)>;

// What a setup made and what it cost.
struct Report {
    struct Level {
        std::int64_t rows = 0;
        std::size_t nnz = 0;
        double rho = 0; // the estimate of rho(D^-1 A)
    };
    std::vector<Level> levels;
    double operator_complexity = 0; // all levels' entries over the finest's
    double grid_complexity = 0;     // all levels' rows over the finest's
    // Device memory of the hierarchy: A, P and R of every level, the smoothers and work vectors; not
    // the finest A, except the float copy of its values that a single_precision hierarchy makes.
    std::size_t bytes = 0;
    std::size_t fine_bytes = 0; // the finest A's (row pointers, columns, values, diagonal)
    // Setup seconds by phase, and in all.
    double strength_aggregation = 0, prolongator = 0, galerkin = 0, coarse_solve = 0, total = 0;
    std::string precision; // "float64", "float32", or "float32 (for float64)"
    std::string coarse;    // the coarsest level's solver: its dense inverse, or smoothing where too large
};
std::ostream& operator<<(std::ostream& os, const Report& r);

namespace detail {
template <class T> class Stored;
}

// A handle: copies (a Preconditioner holds one) share the hierarchy and its work vectors, so one
// V-cycle of a hierarchy runs at a time, and refresh through any copy refreshes them all.
template <class T> class SmoothedAggregation {
public:
    using value_type = T;
    // Builds the hierarchy of A (square, real, with a positive diagonal and finite values; each
    // checked before any work, InvalidArgument or ShapeError naming the problem).
    explicit SmoothedAggregation(const sparse::Csr<T>& a, const Options& o = {});
    // With near-null-space vectors of A (the constant by default): what A maps to nearly zero,
    // which each aggregate's columns of the tentative prolongator span. b is one vector (rows
    // values, none zero), e.g. the rigid translation of a problem scaled row by row, or k of them
    // (rows x k, by rows; k <= max_candidates), e.g. an elasticity problem's rigid body modes: then each
    // aggregate has k columns, an orthonormal basis of B on its nodes (a QR of each aggregate's
    // block, as PyAMG's fit_candidates), and the coarse levels k rows an aggregate.
    SmoothedAggregation(const sparse::Csr<T>& a, const Array<T>& b, const Options& o = {});
    // With a smoother of one's own (SmootherFactory) in place of o.smoother; b as above, or empty
    // for the constant.
    SmoothedAggregation(const sparse::Csr<T>& a, const Array<T>& b, const Options& o, SmootherFactory<T> smoother);

    // New values for A on the same sparsity pattern: the aggregates, the pattern of P and R and of
    // every coarse operator are kept; the values, rho, the smoothers and the coarse inverse are
    // recomputed. Another pattern or context is refused (InvalidArgument). All or nothing: the new
    // hierarchy replaces the old once complete, so a refresh holds both for a while.
    void refresh(const sparse::Csr<T>& a);

    std::int64_t rows() const { return rows_; }
    std::int64_t cols() const { return rows_; }
    const Context& context() const;
    // y = M x: one V-cycle for A y = x from y = 0.
    void apply(const Array<T>& x, Array<T>& y) const;
    void apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const;

    const Report& report() const { return report_; }
    std::size_t levels() const { return report_.levels.size(); }
    // Level l's operator A_l, prolongator P_l (to level l from level l + 1) and restriction
    // R_l = P_l^T, in T (a single_precision hierarchy's converted back); the last level has no P
    // and R (InvalidArgument).
    sparse::Csr<T> operator_at(std::size_t l) const;
    sparse::Csr<T> prolongator_at(std::size_t l) const;
    sparse::Csr<T> restriction_at(std::size_t l) const;
    // Level l's aggregate of each of its rows (the column of its entry in the tentative P; negative
    // for a row without strong neighbours, which is in no aggregate).
    Array<std::int64_t> aggregates_at(std::size_t l) const;
    // Level l's near-null-space vectors: b (or the constant) on level 0, then each aggregate's R
    // of the level above's QR (one vector: its norm), so that the tentative prolongator maps level
    // l + 1's onto level l's. rows_l values for one vector, rows_l x k for k.
    Array<T> candidate_at(std::size_t l) const;

private:
    std::int64_t rows_ = 0;
    Options o_;
    Report report_;
    std::shared_ptr<detail::Stored<T>> h_; // in T, or in float for single_precision with T = double
};

extern template class SmoothedAggregation<float>;
extern template class SmoothedAggregation<double>;

} // namespace xgpu::amg
