// Smoothed aggregation's parts (xgpu/amg.hpp), one step a file:
//   aggregation.cpp   strength of connection and the aggregates (MIS-2 of the strength graph)
//   prolongator.cpp   the tentative prolongator (each aggregate's QR of B) and its smoothing
//   galerkin.cpp      the coarse operator R A P
//   smoothers.cpp     each level's smoother: rho(D^-1 A), L1 row sums, Chebyshev's coefficients
//   coarse.cpp        the coarsest level's inverse (dense LU on the host)
//   hierarchy.cpp     the levels built from those steps, refreshed through the same steps, the
//                     report, and SmoothedAggregation (the precision chosen once)
//   cycle.cpp         the V-cycle
// The kernels are kernels/amg.kernel's; the products the sparse layer's.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "../sparse/spmv.hpp"
#include "xgpu/amg.hpp"
#include "xgpu/scan.hpp"

namespace xgpu::amg::detail {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The coarsest level's sweeps of the smoother where it is too large for a dense inverse
// (max_dense rows): the solve there is then approximate, as a coarse level's smoothing is.
inline constexpr int coarse_sweeps = 21;
// Rows up to which the host inverts the coarsest level (128 MB in float64, an LU of seconds).
inline constexpr std::size_t max_dense = 4000;
// Rounds of the independent set before the setup gives up (each decides at least the undecided
// node of the largest key; a handful decide most).
inline constexpr int max_set_rounds = 400;
// The second aggregation pass's roots: nodes with at least this percentage of their strong
// neighbours still free.
inline constexpr std::uint32_t second_pass_share = 75;

template <class S> struct Level {
    sparse::Csr<S> a, p, r; // the operator; the prolongator from the next level and its transpose
    // P not stored (p empty, r kept): the finest level's with one near-null-space vector, applied
    // as (I - omega D^-1 A) T from A, the aggregates and the coarse B (kernels/amg.kernel).
    bool implicit_p = false;
    double p_omega = 0;            // the prolongator's smoothing over rho
    Array<std::int32_t> aggregate; // each row's aggregate (a column of P)
    Array<S> candidate;            // the near-null-space vectors B, rows x k (T's columns: each
                                   // aggregate's QR of B; empty on level 0 for the constant)
    Array<S> l1;                   // L1-Jacobi's row sums (the other smoothers weigh by the diagonal)
    Preconditioner<S> own;         // the user's smoother (SmootherFactory), where one was given
    // Chebyshev's step k: d = c_d[k] d + c_r[k] D^-1 (b - A x), y = x + d.
    std::vector<double> c_d, c_r;
    double rho = 0;
    bool ax_apart = false; // the smoothers' A x by sparse::spmv (its product is not a work-item a row)
    // work: the level's iterate, its other half (where a smoothing takes more than one step),
    // residual, right-hand side, Chebyshev's direction (the user's smoother's M r)
    mutable Array<S> x, t, res, b, d;
};

template <class S> struct Hierarchy {
    Context ctx;
    Options o;
    SmootherFactory<S> own_smoother; // the user's, or empty for o.smoother
    std::vector<Level<S>> levels;
    Array<S> inverse;                            // the coarsest level's, n x n by columns
    Kernel smooth, dense, prolong, scale_coarse; // the cycle's: held, not looked up each cycle

    std::size_t k = 1; // the near-null-space candidates: columns of B, coarse rows per aggregate
    // The levels of a (hierarchy.cpp); b: the finest level's near-null-space vectors, n x k by
    // rows (empty: the constant).
    void build(const sparse::Csr<S>& a, const Array<S>& b, Report& report);
    // New numbers for a of the same pattern, on the kept aggregates and patterns.
    void refresh(const sparse::Csr<S>& a, Report& report);
    void cycle(std::size_t l, const Array<S>& b, Array<S>& out) const; // cycle.cpp

private:
    // Level l's prolongator and restriction from its operator and its `count` aggregates `agg`,
    // and the next level's operator, returned (on the kept patterns where `refreshing`); the next
    // level's B into `next_candidate` where building.
    sparse::Csr<S> coarsen(std::size_t l, const Array<std::int64_t>& agg, std::int64_t count, bool refreshing,
                           Array<S>& next_candidate, Report& report);
    // The smoothers, the coarsest level's solver, the report's totals.
    void finish(Report& report, Clock::time_point start);
};

inline unsigned amg_group(const Context& ctx) {
    return sparse::detail::group_size(ctx);
}

// kernels/amg.kernel's kernel `name` for values S.
template <class S> Kernel amg_kernel(const Context& ctx, const char* name) {
    const unsigned wg = amg_group(ctx);
    return xgpu::detail::generated_kernel(
        ctx, fmt::format("{}|g{}|{}", sparse::detail::spmv_key<S, std::int32_t>("amg"), wg, name),
        [&] {
            return codegen::fill("amg.kernel", {{"spmv_h", sparse::detail::spmv_support<S, std::int32_t>()},
                                                {"group_size", std::to_string(wg)}});
        },
        name);
}

inline Grid rows_grid(const Context& ctx, std::uint64_t rows) {
    const unsigned wg = amg_group(ctx);
    return codegen::groups_grid((rows + wg - 1) / wg, wg);
}

// Exclusive scan of flag[0 .. n) (flag has n + 1 elements, the last 0): the numbers, and the count.
inline Array<std::int64_t> numbering(const Array<std::int64_t>& flag, std::int64_t& count) {
    Array<std::int64_t> at = empty<std::int64_t>(flag.context(), {flag.size()});
    ScanKernel<std::int64_t>(flag.context(), "a + b", "0").exclusive(flag, at);
    count = sparse::detail::read_one(at, flag.size() - 1);
    return at;
}

// scale / d, and 0 where d is 0: a coarse level's rows of the zero columns that a QR of
// rank-deficient B leaves in P (the whole row and column of the coarse operator zero) take no part
// in the smoothers or the spectral estimate, as PyAMG's inverse diagonal.
template <class S> Array<S> inverse_or_zero(const Array<S>& d, double scale) {
    return where(d == S(0), S(0), S(scale) / d);
}

// a with values of type T (the same matrix where S is T).
template <class S, class T> sparse::Csr<T> to_type(const sparse::Csr<S>& a) {
    if constexpr (std::is_same_v<S, T>)
        return a;
    else
        return sparse::Csr<T>(a.context(), a.rows(), a.cols(), a.row_ptr(), a.col_idx(),
                              a.values().template astype<T>());
}

// The device bytes of a level's matrix: entries, row pointers, diagonal.
template <class S> std::size_t csr_bytes(const sparse::Csr<S>& a) {
    return a.nnz() * (sizeof(S) + sizeof(std::int32_t)) + std::size_t(a.rows() + 1) * sizeof(std::int32_t) +
           a.diagonal().size() * sizeof(S);
}

// aggregation.cpp: the aggregates of a's rows (negative: in none) and their count.
template <class S> Array<std::int64_t> aggregate(const sparse::Csr<S>& a, double theta, std::int64_t& count);

// smoothers.cpp: rho(D^-1 A) (Lanczos, the estimator of the preconditioner layer); and level L's
// smoother for the options or the user's factory `own` (coarsest: the level the cycle ends on).
template <class S> double spectral_radius(const sparse::Csr<S>& a, int steps);
template <class S> void setup_smoother(Level<S>& L, const Options& o, const SmootherFactory<S>& own, bool coarsest);

// prolongator.cpp: P = (I - omega D^-1 A) T with T each aggregate's QR of B (`candidate`; empty:
// the constant) over `count` aggregates of k columns; the coarse level's B into `coarse`. With
// `pattern` (a refresh), A T on P's kept pattern.
template <class S>
sparse::Csr<S> prolongator(const sparse::Csr<S>& a, const Array<std::int64_t>& agg, std::int64_t count, std::size_t k,
                           const Array<S>& candidate, double omega, const sparse::Csr<S>* pattern, Array<S>& coarse);

// galerkin.cpp: R A P (on `pattern`'s entries where given: a refresh).
template <class S>
sparse::Csr<S> galerkin(const sparse::Csr<S>& r, const sparse::Csr<S>& a, const sparse::Csr<S>& p,
                        const sparse::Csr<S>* pattern);

// coarse.cpp: the inverse of a small matrix by columns (singular unknowns left out, counted in
// `dropped`).
template <class S> std::vector<S> dense_inverse(const sparse::Csr<S>& a, std::size_t& dropped);

// hierarchy.cpp: a hierarchy in its storage precision S, seen from values T (S = T, or float for a
// double solve): the precision is chosen once, where SmoothedAggregation makes one.
template <class T> class Stored {
public:
    virtual ~Stored() = default;
    virtual const Context& context() const = 0;
    virtual std::size_t levels() const = 0;
    virtual void cycle(const Array<T>& x, Array<T>& y) const = 0;
    virtual void refresh(const sparse::Csr<T>& a, Report& report) = 0;
    // The finest level's pattern (what a refresh must match).
    virtual const Array<std::int32_t>& fine_row_ptr() const = 0;
    virtual const Array<std::int32_t>& fine_col_idx() const = 0;
    virtual sparse::Csr<T> operator_at(std::size_t l) const = 0;
    virtual sparse::Csr<T> prolongator_at(std::size_t l) const = 0;
    virtual sparse::Csr<T> restriction_at(std::size_t l) const = 0;
    virtual Array<T> candidate_at(std::size_t l) const = 0;
    virtual Array<std::int64_t> aggregates_at(std::size_t l) const = 0;
};

} // namespace xgpu::amg::detail
