// The prolongator: the tentative T (each aggregate's QR of the near-null-space vectors B, whose R
// is the coarse level's B), smoothed by one damped Jacobi step, P = (I - omega D^-1 A) T.
#include "hierarchy.hpp"

namespace xgpu::amg::detail {

template <class S>
sparse::Csr<S> prolongator(const sparse::Csr<S>& a, const Array<std::int64_t>& agg, std::int64_t naggs, std::size_t k,
                           const Array<S>& candidate, double omega, const sparse::Csr<S>* pattern, Array<S>& coarse) {
    const Context& ctx = a.context();
    const Queue q = ctx.current_queue();
    const auto n = std::size_t(a.rows());
    const std::int64_t nc = naggs * std::int64_t(k); // the next level's rows
    // T: k entries for each node in an aggregate (those without strong neighbours are in none);
    // rebuilt on refresh rather than kept. First its pattern with one entry a node (the
    // aggregate), whose transpose lists each aggregate's nodes in order.
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
    coarse = empty<S>(ctx, {std::size_t(nc) * k});
    amg_kernel<S>(ctx, "xgpu_amg_qr")
        .launch(q, rows_grid(ctx, std::uint64_t(naggs)), members.row_ptr(), members.col_idx(), entry,
                candidate.empty() ? t_val : candidate, std::uint32_t(candidate.empty() ? 1 : 0), t_val, coarse,
                std::uint64_t(naggs), std::uint32_t(k));
    // P = T - omega D^-1 A T; on refresh, A T on P's pattern (A T's, which smoothing kept).
    const sparse::Csr<S> t(ctx, a.rows(), nc, t_ptr, t_col, t_val);
    const sparse::Csr<S> at = pattern ? sparse::multiply_values(a, t, *pattern) : sparse::multiply(a, t);
    amg_kernel<S>(ctx, "xgpu_amg_smooth")
        .launch(q, rows_grid(ctx, n), at.row_ptr(), at.col_idx(), at.values(), agg, entry, t_val, a.diagonal(),
                std::uint64_t(n), S(omega), std::uint32_t(k));
    return sparse::Csr<S>(ctx, a.rows(), nc, at.row_ptr(), at.col_idx(), at.values());
}

#define XGPU_AMG_PROLONGATOR(S)                                                                                        \
    template sparse::Csr<S> prolongator(const sparse::Csr<S>&, const Array<std::int64_t>&, std::int64_t, std::size_t,  \
                                        const Array<S>&, double, const sparse::Csr<S>*, Array<S>&);
XGPU_AMG_PROLONGATOR(float)
XGPU_AMG_PROLONGATOR(double)
#undef XGPU_AMG_PROLONGATOR

} // namespace xgpu::amg::detail
