// The hierarchy: levels built from the steps of aggregation.cpp, prolongator.cpp, galerkin.cpp,
// smoothers.cpp and coarse.cpp until the coarsest level is small enough, refreshed through the
// same steps on the kept aggregates and patterns; its report; and SmoothedAggregation, which
// checks its input and chooses the storage precision once.
#include <cmath>
#include <initializer_list>
#include <ostream>
#include <type_traits>
#include <utility>

#include "hierarchy.hpp"
#include "xgpu/preconditioner.hpp"
#include "xgpu/reduction.hpp"

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

template <class S>
sparse::Csr<S> Hierarchy<S>::coarsen(std::size_t l, const Array<std::int64_t>& agg, std::int64_t naggs, bool refreshing,
                                     Array<S>& next_candidate, Report& report) {
    Level<S>& L = levels[l];
    const Queue q = ctx.current_queue();
    const sparse::Csr<S>& a = L.a;
    auto t0 = Clock::now();
    // The tentative prolongator (each aggregate's QR of B) and its smoothing by rho(D^-1 A).
    L.rho = spectral_radius(a, o.lanczos_steps);
    L.p_omega = o.prolongator_omega / L.rho;
    Array<S> coarse;
    // A P not stored is made anew on refresh; a stored one keeps its pattern.
    L.p = prolongator(a, agg, naggs, k, L.candidate, L.p_omega, refreshing && !L.implicit_p ? &L.p : nullptr, coarse);
    if (!refreshing) next_candidate = k == 1 ? coarse : coarse.reshape({std::size_t(naggs) * k, k});
    L.r = sparse::transpose(L.p);
    q.finish();
    report.prolongator += since(t0);
    t0 = Clock::now();
    sparse::Csr<S> next = galerkin(L.r, a, L.p, refreshing ? &levels[l + 1].a : nullptr);
    // The finest level's P, the largest of the hierarchy (about half the fine matrix's bytes in
    // 2-D Poisson), is not kept where one vector makes T the aggregates and the coarse B: the
    // cycle applies it from A at the cost of A's bytes for P's.
    if (l == 0 && k == 1) {
        L.implicit_p = true;
        L.p = sparse::Csr<S>();
    }
    q.finish();
    report.galerkin += since(t0);
    return next;
}

// A level's operator and work vectors.
template <class S> void place(Level<S>& L, const sparse::Csr<S>& a, std::size_t l) {
    const Context& ctx = a.context();
    const auto n = std::size_t(a.rows());
    L.a = a;
    L.x = empty<S>(ctx, {n});
    L.res = empty<S>(ctx, {n});
    if (l > 0) L.b = empty<S>(ctx, {n}); // level 0's right-hand side is the caller's
}

template <class S> void Hierarchy<S>::build(const sparse::Csr<S>& a0, const Array<S>& b, Report& report) {
    const auto start = Clock::now();
    const Queue q = ctx.current_queue();
    levels.clear();
    report.levels.clear();
    report.strength_aggregation = report.prolongator = report.galerkin = report.coarse_solve = 0;
    k = b.ndim() == 2 ? b.shape()[1] : 1;
    sparse::Csr<S> a = a0;
    // The near-null-space candidate B of each level (empty on the finest: the constant).
    Array<S> candidate = b; // the hierarchy's own (the constructor copies the user's)
    for (std::size_t l = 0;; ++l) {
        levels.emplace_back();
        Level<S>& L = levels[l];
        place(L, a, l);
        L.candidate = candidate;
        if (a.rows() <= o.max_coarse || int(l) + 1 >= o.max_levels) break;
        const auto t0 = Clock::now();
        std::int64_t naggs = 0;
        const Array<std::int64_t> agg = aggregate(a, o.theta * std::pow(o.theta_decay, double(l)), naggs);
        // No coarsening (the next level as large as this one): this level is the coarsest.
        if (naggs * std::int64_t(k) >= a.rows() || naggs == 0) break;
        L.aggregate = agg.template astype<std::int32_t>(); // kept in 32 bits between setups
        q.finish();
        report.strength_aggregation += since(t0);
        a = coarsen(l, agg, naggs, false, candidate, report);
    }
    levels.back().rho = 0;
    finish(report, start);
}

template <class S> void Hierarchy<S>::refresh(const sparse::Csr<S>& a0, Report& report) {
    const auto start = Clock::now();
    report.levels.clear();
    report.strength_aggregation = report.prolongator = report.galerkin = report.coarse_solve = 0;
    sparse::Csr<S> a = a0;
    for (std::size_t l = 0; l < levels.size(); ++l) {
        Level<S>& L = levels[l];
        place(L, a, l);
        if (l + 1 == levels.size()) {
            L.rho = 0;
            break;
        }
        Array<S> unused;
        a = coarsen(l, L.aggregate.template astype<std::int64_t>(), L.r.rows() / std::int64_t(k), true, unused, report);
    }
    finish(report, start);
}

template <class S> void Hierarchy<S>::finish(Report& report, Clock::time_point t_start) {
    const Queue q = ctx.current_queue();
    // The smoothers, and the coarsest level's inverse.
    auto t0 = Clock::now();
    for (std::size_t l = 0; l < levels.size(); ++l)
        setup_smoother(levels[l], o, own_smoother, l + 1 == levels.size());
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
        report.coarse = fmt::format("{} {} sweeps ({} rows: a dense inverse takes at most {})", coarse_sweeps,
                                    own_smoother ? "user smoother" : name(o.smoother), nc, max_dense);
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

template struct Hierarchy<float>;
template struct Hierarchy<double>;

// A hierarchy stored in S for solves in T.
template <class S, class T> class StoredIn final : public Stored<T> {
public:
    StoredIn(const sparse::Csr<T>& a, const Array<T>& b, const Options& o, const SmootherFactory<T>& own,
             Report& report) {
        h_.ctx = a.context();
        h_.o = o;
        if constexpr (std::is_same_v<S, T>) h_.own_smoother = own;
        // The hierarchy's own B (the user's may change later).
        h_.build(to_type<T, S>(a), b.empty() ? Array<S>() : Array<S>(b.template astype<S>()), report);
    }
    const Context& context() const override { return h_.ctx; }
    std::size_t levels() const override { return h_.levels.size(); }
    void cycle(const Array<T>& x, Array<T>& y) const override {
        if constexpr (std::is_same_v<S, T>) {
            h_.cycle(0, x, y);
        } else {
            const Array<S> xs = x.template astype<S>();
            Array<S> ys = empty<S>(x.context(), {x.size()});
            h_.cycle(0, xs, ys);
            y.assign(ys.template astype<T>());
        }
    }
    // All or nothing: the new numbers are made in a copy of the hierarchy (sharing the kept
    // aggregates and patterns), which replaces the hierarchy only once complete.
    void refresh(const sparse::Csr<T>& a, Report& report) override {
        Hierarchy<S> next = h_;
        next.refresh(to_type<T, S>(a), report);
        h_ = std::move(next);
    }
    const Array<std::int32_t>& fine_row_ptr() const override { return h_.levels[0].a.row_ptr(); }
    const Array<std::int32_t>& fine_col_idx() const override { return h_.levels[0].a.col_idx(); }
    sparse::Csr<T> operator_at(std::size_t l) const override { return to_type<S, T>(h_.levels[l].a); }
    sparse::Csr<T> prolongator_at(std::size_t l) const override {
        // A P not stored: R's transpose, the same entries.
        const auto& L = h_.levels[l];
        return to_type<S, T>(L.implicit_p ? sparse::transpose(L.r) : L.p);
    }
    sparse::Csr<T> restriction_at(std::size_t l) const override { return to_type<S, T>(h_.levels[l].r); }
    Array<T> candidate_at(std::size_t l) const override {
        const auto& c = h_.levels[l].candidate;
        return c.empty() ? ones<T>(h_.ctx, {std::size_t(h_.levels[l].a.rows())}) : Array<T>(c.template astype<T>());
    }
    Array<std::int64_t> aggregates_at(std::size_t l) const override {
        return h_.levels[l].aggregate.template astype<std::int64_t>();
    }

private:
    Hierarchy<S> h_;
};

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

// The float copy of the finest level's values and diagonal that to_single makes.
template <class T> std::size_t single_bytes(const sparse::Csr<T>& a) {
    return (a.nnz() + std::size_t(a.rows())) * sizeof(float);
}
} // namespace

template <class T>
SmoothedAggregation<T>::SmoothedAggregation(const sparse::Csr<T>& a, const Options& o)
    : SmoothedAggregation(a, {}, o) {}

template <class T>
SmoothedAggregation<T>::SmoothedAggregation(const sparse::Csr<T>& a, const Array<T>& b, const Options& o)
    : SmoothedAggregation(a, b, o, {}) {}

template <class T>
SmoothedAggregation<T>::SmoothedAggregation(const sparse::Csr<T>& a, const Array<T>& b, const Options& o,
                                            SmootherFactory<T> smoother)
    : o_(o) {
    if (smoother && o.single_precision && !std::is_same_v<T, float>)
        throw InvalidArgument("xgpu: amg: a smoother of one's own takes the levels in the solve's precision: not "
                              "with single_precision for a float64 solve");
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
    report_.fine_bytes = detail::csr_bytes(a);
    if (o.single_precision && !std::is_same_v<T, float>) {
        h_ = std::make_shared<detail::StoredIn<float, T>>(a, b, o, smoother, report_);
        report_.bytes += single_bytes(a);
        report_.precision = "float32 (for float64)";
    } else {
        h_ = std::make_shared<detail::StoredIn<T, T>>(a, b, o, smoother, report_);
        report_.precision = std::is_same_v<T, float> ? "float32" : "float64";
    }
}

template <class T> void SmoothedAggregation<T>::refresh(const sparse::Csr<T>& a) {
    check_matrix(a, o_);
    if (a.context() != h_->context())
        throw InvalidArgument("xgpu: amg: refresh: the matrix is in another context than the hierarchy");
    const auto& fine_ptr = h_->fine_row_ptr();
    const auto& fine_col = h_->fine_col_idx();
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
    Report report = report_;
    h_->refresh(a, report);
    if (o_.single_precision && !std::is_same_v<T, float>) report.bytes += single_bytes(a);
    report_ = std::move(report);
}

template <class T> const Context& SmoothedAggregation<T>::context() const {
    return h_->context();
}

template <class T> void SmoothedAggregation<T>::apply(const Array<T>& x, Array<T>& y) const {
    if (x.size() != std::size_t(rows_) || y.size() != std::size_t(rows_))
        throw ShapeError(fmt::format("xgpu: amg: the hierarchy has {} rows: x and y have {} and {} elements", rows_,
                                     x.size(), y.size()));
    h_->cycle(x, y);
}

template <class T> void SmoothedAggregation<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    xgpu::detail::scaled_apply(*this, alpha, x, beta, y);
}

template <class T> sparse::Csr<T> SmoothedAggregation<T>::operator_at(std::size_t l) const {
    if (l >= levels()) throw InvalidArgument(fmt::format("xgpu: amg: level {} of {}", l, levels()));
    return h_->operator_at(l);
}

template <class T> sparse::Csr<T> SmoothedAggregation<T>::prolongator_at(std::size_t l) const {
    if (l + 1 >= levels())
        throw InvalidArgument(fmt::format("xgpu: amg: level {} of {} has no prolongator", l, levels()));
    return h_->prolongator_at(l);
}

template <class T> sparse::Csr<T> SmoothedAggregation<T>::restriction_at(std::size_t l) const {
    if (l + 1 >= levels())
        throw InvalidArgument(fmt::format("xgpu: amg: level {} of {} has no restriction", l, levels()));
    return h_->restriction_at(l);
}

template <class T> Array<T> SmoothedAggregation<T>::candidate_at(std::size_t l) const {
    if (l >= levels()) throw InvalidArgument(fmt::format("xgpu: amg: level {} of {}", l, levels()));
    return h_->candidate_at(l);
}

template <class T> Array<std::int64_t> SmoothedAggregation<T>::aggregates_at(std::size_t l) const {
    if (l + 1 >= levels())
        throw InvalidArgument(fmt::format("xgpu: amg: level {} of {} has no aggregates", l, levels()));
    return h_->aggregates_at(l);
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
