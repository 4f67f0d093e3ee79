// Row partitions for the packeted format: the graph of A + A^T, a graph-growing partitioner and,
// when built with it, METIS.
#include "partition.hpp"

#include "build.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "metis_kway.hpp"

namespace xgpu::sparse {

const char* name(Partitioner p) {
    switch (p) {
    case Partitioner::automatic: return "automatic";
    case Partitioner::graph_growing: return "graph_growing";
    case Partitioner::metis: return "metis";
    }
    return "?";
}

bool have_metis() {
#ifdef XGPU_HAVE_METIS
    return true;
#else
    return false;
#endif
}

std::vector<std::int64_t> Partition::part_of() const {
    std::vector<std::int64_t> of(rows.size());
    for (std::int64_t p = 0; p < parts(); ++p)
        for (auto k = part_ptr[std::size_t(p)]; k < part_ptr[std::size_t(p) + 1]; ++k)
            of[std::size_t(rows[std::size_t(k)])] = p;
    return of;
}

namespace detail {

// Over the host's threads, by blocks of rows: A's pattern transposed (columns counted and placed
// with atomic increments, each list then sorted, so the result does not depend on the order the
// threads ran in), then each vertex's row of A and column of A merged, twice: to count, then to
// write in place. No per-vertex allocation; a row of A out of order is sorted in a copy.
template <Value T, Index I> Graph symmetric_graph(const HostCsr<T, I>& a) {
    const auto n = std::size_t(a.rows);
    const std::size_t blocks = (n + csr_block_rows - 1) / csr_block_rows;
    const auto rows_of = [n](std::size_t b) {
        return std::pair{b * csr_block_rows, std::min(n, (b + 1) * csr_block_rows)};
    };
    std::vector<std::int64_t> tptr(n + 1, 0);
    for_blocks(blocks, [&](std::size_t b) {
        const auto [r0, r1] = rows_of(b);
        for (std::size_t r = r0; r < r1; ++r)
            for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k)
                if (const auto c = std::size_t(a.col_idx[k]); c != r)
                    std::atomic_ref<std::int64_t>(tptr[c + 1]).fetch_add(1, std::memory_order_relaxed);
    });
    for (std::size_t v = 0; v < n; ++v)
        tptr[v + 1] += tptr[v];
    std::vector<std::int64_t> tadj(static_cast<std::size_t>(tptr[n]));
    {
        std::vector<std::int64_t> pos(tptr.begin(), tptr.end() - 1);
        for_blocks(blocks, [&](std::size_t b) {
            const auto [r0, r1] = rows_of(b);
            for (std::size_t r = r0; r < r1; ++r)
                for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k)
                    if (const auto c = std::size_t(a.col_idx[k]); c != r)
                        tadj[std::size_t(std::atomic_ref<std::int64_t>(pos[c]).fetch_add(
                            1, std::memory_order_relaxed))] = std::int64_t(r);
        });
    }
    // Vertex v's neighbours: row v of A and column v of A (tadj, sorted here), without v, merged
    // and distinct; with out == nullptr only counted.
    const auto merge = [&](std::size_t v, std::vector<std::int64_t>& row, std::int64_t* out) {
        row.clear();
        for (auto k = std::size_t(a.row_ptr[v]); k < std::size_t(a.row_ptr[v + 1]); ++k)
            if (const auto c = std::int64_t(a.col_idx[k]); c != std::int64_t(v)) row.push_back(c);
        if (!std::is_sorted(row.begin(), row.end())) std::sort(row.begin(), row.end());
        const std::int64_t* t = tadj.data() + tptr[v];
        const std::int64_t* const t_end = tadj.data() + tptr[v + 1];
        std::size_t i = 0, count = 0;
        std::int64_t last = -1;
        while (i < row.size() || t != t_end) {
            const std::int64_t u = t == t_end || (i < row.size() && row[i] < *t) ? row[i++] : *t++;
            if (u == last) continue;
            last = u;
            if (out) out[count] = u;
            ++count;
        }
        return count;
    };
    Graph g;
    g.ptr.assign(n + 1, 0);
    for_blocks(blocks, [&](std::size_t b) {
        const auto [r0, r1] = rows_of(b);
        std::vector<std::int64_t> row;
        for (std::size_t v = r0; v < r1; ++v) {
            std::sort(tadj.begin() + tptr[v], tadj.begin() + tptr[v + 1]);
            g.ptr[v + 1] = std::int64_t(merge(v, row, nullptr));
        }
    });
    for (std::size_t v = 0; v < n; ++v)
        g.ptr[v + 1] += g.ptr[v];
    g.adj.resize(std::size_t(g.ptr[n]));
    for_blocks(blocks, [&](std::size_t b) {
        const auto [r0, r1] = rows_of(b);
        std::vector<std::int64_t> row;
        for (std::size_t v = r0; v < r1; ++v)
            merge(v, row, g.adj.data() + g.ptr[v]);
    });
    return g;
}

// Rows grouped by part, ascending within each part.
Partition collect(const std::vector<std::int64_t>& part, std::int64_t parts, Partitioner method) {
    Partition out;
    out.method = method;
    out.part_ptr.assign(std::size_t(parts) + 1, 0);
    for (const auto p : part)
        ++out.part_ptr[std::size_t(p) + 1];
    for (std::size_t p = 0; p < std::size_t(parts); ++p)
        out.part_ptr[p + 1] += out.part_ptr[p];
    out.rows.resize(part.size());
    std::vector<std::int64_t> pos(out.part_ptr.begin(), out.part_ptr.end() - 1);
    for (std::size_t r = 0; r < part.size(); ++r)
        out.rows[std::size_t(pos[std::size_t(part[r])]++)] = std::int64_t(r);
    return out;
}

namespace {

struct Levels {
    std::size_t count = 0; // levels the search went through
    std::size_t last = 0;  // where the last one begins in the order
};

// Frontiers of at least this many vertices are expanded over the host's threads, in blocks of
// this many; smaller ones (a grid's, a few thousand) in the calling thread, and all of them on a
// host of fewer than 4 threads: the expansion reads every edge twice and claims with atomics, so
// 2 threads do no better than one and were seen doing worse.
constexpr std::size_t parallel_frontier = std::size_t(1) << 14;
bool parallel_search() {
    static const bool wide = std::thread::hardware_concurrency() >= 4;
    return wide;
}

// The searches of one region of the graph, the vertices [lo, hi): per-vertex state indexed from
// lo, so that regions searched side by side each own theirs. `wide`: large frontiers may be
// expanded over the host's threads (a region searched alone).
struct Search {
    std::int64_t lo = 0, hi = 0;
    bool wide = false;
    std::vector<std::uint32_t> seen;  // a stamp per vertex, so that repeated searches need no clearing
    std::vector<std::uint64_t> claim; // expand_parallel's, all ones between levels
    std::uint32_t stamp = 0;

    Search(std::int64_t first, std::int64_t end, bool threads)
        : lo(first), hi(end), wide(threads && parallel_search()), seen(std::size_t(end - first), 0),
          claim(wide ? std::size_t(end - first) : 0, ~std::uint64_t(0)) {}
    std::uint32_t& seen_of(std::int64_t v) { return seen[std::size_t(v - lo)]; }
    bool inside(std::int64_t v) const { return v >= lo && v < hi; }
};

// The next level of a breadth-first search, order[head .. end), appended to order in the order a
// serial scan of the frontier reaches it: a vertex is claimed by the first frontier vertex that
// reaches it (the least index, an atomic minimum in claim[]), and each block of the frontier
// lists what its vertices claimed, in the order of their neighbours; the lists are joined in
// block order.
template <class Open>
void expand_parallel(const Graph& g, std::vector<std::int64_t>& order, std::size_t head, std::size_t end, Search& s,
                     Open open) {
    const std::size_t blocks = (end - head + parallel_frontier - 1) / parallel_frontier;
    const std::uint32_t stamp = s.stamp;
    const auto each = [&](std::size_t b, auto&& f) {
        for (std::size_t i = head + b * parallel_frontier; i < std::min(end, head + (b + 1) * parallel_frontier); ++i) {
            const auto v = std::size_t(order[i]);
            for (auto k = g.ptr[v]; k < g.ptr[v + 1]; ++k)
                if (const auto u = g.adj[std::size_t(k)]; open(u) && s.seen_of(u) != stamp) f(i, u);
        }
    };
    for_blocks(blocks, [&](std::size_t b) {
        each(b, [&](std::size_t i, std::int64_t u) {
            std::atomic_ref<std::uint64_t> c(s.claim[std::size_t(u - s.lo)]);
            for (std::uint64_t was = c.load(std::memory_order_relaxed);
                 i < was && !c.compare_exchange_weak(was, i, std::memory_order_relaxed);)
                ;
        });
    });
    std::vector<std::vector<std::int64_t>> found(blocks);
    for_blocks(blocks, [&](std::size_t b) {
        each(b, [&](std::size_t i, std::int64_t u) {
            if (s.claim[std::size_t(u - s.lo)] == i) found[b].push_back(u);
        });
    });
    for (const auto& f : found)
        for (const auto u : f) {
            s.seen_of(u) = stamp;
            s.claim[std::size_t(u - s.lo)] = ~std::uint64_t(0);
            order.push_back(u);
        }
}

// Breadth-first search (stamp s.stamp) over the vertices that `open` allows (all of them inside
// the region), from `start`, appending them to `order` in the order reached.
template <class Open>
Levels bfs(const Graph& g, std::int64_t start, std::vector<std::int64_t>& order, Search& s, Open open) {
    const std::size_t first = order.size();
    const std::uint32_t stamp = s.stamp;
    order.push_back(start);
    s.seen_of(start) = stamp;
    Levels levels;
    std::size_t head = first;
    while (head < order.size()) {
        levels.last = head;
        ++levels.count;
        const std::size_t end = order.size();
        if (end - head >= parallel_frontier && s.wide) {
            expand_parallel(g, order, head, end, s, open);
            head = end;
            continue;
        }
        for (; head < end; ++head) {
            const auto v = std::size_t(order[head]);
            for (auto k = g.ptr[v]; k < g.ptr[v + 1]; ++k)
                if (const auto u = g.adj[std::size_t(k)]; open(u) && s.seen_of(u) != stamp) {
                    s.seen_of(u) = stamp;
                    order.push_back(u);
                }
        }
    }
    return levels;
}

// A vertex far from the rest of start's component (George and Liu's pseudo-peripheral node):
// search from start, move to a vertex of least degree in the last level, repeat while the
// number of levels grows. A few sweeps suffice; each costs one pass over the component. Appends
// to `order` the component in breadth-first order from the vertex returned: where the sweeps
// stopped because the levels did not grow, the last sweep's search, which was from that vertex.
template <class Open>
std::int64_t peripheral(const Graph& g, std::int64_t start, std::vector<std::int64_t>& order, Search& s, Open open) {
    const std::size_t from = order.size();
    std::size_t depth = 0;
    for (int sweep = 0; sweep < 8; ++sweep) {
        order.resize(from);
        ++s.stamp;
        const Levels levels = bfs(g, start, order, s, open);
        if (sweep > 0 && levels.count <= depth) return start;
        depth = levels.count;
        const auto degree = [&](std::int64_t v) { return g.ptr[std::size_t(v) + 1] - g.ptr[std::size_t(v)]; };
        start = *std::min_element(order.begin() + std::ptrdiff_t(levels.last), order.end(),
                                  [&](std::int64_t x, std::int64_t y) { return degree(x) < degree(y); });
    }
    order.resize(from);
    ++s.stamp;
    bfs(g, start, order, s, open);
    return start;
}

// Graph growing over the region [lo, hi) alone (edges that leave it ignored): its vertices in
// breadth-first order from a pseudo-peripheral vertex of each of its components, then parts of
// `target` vertices grown from that order; part[v] for v in the region set to 0, 1, .. Returns
// the number of parts.
std::int64_t grow_region(const Graph& g, std::int64_t lo, std::int64_t hi, std::int64_t target, bool threads,
                         std::int64_t* part) {
    Search s(lo, hi, threads);
    const auto m = std::size_t(hi - lo);
    std::vector<std::int64_t> order;
    order.reserve(m);
    {
        std::vector<char> placed(m, 0);
        const auto open = [&](std::int64_t u) { return s.inside(u) && !placed[std::size_t(u - lo)]; };
        for (std::int64_t v = lo; v < hi; ++v) {
            if (placed[std::size_t(v - lo)]) continue;
            const std::size_t from = order.size();
            peripheral(g, v, order, s, open);
            for (std::size_t k = from; k < order.size(); ++k)
                placed[std::size_t(order[k] - lo)] = 1;
        }
    }

    // The part of each vertex of the region, -1 while untaken.
    const auto of = [&](std::int64_t v) -> std::int64_t& { return part[std::size_t(v)]; };
    for (std::int64_t v = lo; v < hi; ++v)
        of(v) = -1;
    std::vector<std::int64_t> queue;
    std::int64_t parts = 0, taken = 0;
    const auto n = std::int64_t(m);
    std::size_t cursor = 0;
    while (taken < n) {
        std::int64_t size = 0;
        // A part whose component runs out before it is full continues from the next seed.
        while (size < target && taken < n) {
            while (of(order[cursor]) >= 0)
                ++cursor;
            queue.assign(1, order[cursor]);
            of(order[cursor]) = parts;
            ++size, ++taken;
            for (std::size_t head = 0; head < queue.size() && size < target; ++head) {
                const auto v = std::size_t(queue[head]);
                for (auto k = g.ptr[v]; k < g.ptr[v + 1] && size < target; ++k)
                    if (const auto u = g.adj[std::size_t(k)]; s.inside(u) && of(u) < 0) {
                        of(u) = parts;
                        queue.push_back(u);
                        ++size, ++taken;
                    }
            }
        }
        ++parts;
    }
    return parts;
}

} // namespace

std::int64_t growth_regions(std::int64_t vertices) {
    return std::clamp<std::int64_t>(vertices / region_rows, 1, max_regions);
}

// Greedy graph growing (in the manner of Farhat's greedy domain decomposition): order the
// vertices breadth first from a pseudo-peripheral vertex of each component; then grow each part
// breadth first from the first vertex of that order not yet taken, which lies on the border of
// the parts already grown, until it holds its share of the rows. The parts of a grid come out as
// compact blobs that follow each other across it rather than long strips, so the cut is about
// the perimeter of a part, not its length.
//
// A large graph is first cut into growth_regions() runs of consecutive vertices, each a whole
// number of parts, grown side by side over the host's threads, each alone (edges between
// regions are cut). The searches are serial and touch memory at random: regions spread them
// over the threads, and a region's state (a quarter of a million vertices or more) stays nearer
// the caches than the whole graph's. The regions depend on the graph's size only, not on the
// host: the partition is the same on every host. A matrix in a natural order loses to the
// regions only the edges across their borders (the 2-D Poisson matrix's parts, grown within
// bands of grid rows, cut fewer entries than grown over the whole grid: `spmv-bench --p 0
// --formats packeted` prints the remainder); a matrix in no order (random columns) has few edges
// inside any part, and fewer within a region.
Partition grow_parts(const Graph& g, std::int64_t max_rows, std::int64_t regions) {
    const std::int64_t n = g.vertices();
    if (n == 0) return collect({}, 0, Partitioner::graph_growing);
    // As many parts as max_rows forces, of even size: no part is left with a few rows.
    const std::int64_t count = (n + max_rows - 1) / max_rows;
    const std::int64_t target = (n + count - 1) / count;
    // Regions of a whole number of parts each (the last takes what is left).
    if (regions < 1) regions = growth_regions(n);
    const std::int64_t per_region = (count + regions - 1) / regions;
    regions = (count + per_region - 1) / per_region;
    const auto bounds = [&](std::int64_t r) {
        return std::pair{std::min(n, r * per_region * target), std::min(n, (r + 1) * per_region * target)};
    };
    std::vector<std::int64_t> part(static_cast<std::size_t>(n));
    std::vector<std::int64_t> first(std::size_t(regions) + 1, 0); // each region's parts, then their offsets
    for_blocks(std::size_t(regions), [&](std::size_t r) {
        const auto [lo, hi] = bounds(std::int64_t(r));
        first[r + 1] = lo < hi ? grow_region(g, lo, hi, target, regions == 1, part.data()) : 0;
    });
    for (std::size_t r = 0; r < std::size_t(regions); ++r)
        first[r + 1] += first[r];
    if (regions > 1)
        for_blocks(std::size_t(regions), [&](std::size_t r) {
            const auto [lo, hi] = bounds(std::int64_t(r));
            for (auto v = lo; v < hi; ++v)
                part[std::size_t(v)] += first[r];
        });
    return collect(part, first.back(), Partitioner::graph_growing);
}

#ifdef XGPU_HAVE_METIS
Partition metis_parts(const Graph& g, std::int64_t max_rows) {
    const std::int64_t n = g.vertices();
    if (n == 0) return collect({}, 0, Partitioner::metis);
    // METIS balances parts to within 3% (its default for k-way), so aim 5% under the limit; a
    // part that still overflows is split below.
    const std::int64_t aim = std::max<std::int64_t>(1, max_rows - (max_rows + 19) / 20);
    const std::int64_t nparts = (n + aim - 1) / aim;
    const std::vector<std::int64_t> part =
        metis_kway(g, nparts, nullptr, 30, "sparse", ": use the graph_growing partitioner");
    // Drop empty parts and split any over max_rows into consecutive runs of its rows.
    Partition raw = collect(part, std::max<std::int64_t>(nparts, 1), Partitioner::metis);
    Partition out;
    out.method = Partitioner::metis;
    out.rows = std::move(raw.rows);
    for (std::int64_t p = 0; p < raw.parts(); ++p)
        for (auto b = raw.part_ptr[std::size_t(p)]; b < raw.part_ptr[std::size_t(p) + 1]; b += max_rows)
            out.part_ptr.push_back(std::min(b + max_rows, raw.part_ptr[std::size_t(p) + 1]));
    return out;
}
#endif

} // namespace detail

template <Value T, Index I> Partition partition_rows(const HostCsr<T, I>& a, std::int64_t max_rows, Partitioner how) {
    if (a.rows != a.cols)
        throw InvalidArgument(
            fmt::format("xgpu: sparse: row partitions need a square matrix, not {} x {}", a.rows, a.cols));
    if (max_rows < 1)
        throw InvalidArgument(
            fmt::format("xgpu: sparse: a part must be allowed at least one row (max_rows {})", max_rows));
    if (how == Partitioner::metis && !have_metis())
        throw InvalidArgument("xgpu: sparse: the metis partitioner was asked for, but this build of xgpu has no "
                              "METIS (configure with -DXGPU_WITH_METIS=ON where libmetis is installed)");
    a.validate();
    const detail::Graph g = detail::symmetric_graph(a);
#ifdef XGPU_HAVE_METIS
    if (how == Partitioner::metis) return detail::metis_parts(g, max_rows);
    if (how == Partitioner::automatic && g.vertices() <= std::numeric_limits<idx_t>::max() &&
        g.ptr.back() <= std::numeric_limits<idx_t>::max())
        return detail::metis_parts(g, max_rows);
#endif
    return detail::grow_parts(g, max_rows);
}

#define XGPU_PARTITION_INSTANTIATE(T, I)                                                                               \
    template Partition partition_rows(const HostCsr<T, I>&, std::int64_t, Partitioner);                                \
    template detail::Graph detail::symmetric_graph(const HostCsr<T, I>&);
XGPU_SPARSE_TEMPLATES(XGPU_PARTITION_INSTANTIATE)
#undef XGPU_PARTITION_INSTANTIATE

} // namespace xgpu::sparse
