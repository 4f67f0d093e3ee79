// The V-cycle: the level's smoother from zero, the residual restricted, the next level's cycle,
// its correction prolonged (from A, the aggregates and the coarse B where P is not stored), the
// smoother again; the coarsest level's inverse (or its smoother) at the bottom.
#include <utility>

#include "hierarchy.hpp"

namespace xgpu::amg::detail {

template <class S> void Hierarchy<S>::cycle(std::size_t l, const Array<S>& b, Array<S>& out) const {
    const Level<S>& L = levels[l];
    const Queue q = ctx.current_queue();
    const auto n = std::uint64_t(L.a.rows());
    const Grid g = rows_grid(ctx, n);
    // Smoothing step j from x (nullptr: from zero) into y; Chebyshev's polynomial restarts each
    // sweep of `per` steps.
    const bool chebyshev = o.smoother == Smoother::chebyshev && L.own.none();
    const int per = chebyshev ? o.chebyshev_degree : 1;
    const auto step = [&](int j, const Array<S>* x, Array<S>& y) {
        if (!L.own.none()) { // the user's: y = x + M (b - A x), M b from zero
            if (!x) {
                L.own.apply(b, y);
                return;
            }
            L.res.assign(b);
            sparse::spmv(L.a, *x, L.res, S(-1), S(1));
            L.own.apply(L.res, L.d);
            y.assign(*x + L.d);
            return;
        }
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
            smoothing(coarse_sweeps * per, true, &out);
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

template void Hierarchy<float>::cycle(std::size_t, const Array<float>&, Array<float>&) const;
template void Hierarchy<double>::cycle(std::size_t, const Array<double>&, Array<double>&) const;

} // namespace xgpu::amg::detail
