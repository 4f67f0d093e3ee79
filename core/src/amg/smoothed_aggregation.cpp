// Smoothed aggregation multigrid (xgpu/amg.hpp): the setup's phases as kernels of
// kernels/amg.kernel and the sparse layer's products, the V-cycle as Jacobi sweeps and SpMVs, the
// coarsest level's inverse from a dense LU on the host.
#include "xgpu/amg.hpp"

#include <chrono>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "../sparse/spmv.hpp"
#include "xgpu/reduction.hpp"
#include "xgpu/scan.hpp"

namespace xgpu::amg {

const char* name(Smoother s) {
    switch (s) {
    case Smoother::jacobi: return "jacobi";
    case Smoother::l1_jacobi: return "l1_jacobi";
    case Smoother::chebyshev: return "chebyshev";
    }
    return "?";
}

namespace detail {

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
    // Chebyshev's step k: d = c_d[k] d + c_r[k] D^-1 (b - A x), y = x + d.
    std::vector<double> c_d, c_r;
    double rho = 0;
    bool ax_apart = false; // the smoothers' A x by sparse::spmv (its product is not a work-item a row)
    // work: the level's iterate, its other half (where a smoothing takes more than one step),
    // residual, right-hand side, Chebyshev's direction
    mutable Array<S> x, t, res, b, d;
};

template <class S> struct Hierarchy {
    Context ctx;
    Options o;
    std::vector<Level<S>> levels;
    Array<S> inverse;                            // the coarsest level's, n x n by columns
    Kernel smooth, dense, prolong, scale_coarse; // the cycle's: held, not looked up each cycle

    std::size_t k = 1; // the near-null-space candidates: columns of B, coarse rows per aggregate
    // reuse: refresh's numbers on the kept aggregates; b: the finest level's near-null-space
    // vectors, n x k by rows (empty: the constant).
    void setup(const sparse::Csr<S>& a, Report& report, bool reuse, const Array<S>& b = {});
    void cycle(std::size_t l, const Array<S>& b, Array<S>& out) const;
};

namespace {

using sparse::detail::read_one;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

unsigned amg_group(const Context& ctx) {
    return sparse::detail::group_size(ctx);
}

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

Grid rows_grid(const Context& ctx, std::uint64_t rows) {
    const unsigned wg = amg_group(ctx);
    return codegen::groups_grid((rows + wg - 1) / wg, wg);
}

// Exclusive scan of flag[0 .. n) (flag has n + 1 elements, the last 0): the numbers, and the count.
Array<std::int64_t> numbering(const Array<std::int64_t>& flag, std::int64_t& count) {
    Array<std::int64_t> at = empty<std::int64_t>(flag.context(), {flag.size()});
    ScanKernel<std::int64_t>(flag.context(), "a + b", "0").exclusive(flag, at);
    count = read_one(at, flag.size() - 1);
    return at;
}

// scale / d, and 0 where d is 0: a coarse level's rows of the zero columns that a QR of
// rank-deficient B leaves in P (the whole row and column of the coarse operator zero) take no part
// in the smoothers or the spectral estimate, as PyAMG's inverse diagonal.
template <class S> Array<S> inverse_or_zero(const Array<S>& d, double scale) {
    return where(d == S(0), S(0), S(scale) / d);
}

// The aggregates of a's rows (MIS-2 of the strength graph, kernels/amg.kernel) and their count.
template <class S> Array<std::int64_t> aggregate(const sparse::Csr<S>& a, double theta, std::int64_t& count) {
    const Context& ctx = a.context();
    const Queue q = ctx.current_queue();
    const auto n = std::uint64_t(a.rows());
    const Grid g = rows_grid(ctx, n), g1 = rows_grid(ctx, n + 1);
    Array<std::uint8_t> strong = empty<std::uint8_t>(ctx, {std::max<std::size_t>(a.nnz(), 1)});
    amg_kernel<S>(ctx, "xgpu_amg_strength")
        .launch(q, g, a.row_ptr(), a.col_idx(), a.values(), a.diagonal(), strong, n, S(theta * theta));
    Array<std::uint64_t> key = empty<std::uint64_t>(ctx, {n}), near = empty<std::uint64_t>(ctx, {n});
    Array<std::uint8_t> settled = empty<std::uint8_t>(ctx, {n});
    const Kernel init = amg_kernel<S>(ctx, "xgpu_amg_mis_init");
    init.launch(q, g, a.row_ptr(), strong, strong, key, n, std::uint32_t(0));
    const Kernel near_pass = amg_kernel<S>(ctx, "xgpu_amg_mis_near"),
                 decide = amg_kernel<S>(ctx, "xgpu_amg_mis_decide");
    Array<std::uint32_t> left = zeros<std::uint32_t>(ctx, {1});
    // Each round decides at least the undecided node of the largest key; in practice a handful
    // of rounds decide most, and later rounds skip the settled nodes. Checked every other round.
    const auto independent_set = [&](const Array<std::uint8_t>& graph) {
        settled.fill(0);
        for (int round = 0;; ++round) {
            left.fill(0);
            near_pass.launch(q, g, a.row_ptr(), a.col_idx(), graph, key, near, settled, n);
            decide.launch(q, g, a.row_ptr(), a.col_idx(), graph, key, near, left, n);
            if (round % 2 == 1 && read_one(left, 0) == 0) break;
            if (round > 400) throw Error("xgpu: amg: the independent set did not settle in 400 rounds");
        }
    };
    Array<std::int64_t> flag = empty<std::int64_t>(ctx, {n + 1});
    const Kernel join = amg_kernel<S>(ctx, "xgpu_amg_join"), roots = amg_kernel<S>(ctx, "xgpu_amg_roots");
    Array<std::int64_t> agg = empty<std::int64_t>(ctx, {n}), next = empty<std::int64_t>(ctx, {n});
    agg.fill(-1);
    count = 0;
    // The roots with their neighbours, then the rest join.
    independent_set(strong);
    roots.launch(q, g1, key, flag, n);
    {
        const Array<std::int64_t> number = numbering(flag, count);
        join.launch(q, g, a.row_ptr(), a.col_idx(), strong, key, number, agg, next, left, n, std::int64_t(0),
                    std::uint32_t(1));
        std::swap(agg, next);
    }
    // Second pass (after Kelley and Rajamanickam's MIS-2 coarsening): the nodes still without an
    // aggregate take an independent set of their own among themselves, its roots limited to
    // nodes with at least 3/4 of their strong neighbours still free, each root with its free
    // neighbours a new aggregate. Without it those nodes swell the first aggregates into large
    // irregular ones, and CG's iterations grow with the grid (docs/performance.md, multigrid).
    {
        Array<std::uint8_t> free = empty<std::uint8_t>(ctx, {std::max<std::size_t>(a.nnz(), 1)});
        amg_kernel<S>(ctx, "xgpu_amg_unaggregated").launch(q, g, a.row_ptr(), a.col_idx(), strong, agg, free, n);
        init.launch(q, g, a.row_ptr(), strong, free, key, n, std::uint32_t(75));
        independent_set(free);
        roots.launch(q, g1, key, flag, n);
        std::int64_t more = 0;
        const Array<std::int64_t> number = numbering(flag, more);
        join.launch(q, g, a.row_ptr(), a.col_idx(), strong, key, number, agg, next, left, n, count, std::uint32_t(1));
        std::swap(agg, next);
        count += more;
    }
    left.fill(0);
    join.launch(q, g, a.row_ptr(), a.col_idx(), strong, key, flag, agg, next, left, n, std::int64_t(0),
                std::uint32_t(0));
    std::swap(agg, next);
    if (read_one(left, 0) > 0) { // nodes out of every aggregate's reach: aggregates of their own
        amg_kernel<S>(ctx, "xgpu_amg_left_flags").launch(q, g1, agg, flag, n);
        std::int64_t extra = 0;
        const Array<std::int64_t> at = numbering(flag, extra);
        amg_kernel<S>(ctx, "xgpu_amg_left_place").launch(q, g, agg, at, n, count);
        count += extra;
    }
    return agg;
}

// The largest eigenvalue of the symmetric tridiagonal matrix (alpha on the diagonal, beta beside
// it): bisection on the Sturm count, to double precision.
double tridiagonal_max(const std::vector<double>& alpha, const std::vector<double>& beta) {
    const std::size_t m = alpha.size();
    double lo = 0, hi = 0; // Gershgorin
    for (std::size_t i = 0; i < m; ++i) {
        const double r = (i > 0 ? std::abs(beta[i - 1]) : 0.0) + (i + 1 < m ? std::abs(beta[i]) : 0.0);
        lo = i == 0 ? alpha[i] - r : std::min(lo, alpha[i] - r);
        hi = i == 0 ? alpha[i] + r : std::max(hi, alpha[i] + r);
    }
    const auto above = [&](double x) { // eigenvalues greater than x
        std::size_t below = 0;
        double d = 1;
        for (std::size_t i = 0; i < m; ++i) {
            d = alpha[i] - x - (i > 0 ? beta[i - 1] * beta[i - 1] / d : 0.0);
            if (d == 0) d = -1e-300;
            if (d < 0) ++below;
        }
        return m - below;
    };
    for (int k = 0; k < 200 && hi - lo > 1e-14 * std::max(std::abs(lo), std::abs(hi)); ++k) {
        const double mid = 0.5 * (lo + hi);
        (above(mid) > 0 ? lo : hi) = mid;
    }
    return hi;
}

// rho(D^-1 A) by Lanczos on the device: `steps` steps, the largest Ritz value (a lower bound that
// power iteration approaches far slower; a low estimate over-smooths the prolongator and
// under-damps the smoother). D^-1 A is self-adjoint in <x, y>_D = x^T D y, so Lanczos in that
// inner product has the eigenvalues of the symmetric D^-1/2 A D^-1/2 without scaling A:
// alpha_k = v^T A v, w = D^-1 A v - alpha_k v - beta_k v', beta_k+1 = |w|_D. Each v is kept
// unnormalised, as u with its norm s (v = u / s), the scale applied inside the next step's
// expressions, so that a step reads A once and vectors 11 times. The scalars stay on the device
// until the last step.
template <class S> double spectral_radius(const sparse::Csr<S>& a, const Array<S>& inverse_diagonal, int steps) {
    const Context& ctx = a.context();
    const std::size_t n = std::size_t(a.rows());
    const Array<S> d = a.diagonal();
    // A start with every frequency in it, the same on every run and device.
    Array<S> u = empty<S>(ctx, {n}), y = empty<S>(ctx, {n}), w = empty<S>(ctx, {n}), previous = zeros<S>(ctx, {n});
    amg_kernel<S>(ctx, "xgpu_amg_start").launch(ctx.current_queue(), rows_grid(ctx, n), u, std::uint64_t(n));
    // Rows without a diagonal (a coarse level's zero rows and columns) take no part: 0 from the
    // start, they stay 0 (outside the D norm they would grow unchecked).
    u = where(d == S(0), S(0), u);
    const int m = int(std::min<std::size_t>(std::size_t(steps), n));
    std::vector<Array<S>> alpha, beta; // 0-d
    Array<S> s = sqrt(sum(d * u * u)), s_previous;
    for (int k = 0; k < m; ++k) {
        sparse::spmv(a, u, y); // A v = y / s
        alpha.push_back(dot(u, y) / (s * s));
        if (k + 1 == m) break;
        if (k == 0)
            w = (y * inverse_diagonal - alpha.back() * u) / s;
        else
            w = (y * inverse_diagonal - alpha.back() * u) / s - (beta.back() / s_previous) * previous;
        beta.push_back(sqrt(sum(d * w * w)));
        std::swap(previous, u); // u's buffer free for w's next step, w's the new u
        std::swap(u, w);
        s_previous = s;
        s = beta.back();
    }
    // Stop at the first beta that vanishes (an invariant subspace: its Ritz values are exact).
    std::vector<double> al, be;
    for (int k = 0; k < m; ++k) {
        const double a_k = double(alpha[std::size_t(k)].get()[0]);
        if (!std::isfinite(a_k)) break; // no diagonal at all: s = 0
        al.push_back(a_k);
        if (k + 1 == m) break;
        const double b = double(beta[std::size_t(k)].get()[0]);
        if (!(b > 1e-10 * std::abs(al.back()))) break;
        be.push_back(b);
    }
    return tridiagonal_max(al, be);
}

// The coarsest level's rows up to which the host inverts it (4000: 128 MB in float64, and an LU of
// seconds); a larger one (max_coarse or max_levels let it be) is smoothed instead.
constexpr std::size_t max_dense = 4000;

// The inverse of a small matrix on the host (LU with partial pivoting), by columns; `dropped`
// counts the unknowns left out where the matrix is singular.
//
// A zero row (and column: the operator is R A P) from a zero column of P, and an unknown whose
// pivot vanishes (at most sqrt(eps(S)) times its column's largest entry: well above what the
// Galerkin product's rounding leaves of a singular operator's pivot, some hundred eps, and below
// a regular one; a pure Neumann problem's coarsest level is as singular as A) are left out: their
// row and column become those of the identity, the rest is inverted, and the inverse's row and
// column there are 0. That is the inverse of A restricted to the other unknowns, symmetric where
// A is, and for a consistent right-hand side of a symmetric A with a null space of that
// dimension an exact solution.
template <class S> std::vector<S> dense_inverse(const sparse::Csr<S>& a, std::size_t& dropped) {
    const auto h = a.to_host();
    const std::size_t n = std::size_t(h.rows);
    std::vector<double> a0(n * n, 0.0); // row-major
    for (std::size_t i = 0; i < n; ++i)
        for (auto k = std::size_t(h.row_ptr[i]); k < std::size_t(h.row_ptr[i + 1]); ++k)
            a0[i * n + std::size_t(h.col_idx[k])] += double(h.values[k]);
    std::vector<bool> out_of(n, true); // left out
    std::vector<double> column_max(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            out_of[i] = out_of[i] && a0[i * n + j] == 0;
            column_max[j] = std::max(column_max[j], std::abs(a0[i * n + j]));
        }
    const double tiny = std::sqrt(double(std::numeric_limits<S>::epsilon()));
    std::vector<double> m(n * n);
    std::vector<std::size_t> perm(n);
    // Each singular pivot found restarts the factorization with its unknown left out; a few at most.
    constexpr std::size_t max_singular = 16;
    for (std::size_t found = 0;; ++found) {
        for (std::size_t i = 0; i < n; ++i) {
            perm[i] = i;
            for (std::size_t j = 0; j < n; ++j)
                m[i * n + j] = out_of[i] || out_of[j] ? double(i == j) : a0[i * n + j];
        }
        std::size_t singular = n; // the column of a vanishing pivot
        for (std::size_t c = 0; c < n && singular == n; ++c) {
            std::size_t pivot = c;
            for (std::size_t r = c + 1; r < n; ++r)
                if (std::abs(m[r * n + c]) > std::abs(m[pivot * n + c])) pivot = r;
            if (!out_of[c] && !(std::abs(m[pivot * n + c]) > tiny * column_max[c])) {
                singular = c;
                break;
            }
            if (pivot != c) {
                for (std::size_t j = 0; j < n; ++j)
                    std::swap(m[c * n + j], m[pivot * n + j]);
                std::swap(perm[c], perm[pivot]);
            }
            const double d = m[c * n + c];
            for (std::size_t r = c + 1; r < n; ++r) {
                const double f = m[r * n + c] / d;
                if (f == 0) continue;
                m[r * n + c] = f;
                for (std::size_t j = c + 1; j < n; ++j)
                    m[r * n + j] -= f * m[c * n + j];
            }
        }
        if (singular == n) {
            dropped = found;
            break;
        }
        if (found == max_singular)
            throw InvalidArgument(fmt::format("xgpu: amg: the coarsest level ({} rows) is singular in more than {} "
                                              "dimensions",
                                              n, max_singular));
        out_of[singular] = true;
    }
    // Column j of the inverse: solve L U x = e_perm.
    std::vector<double> x(n);
    std::vector<S> out(n * n);
    for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t i = 0; i < n; ++i) {
            double s = perm[i] == j ? 1.0 : 0.0;
            for (std::size_t k = 0; k < i; ++k)
                s -= m[i * n + k] * x[k];
            x[i] = s;
        }
        for (std::size_t i = n; i-- > 0;) {
            double s = x[i];
            for (std::size_t k = i + 1; k < n; ++k)
                s -= m[i * n + k] * x[k];
            x[i] = s / m[i * n + i];
        }
        for (std::size_t i = 0; i < n; ++i)
            out[j * n + i] = out_of[i] || out_of[j] ? S(0) : S(x[i]);
    }
    return out;
}

} // namespace

template <class S> std::size_t csr_bytes(const sparse::Csr<S>& a) {
    return a.nnz() * (sizeof(S) + sizeof(std::int32_t)) + std::size_t(a.rows() + 1) * sizeof(std::int32_t) +
           a.diagonal().size() * sizeof(S);
}

template <class S> void Hierarchy<S>::setup(const sparse::Csr<S>& a0, Report& report, bool reuse, const Array<S>& b) {
    const auto t_start = Clock::now();
    const Queue q = ctx.current_queue();
    if (!reuse) levels.clear();
    report.levels.clear();
    report.strength_aggregation = report.prolongator = report.galerkin = report.coarse_solve = 0;
    sparse::Csr<S> a = a0;
    // The near-null-space candidate B of each level (empty on the finest: the constant).
    Array<S> candidate = b; // the hierarchy's own (the constructor copies the user's)
    if (!reuse) k = b.ndim() == 2 ? b.shape()[1] : 1;
    for (std::size_t l = 0;; ++l) {
        const bool coarsest = reuse ? l + 1 == levels.size() : a.rows() <= o.max_coarse || int(l) + 1 >= o.max_levels;
        if (!reuse) levels.emplace_back();
        Level<S>& L = levels[l];
        L.a = a;
        if (!reuse) L.candidate = candidate;
        const auto n = std::size_t(a.rows());
        L.x = empty<S>(ctx, {n});
        L.res = empty<S>(ctx, {n});
        if (l > 0) L.b = empty<S>(ctx, {n}); // level 0's right-hand side is the caller's
        if (coarsest) {
            L.rho = 0;
            break;
        }
        auto t0 = Clock::now();
        std::int64_t naggs = 0;
        Array<std::int64_t> agg; // the aggregates, kept in 32 bits between setups
        if (!reuse) {
            agg = aggregate(a, o.theta * std::pow(o.theta_decay, double(l)), naggs);
            // No coarsening (the next level as large as this one): this level is the coarsest.
            if (naggs * std::int64_t(k) >= std::int64_t(n) || naggs == 0) break;
            L.aggregate = agg.template astype<std::int32_t>();
        } else {
            agg = L.aggregate.template astype<std::int64_t>();
            naggs = L.r.rows() / std::int64_t(k);
        }
        const std::int64_t nc = naggs * std::int64_t(k); // the next level's rows
        q.finish();
        report.strength_aggregation += since(t0);
        t0 = Clock::now();
        // The tentative prolongator (each aggregate's QR of B) and its smoothing.
        const Array<S> inverse_diagonal = inverse_or_zero(a.diagonal(), 1);
        L.rho = spectral_radius(a, inverse_diagonal, o.lanczos_steps);
        {
            // T: k entries for each node in an aggregate (those without strong neighbours are in
            // none); rebuilt on refresh rather than kept. First its pattern with one entry a node
            // (the aggregate), whose transpose lists each aggregate's nodes in order.
            Array<std::int64_t> flag = empty<std::int64_t>(ctx, {n + 1});
            amg_kernel<S>(ctx, "xgpu_amg_kept").launch(q, rows_grid(ctx, n + 1), agg, flag, std::uint64_t(n));
            std::int64_t kept = 0;
            const Array<std::int64_t> entry = numbering(flag, kept);
            const auto slots = std::size_t(std::max<std::int64_t>(kept, 1));
            Array<std::int32_t> m_col = empty<std::int32_t>(ctx, {slots});
            amg_kernel<S>(ctx, "xgpu_amg_tentative")
                .launch(q, rows_grid(ctx, n), agg, entry, m_col, std::uint64_t(n), std::uint32_t(1));
            const Array<std::int32_t> m_ptr = entry.template astype<std::int32_t>();
            const sparse::Csr<S> members =
                sparse::transpose(sparse::Csr<S>(ctx, a.rows(), naggs, m_ptr, m_col, zeros<S>(ctx, {slots})));
            Array<std::int32_t> t_ptr, t_col;
            if (k == 1) {
                t_ptr = m_ptr;
                t_col = m_col;
            } else {
                t_ptr = Array<std::int64_t>(entry * std::int64_t(k)).template astype<std::int32_t>();
                t_col = empty<std::int32_t>(ctx, {slots * k});
                amg_kernel<S>(ctx, "xgpu_amg_tentative")
                    .launch(q, rows_grid(ctx, n), agg, entry, t_col, std::uint64_t(n), std::uint32_t(k));
            }
            Array<S> t_val = empty<S>(ctx, {slots * k});
            // R of each aggregate: the coarse level's B (the same again on refresh, B being kept).
            Array<S> coarse = empty<S>(ctx, {std::size_t(nc) * k});
            amg_kernel<S>(ctx, "xgpu_amg_qr")
                .launch(q, rows_grid(ctx, std::uint64_t(naggs)), members.row_ptr(), members.col_idx(), entry,
                        L.candidate.empty() ? t_val : L.candidate, std::uint32_t(L.candidate.empty() ? 1 : 0), t_val,
                        coarse, std::uint64_t(naggs), std::uint32_t(k));
            if (!reuse) candidate = k == 1 ? coarse : coarse.reshape({std::size_t(nc), k});
            // P = T - omega D^-1 A T; on refresh, A T on P's pattern (A T's, which smoothing kept;
            // a P not stored is made anew).
            const sparse::Csr<S> t(ctx, a.rows(), nc, t_ptr, t_col, t_val);
            const sparse::Csr<S> at =
                reuse && !L.implicit_p ? sparse::multiply_values(a, t, L.p) : sparse::multiply(a, t);
            L.p_omega = o.prolongator_omega / L.rho;
            amg_kernel<S>(ctx, "xgpu_amg_smooth")
                .launch(q, rows_grid(ctx, n), at.row_ptr(), at.col_idx(), at.values(), agg, entry, t_val, a.diagonal(),
                        std::uint64_t(n), S(L.p_omega), std::uint32_t(k));
            L.p = sparse::Csr<S>(ctx, a.rows(), nc, at.row_ptr(), at.col_idx(), at.values());
        }
        L.r = sparse::transpose(L.p);
        q.finish();
        report.prolongator += since(t0);
        t0 = Clock::now();
        const sparse::Csr<S> ap = sparse::multiply(a, L.p);
        a = reuse ? sparse::multiply_values(L.r, ap, levels[l + 1].a) : sparse::multiply(L.r, ap);
        // The finest level's P, the largest of the hierarchy (about half the fine matrix's bytes in
        // 2-D Poisson), is not kept where one vector makes T the aggregates and the coarse B: the
        // cycle applies it from A at the cost of A's bytes for P's.
        if (l == 0 && k == 1) {
            L.implicit_p = true;
            L.p = sparse::Csr<S>();
        }
        q.finish();
        report.galerkin += since(t0);
    }
    // The smoothers, and the coarsest level's inverse.
    auto t0 = Clock::now();
    for (std::size_t l = 0; l < levels.size(); ++l) {
        Level<S>& L = levels[l];
        const auto n = std::size_t(L.a.rows());
        // Where the sparse layer's own product for this level is not a work-item a row (long rows,
        // as on 3-D coarse levels, or another format that the environment or the tuning database
        // chose), the smoothers take A x from it: it reads long rows faster than a work-item can.
        L.ax_apart = !L.a.fuses_dot(sparse::Format::automatic);
        // The other half of the iterate, where a smoothing takes more than one step.
        const bool coarsest = l + 1 == levels.size();
        const int steps = (o.smoother == Smoother::chebyshev ? o.chebyshev_degree : 1) *
                          (coarsest ? 21 : std::max(o.presmooth, o.postsmooth));
        L.t = steps > 1 ? empty<S>(ctx, {n}) : Array<S>();
        if (o.smoother == Smoother::l1_jacobi) {
            L.l1 = empty<S>(ctx, {n});
            amg_kernel<S>(ctx, "xgpu_amg_l1")
                .launch(q, rows_grid(ctx, n), L.a.row_ptr(), L.a.values(), L.l1, std::uint64_t(n));
            continue;
        }
        if (L.rho == 0) L.rho = spectral_radius(L.a, inverse_or_zero(L.a.diagonal(), 1), o.lanczos_steps);
        if (o.smoother == Smoother::jacobi) continue;
        // Chebyshev on [rho / 30, 1.1 rho] of D^-1 A (Adams et al. 2003; the bounds of PyAMG and
        // Ifpack2): the three-term recurrence's coefficients for each step of the polynomial.
        L.d = empty<S>(ctx, {n});
        const double upper = 1.1 * L.rho, lower = upper / 30;
        const double theta = (upper + lower) / 2, delta = (upper - lower) / 2, sigma = theta / delta;
        L.c_d = {0.0};
        L.c_r = {1 / theta};
        double r = 1 / sigma;
        for (int k = 1; k < o.chebyshev_degree; ++k) {
            const double next = 1 / (2 * sigma - r);
            L.c_d.push_back(next * r);
            L.c_r.push_back(2 * next / delta);
            r = next;
        }
    }
    smooth = amg_kernel<S>(ctx, o.smoother == Smoother::chebyshev ? "xgpu_amg_chebyshev" : "xgpu_amg_jacobi");
    dense = amg_kernel<S>(ctx, "xgpu_amg_dense");
    prolong = amg_kernel<S>(ctx, "xgpu_amg_prolong");
    scale_coarse = amg_kernel<S>(ctx, "xgpu_amg_scale_coarse");
    const Level<S>& last = levels.back();
    const auto nc = std::size_t(last.a.rows());
    if (nc <= max_dense) {
        std::size_t dropped = 0;
        inverse = to_device(ctx, dense_inverse(last.a, dropped));
        report.coarse = fmt::format("dense inverse of {} rows", nc);
        if (dropped > 0)
            report.coarse += fmt::format(" (singular: {} unknown{} left out)", dropped, dropped > 1 ? "s" : "");
    } else {
        inverse = Array<S>();
        report.coarse =
            fmt::format("21 {} sweeps ({} rows: a dense inverse takes at most {})", name(o.smoother), nc, max_dense);
    }
    q.finish();
    report.coarse_solve = since(t0);
    report.total = since(t_start);
    std::size_t bytes = 0;
    for (std::size_t l = 0; l < levels.size(); ++l) {
        const Level<S>& L = levels[l];
        report.levels.push_back({L.a.rows(), L.a.nnz(), L.rho});
        if (l > 0) bytes += csr_bytes(L.a);
        if (L.p.rows() > 0) bytes += csr_bytes(L.p);
        if (L.r.rows() > 0) bytes += csr_bytes(L.r);
        for (const Array<S>* v :
             std::initializer_list<const Array<S>*>{&L.candidate, &L.l1, &L.x, &L.t, &L.res, &L.b, &L.d})
            bytes += v->empty() ? 0 : v->size() * sizeof(S);
        bytes += L.aggregate.empty() ? 0 : L.aggregate.size() * sizeof(std::int32_t);
    }
    report.bytes = bytes + (inverse.empty() ? 0 : inverse.size() * sizeof(S));
    double nnz = 0, rows = 0;
    for (const auto& v : report.levels) {
        nnz += double(v.nnz);
        rows += double(v.rows);
    }
    report.operator_complexity = nnz / double(report.levels[0].nnz);
    report.grid_complexity = rows / double(report.levels[0].rows);
}

template <class S> void Hierarchy<S>::cycle(std::size_t l, const Array<S>& b, Array<S>& out) const {
    const Level<S>& L = levels[l];
    const Queue q = ctx.current_queue();
    const auto n = std::uint64_t(L.a.rows());
    const Grid g = rows_grid(ctx, n);
    // Smoothing step j from x (nullptr: from zero) into y; Chebyshev's polynomial restarts each
    // sweep of `per` steps.
    const bool chebyshev = o.smoother == Smoother::chebyshev;
    const int per = chebyshev ? o.chebyshev_degree : 1;
    const auto step = [&](int j, const Array<S>* x, Array<S>& y) {
        const auto x_zero = std::uint32_t(x ? 0 : 1);
        // Long rows: A x by the sparse layer's product (several work-items a row), into res, free
        // while smoothing (the residual is made after the pre-smoothing and restricted before the
        // post-smoothing, whose last step may write res itself: each row reads its own A x first).
        const bool split = x && L.ax_apart;
        const auto have_ax = std::uint32_t(split ? 1 : 0);
        if (split) sparse::spmv(L.a, *x, L.res);
        if (chebyshev) {
            const auto k = std::size_t(j % per);
            smooth.launch(q, g, L.a.row_ptr(), L.a.col_idx(), L.a.values(), L.a.diagonal(), S(1), b, x ? *x : b, L.res,
                          L.d, y, n, S(L.c_d[k]), S(L.c_r[k]), x_zero, have_ax);
        } else {
            const bool l1 = !L.l1.empty();
            smooth.launch(q, g, L.a.row_ptr(), L.a.col_idx(), L.a.values(), l1 ? L.l1 : L.a.diagonal(),
                          S(l1 ? 1 : o.omega / L.rho), b, x ? *x : b, L.res, y, n, x_zero, have_ax);
        }
    };
    // `steps` steps from zero (from_zero) or from L.x, the last into *last (nullptr: into L.x, by
    // way of L.t: a step never writes the vector it reads, except a first step from zero).
    const auto smoothing = [&](int steps, bool from_zero, Array<S>* last) {
        for (int j = 0; j < steps; ++j) {
            const Array<S>* x = j == 0 && from_zero ? nullptr : &L.x;
            if (last && j + 1 == steps) {
                step(j, x, *last);
                return;
            }
            if (!x) {
                step(j, x, L.x);
                continue;
            }
            step(j, x, L.t);
            std::swap(L.x, L.t);
        }
    };
    if (l + 1 == levels.size()) {
        if (!inverse.empty())
            dense.launch(q, g, inverse, b, out, n);
        else // too large for a dense inverse: smoothing
            smoothing(21 * per, true, &out);
        return;
    }
    const int pre = o.presmooth * per, post = o.postsmooth * per;
    if (pre > 0) {
        smoothing(pre, true, nullptr);
        L.res.assign(b);
        sparse::spmv(L.a, L.x, L.res, S(-1), S(1));
        sparse::spmv(L.r, L.res, levels[l + 1].b);
    } else {
        L.x.fill(S(0));
        sparse::spmv(L.r, b, levels[l + 1].b);
    }
    const Level<S>& next = levels[l + 1];
    cycle(l + 1, next.b, next.res);
    if (L.implicit_p) {
        const auto nc = std::uint64_t(next.a.rows());
        scale_coarse.launch(q, rows_grid(ctx, nc), next.res, next.candidate, next.x, nc); // next.x: free now
        prolong.launch(q, g, L.a.row_ptr(), L.a.col_idx(), L.a.values(), L.a.diagonal(), L.aggregate,
                       L.candidate.empty() ? next.x : L.candidate, std::uint32_t(L.candidate.empty() ? 1 : 0), next.x,
                       L.x, n, S(L.p_omega));
    } else
        sparse::spmv(L.p, next.res, L.x, S(1), S(1));
    if (post > 0)
        smoothing(post, false, &out);
    else
        out.assign(L.x);
}

} // namespace detail

namespace {

template <class T> void check_matrix(const sparse::Csr<T>& a, const Options& o) {
    if (a.rows() != a.cols())
        throw ShapeError(fmt::format("xgpu: amg: the matrix is {} x {}: it must be square", a.rows(), a.cols()));
    if (a.rows() == 0 || a.nnz() == 0) throw InvalidArgument("xgpu: amg: the matrix is empty");
    if (!(o.theta >= 0) || o.max_coarse < 1 || o.max_levels < 1 || o.presmooth < 0 || o.postsmooth < 0 ||
        !(o.omega > 0) || !(o.prolongator_omega > 0) || o.lanczos_steps < 1 || o.chebyshev_degree < 1 ||
        !(o.theta_decay > 0 && o.theta_decay <= 1))
        throw InvalidArgument(fmt::format("xgpu: amg: bad options: theta {} must be >= 0, theta_decay {} in (0, 1], "
                                          "max_coarse {} and max_levels {} >= 1, presmooth {} and postsmooth {} >= 0, "
                                          "omega {} and prolongator_omega {} > 0, lanczos_steps {} and "
                                          "chebyshev_degree {} >= 1",
                                          o.theta, o.theta_decay, o.max_coarse, o.max_levels, o.presmooth, o.postsmooth,
                                          o.omega, o.prolongator_omega, o.lanczos_steps, o.chebyshev_degree));
    // One pass each, before any work: finite values (a NaN or infinity makes the sum of v * 0 a
    // NaN), a positive diagonal.
    const double finite = double(sum(a.values() * T(0)).get());
    if (finite != 0) throw InvalidArgument("xgpu: amg: the matrix has a NaN or infinite value");
    const double least = double(min(a.diagonal()).get());
    if (!(least > 0))
        throw InvalidArgument(fmt::format("xgpu: amg: the smallest diagonal entry is {}: smoothed aggregation's Jacobi "
                                          "steps need every diagonal entry positive",
                                          least));
}

template <class T> sparse::Csr<float> to_single(const sparse::Csr<T>& a) {
    return sparse::Csr<float>(a.context(), a.rows(), a.cols(), a.row_ptr(), a.col_idx(),
                              a.values().template astype<float>());
}
// The float copy of the finest level's values and diagonal that to_single makes.
template <class T> std::size_t single_bytes(const sparse::Csr<T>& a) {
    return (a.nnz() + std::size_t(a.rows())) * sizeof(float);
}
template <class S, class T> sparse::Csr<T> to_type(const sparse::Csr<S>& a) {
    if constexpr (std::is_same_v<S, T>)
        return a;
    else
        return sparse::Csr<T>(a.context(), a.rows(), a.cols(), a.row_ptr(), a.col_idx(),
                              a.values().template astype<T>());
}

} // namespace

template <class T>
SmoothedAggregation<T>::SmoothedAggregation(const sparse::Csr<T>& a, const Options& o)
    : SmoothedAggregation(a, {}, o) {}

template <class T>
SmoothedAggregation<T>::SmoothedAggregation(const sparse::Csr<T>& a, const Array<T>& b, const Options& o) : o_(o) {
    check_matrix(a, o);
    if (!b.empty()) {
        const bool vector = b.ndim() == 1 && b.size() == std::size_t(a.rows());
        const bool block = b.ndim() == 2 && b.shape()[0] == std::size_t(a.rows()) && b.shape()[1] >= 1;
        if (!vector && !block)
            throw ShapeError(fmt::format("xgpu: amg: the near-null-space vectors have shape {}: they must be one "
                                         "value for each of the matrix's {} rows ({}), or k of them ({}, k)",
                                         to_string(b.shape()), a.rows(), a.rows(), a.rows()));
        if (block && b.shape()[1] > max_candidates)
            throw ShapeError(
                fmt::format("xgpu: amg: {} near-null-space vectors: at most {}", b.shape()[1], max_candidates));
        if (!b.is_contiguous())
            throw InvalidArgument("xgpu: amg: the near-null-space vectors must be contiguous (by rows)");
        if (b.context() != a.context())
            throw InvalidArgument("xgpu: amg: the near-null-space vector is in another context than the matrix");
        const double finite = double(sum(b * T(0)).get());
        if (finite != 0) throw InvalidArgument("xgpu: amg: the near-null-space vector has a NaN or infinite value");
        // One vector (n or n x 1): each node's T entry is its value, normalised; a zero would leave
        // the node out. Several: a node's row of B may be zero, the others spanning the aggregate's
        // block.
        if ((vector || b.shape().back() == 1) && double(min(abs(b)).get()) == 0)
            throw InvalidArgument("xgpu: amg: the near-null-space vector has a zero entry: its row would be left out "
                                  "of the tentative prolongator");
        if (block && b.shape()[1] > 1) {
            const Array<T> largest = max(abs(b), 0); // each column's
            if (double(min(largest).get()) == 0)
                throw InvalidArgument(
                    fmt::format("xgpu: amg: near-null-space vector {} (a column of b) is zero", argmin(largest).get()));
        }
    }
    rows_ = a.rows();
    if (o.single_precision && !std::is_same_v<T, float>) {
        single_ = std::make_shared<detail::Hierarchy<float>>();
        single_->ctx = a.context();
        single_->o = o;
        single_->setup(to_single(a), report_, false,
                       b.empty() ? Array<float>() : Array<float>(b.template astype<float>()));
        report_.bytes += single_bytes(a);
        report_.precision = "float32 (for float64)";
        report_.fine_bytes = detail::csr_bytes(a);
    } else {
        same_ = std::make_shared<detail::Hierarchy<T>>();
        same_->ctx = a.context();
        same_->o = o;
        same_->setup(a, report_, false, b.empty() ? b : b.copy()); // the user's B may change later
        report_.precision = std::is_same_v<T, float> ? "float32" : "float64";
        report_.fine_bytes = detail::csr_bytes(a);
    }
}

template <class T> void SmoothedAggregation<T>::refresh(const sparse::Csr<T>& a) {
    check_matrix(a, o_);
    const Context& ctx = single_ ? single_->ctx : same_->ctx;
    if (a.context() != ctx)
        throw InvalidArgument("xgpu: amg: refresh: the matrix is in another context than the hierarchy");
    const auto& fine_ptr = single_ ? single_->levels[0].a.row_ptr() : same_->levels[0].a.row_ptr();
    const auto& fine_col = single_ ? single_->levels[0].a.col_idx() : same_->levels[0].a.col_idx();
    // The same pattern: the row pointers and columns compared on the device (the kept aggregates,
    // and the products' patterns, belong to it).
    const bool same_pattern = a.rows() == rows_ && a.nnz() == fine_col.size() &&
                              fine_ptr.size() == a.row_ptr().size() && !any(a.row_ptr() != fine_ptr).get() &&
                              !any(a.col_idx() != fine_col).get();
    if (!same_pattern)
        throw InvalidArgument(
            fmt::format("xgpu: amg: refresh: the matrix ({} rows, {} entries) must have the sparsity pattern of "
                        "the one the hierarchy was built for ({} rows, {} entries)",
                        a.rows(), a.nnz(), rows_, fine_col.size()));
    // All or nothing: the new numbers are made in a copy of the hierarchy (sharing the kept
    // aggregates and patterns), which replaces the hierarchy only once complete.
    Report report = report_;
    if (single_) {
        detail::Hierarchy<float> next = *single_;
        next.setup(to_single(a), report, true);
        report.bytes += single_bytes(a);
        *single_ = std::move(next);
    } else {
        detail::Hierarchy<T> next = *same_;
        next.setup(a, report, true);
        *same_ = std::move(next);
    }
    report_ = std::move(report);
}

template <class T> const Context& SmoothedAggregation<T>::context() const {
    return single_ ? single_->ctx : same_->ctx;
}

template <class T> void SmoothedAggregation<T>::apply(const Array<T>& x, Array<T>& y) const {
    if (x.size() != std::size_t(rows_) || y.size() != std::size_t(rows_))
        throw ShapeError(fmt::format("xgpu: amg: the hierarchy has {} rows: x and y have {} and {} elements", rows_,
                                     x.size(), y.size()));
    if (single_) {
        const Array<float> xs = x.template astype<float>();
        Array<float> ys = empty<float>(x.context(), {std::size_t(rows_)});
        single_->cycle(0, xs, ys);
        y.assign(ys.astype<T>());
    } else {
        same_->cycle(0, x, y);
    }
}

template <class T> void SmoothedAggregation<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    Array<T> t = empty<T>(x.context(), {std::size_t(rows_)});
    apply(x, t);
    if (beta == T(0))
        y = alpha * t;
    else
        y = alpha * t + beta * y;
}

template <class T> sparse::Csr<T> SmoothedAggregation<T>::operator_at(std::size_t l) const {
    if (l >= levels()) throw InvalidArgument(fmt::format("xgpu: amg: level {} of {}", l, levels()));
    return single_ ? to_type<float, T>(single_->levels[l].a) : same_->levels[l].a;
}

template <class T> sparse::Csr<T> SmoothedAggregation<T>::prolongator_at(std::size_t l) const {
    if (l + 1 >= levels())
        throw InvalidArgument(fmt::format("xgpu: amg: level {} of {} has no prolongator", l, levels()));
    // A P not stored: R's transpose, the same entries.
    const auto held = [&](const auto& h) {
        const auto& L = h->levels[l];
        return L.implicit_p ? sparse::transpose(L.r) : L.p;
    };
    return single_ ? to_type<float, T>(held(single_)) : held(same_);
}

template <class T> sparse::Csr<T> SmoothedAggregation<T>::restriction_at(std::size_t l) const {
    if (l + 1 >= levels())
        throw InvalidArgument(fmt::format("xgpu: amg: level {} of {} has no restriction", l, levels()));
    return single_ ? to_type<float, T>(single_->levels[l].r) : same_->levels[l].r;
}

template <class T> Array<T> SmoothedAggregation<T>::candidate_at(std::size_t l) const {
    if (l >= levels()) throw InvalidArgument(fmt::format("xgpu: amg: level {} of {}", l, levels()));
    const auto held = [&](const auto& h) {
        const auto& c = h->levels[l].candidate;
        return c.empty() ? ones<T>(h->ctx, {std::size_t(h->levels[l].a.rows())}) : Array<T>(c.template astype<T>());
    };
    return single_ ? held(single_) : held(same_);
}

template <class T> Array<std::int64_t> SmoothedAggregation<T>::aggregates_at(std::size_t l) const {
    if (l + 1 >= levels())
        throw InvalidArgument(fmt::format("xgpu: amg: level {} of {} has no aggregates", l, levels()));
    return (single_ ? single_->levels[l].aggregate : same_->levels[l].aggregate).template astype<std::int64_t>();
}

std::ostream& operator<<(std::ostream& os, const Report& r) {
    os << fmt::format("smoothed aggregation, {} levels ({}):\n", r.levels.size(), r.precision);
    os << "  level        rows          nnz   rho(D^-1 A)\n";
    for (std::size_t l = 0; l < r.levels.size(); ++l)
        os << fmt::format("  {:5} {:11} {:12}   {:.4f}\n", l, r.levels[l].rows, r.levels[l].nnz, r.levels[l].rho);
    os << fmt::format(
        "  operator complexity {:.3f}, grid complexity {:.3f}, {:.1f} MB ({:.2f}x the matrix's {:.1f} MB)\n",
        r.operator_complexity, r.grid_complexity, double(r.bytes) * 1e-6,
        double(r.bytes) / double(std::max<std::size_t>(r.fine_bytes, 1)), double(r.fine_bytes) * 1e-6);
    os << fmt::format(
        "  setup {:.4f} s: strength and aggregation {:.4f}, prolongator {:.4f}, Galerkin products {:.4f}, "
        "smoothers and coarse inverse {:.4f}\n",
        r.total, r.strength_aggregation, r.prolongator, r.galerkin, r.coarse_solve);
    os << "  coarsest level: " << r.coarse << "\n";
    return os;
}

template class SmoothedAggregation<float>;
template class SmoothedAggregation<double>;

} // namespace xgpu::amg
