// Strength of connection and aggregation (kernels/amg.kernel): a distance-2 maximal independent
// set of the strength graph, its roots each an aggregate with their strong neighbours, then a
// second set among the nodes still free.
#include "hierarchy.hpp"

namespace xgpu::amg::detail {

using sparse::detail::read_one;

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
            if (round > max_set_rounds)
                throw Error(fmt::format("xgpu: amg: the independent set did not settle in {} rounds", max_set_rounds));
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
    // nodes with at least second_pass_share percent of their strong neighbours still free, each root with its free
    // neighbours a new aggregate. Without it those nodes swell the first aggregates into large
    // irregular ones, and CG's iterations grow with the grid (docs/performance.md, multigrid).
    {
        Array<std::uint8_t> free = empty<std::uint8_t>(ctx, {std::max<std::size_t>(a.nnz(), 1)});
        amg_kernel<S>(ctx, "xgpu_amg_unaggregated").launch(q, g, a.row_ptr(), a.col_idx(), strong, agg, free, n);
        init.launch(q, g, a.row_ptr(), strong, free, key, n, second_pass_share);
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

template Array<std::int64_t> aggregate(const sparse::Csr<float>&, double, std::int64_t&);
template Array<std::int64_t> aggregate(const sparse::Csr<double>&, double, std::int64_t&);

} // namespace xgpu::amg::detail
