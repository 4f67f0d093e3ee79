// The host side of the packeted format (core/src/sparse/partition.hpp and packets.hpp): row
// partitions by graph growing and by METIS (when built with it) cover every row once within the
// size limit; packet layouts run through the host reference of the device kernel give the same
// product as a plain CSR product in double precision, on fresh random values, for 0x0, 1x1, empty
// rows, 2-D Poisson, a power-law matrix and a banded matrix with a packet boundary at every
// position; the share of entries left to the remainder is reported and bounded for Poisson. And
// the device side: the packeted SpMV on every backend, on layouts with a packet boundary at every
// position, narrow and wide local indices, packets without local entries, against CSR in double
// precision with alpha and beta. The graph, partition and layout, built over the host's threads,
// against serial copies of the first builders, to the bit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numeric>
#include <set>

#include <xgpu/sparse.hpp>

#include "sparse/packeted.hpp"
#include "sparse/packets.hpp"
#include "sparse/partition.hpp"
#include "support.hpp"

using namespace xgpu;
using namespace xgpu::sparse;
using Catch::Matchers::Contains;

namespace {

template <class T> T random_value() {
    std::uniform_real_distribution<double> d(-1, 1);
    if constexpr (std::is_floating_point_v<T>)
        return T(d(test::rng()));
    else
        return T(typename T::value_type(d(test::rng())), typename T::value_type(d(test::rng())));
}

// The 5-point Laplacian on an n x n grid, random values in place of -1 and 4 (the pattern is
// what matters here), rows in the natural order.
template <class T, class I = std::int32_t> HostCsr<T, I> poisson2d(std::int64_t n) {
    HostCsr<T, I> a;
    a.rows = a.cols = n * n;
    a.row_ptr.reserve(std::size_t(n * n) + 1);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t r = i * n + j;
            for (const std::int64_t c : {r - n, r - 1, r, r + 1, r + n}) {
                if (c < 0 || c >= n * n) continue;
                if ((c == r - 1 && j == 0) || (c == r + 1 && j == n - 1)) continue;
                a.col_idx.push_back(I(c));
                a.values.push_back(random_value<T>());
            }
            a.row_ptr.push_back(I(a.col_idx.size()));
        }
    return a;
}

// Row lengths drawn from a power law (P(len >= k) ~ k^-1.5, from 1 up to n / 4) at uniformly
// random columns, some rows empty.
template <class T, class I = std::int32_t> HostCsr<T, I> power_law(std::int64_t n) {
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<I> r, c;
    std::vector<T> v;
    for (std::int64_t i = 0; i < n; ++i) {
        if (u(test::rng()) < 0.05) continue;
        const auto len = std::min<std::int64_t>(n / 4 + 1, std::int64_t(std::pow(1 - u(test::rng()), -1 / 1.5)));
        for (std::int64_t k = 0; k < len; ++k) {
            r.push_back(I(i));
            c.push_back(I(std::int64_t(test::rng()() % std::uint64_t(n))));
            v.push_back(random_value<T>());
        }
    }
    return from_coo<T, I>(n, n, r, c, v);
}

// Entries within `half` of the diagonal, each present with probability `density`.
template <class T, class I = std::int32_t> HostCsr<T, I> banded(std::int64_t n, std::int64_t half, double density) {
    std::uniform_real_distribution<double> u(0, 1);
    HostCsr<T, I> a;
    a.rows = a.cols = n;
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = std::max<std::int64_t>(0, i - half); j <= std::min(n - 1, i + half); ++j)
            if (u(test::rng()) < density) {
                a.col_idx.push_back(I(j));
                a.values.push_back(random_value<T>());
            }
        a.row_ptr.push_back(I(a.col_idx.size()));
    }
    return a;
}

std::vector<Partitioner> partitioners() {
    std::vector<Partitioner> p{Partitioner::automatic, Partitioner::graph_growing};
    if (have_metis()) p.push_back(Partitioner::metis);
    return p;
}

// Entries (r, c) with r and c in different parts.
template <class T, class I> std::size_t cut_entries(const HostCsr<T, I>& a, const Partition& p) {
    const auto of = p.part_of();
    std::size_t cut = 0;
    for (std::int64_t r = 0; r < a.rows; ++r)
        for (auto k = a.row_ptr[std::size_t(r)]; k < a.row_ptr[std::size_t(r) + 1]; ++k)
            cut += of[std::size_t(r)] != of[std::size_t(a.col_idx[std::size_t(k)])];
    return cut;
}

template <class T, class I> void check_partition(const HostCsr<T, I>& a, const Partition& p, std::int64_t max_rows) {
    INFO(a.rows << " rows, max_rows " << max_rows << ", " << name(p.method));
    REQUIRE(p.method != Partitioner::automatic);
    REQUIRE(p.part_ptr.size() == std::size_t(p.parts()) + 1);
    REQUIRE(p.part_ptr.front() == 0);
    REQUIRE(p.part_ptr.back() == a.rows);
    REQUIRE(p.rows.size() == std::size_t(a.rows));
    std::vector<int> count(std::size_t(a.rows), 0);
    for (std::int64_t q = 0; q < p.parts(); ++q) {
        REQUIRE(p.size(q) >= 1);
        REQUIRE(p.size(q) <= max_rows);
        const auto b = p.rows.begin() + p.part_ptr[std::size_t(q)], e = p.rows.begin() + p.part_ptr[std::size_t(q) + 1];
        REQUIRE(std::is_sorted(b, e));
        for (auto it = b; it != e; ++it) {
            REQUIRE(*it >= 0);
            REQUIRE(*it < a.rows);
            ++count[std::size_t(*it)];
        }
    }
    REQUIRE(std::all_of(count.begin(), count.end(), [](int c) { return c == 1; }));
    // No more parts than max_rows forces, give or take what the partitioner needs to stay inside it.
    if (a.rows > 0) REQUIRE(p.parts() <= 2 * ((a.rows + max_rows - 1) / max_rows) + 2);
}

template <class T, class I> struct Combo {
    using value = T;
    using index = I;
};

template <class T> using Wide = std::conditional_t<std::is_floating_point_v<T>, double, std::complex<double>>;
template <class T> constexpr double unit_roundoff() {
    return std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>> ? 0x1p-24 : 0x1p-53;
}

// The layout's structure: packets are a partition of the rows within max_rows, slots and steps
// add up, every entry of A is in a packet or in the remainder (never both), the remainder holds
// exactly the entries that cross packets, sorted by row then column.
template <class T, class I> void check_structure(const HostCsr<T, I>& a, const PacketLayout<T, I>& l) {
    REQUIRE(l.rows == a.rows);
    REQUIRE(l.nnz == a.nnz());
    REQUIRE(l.packet_ptr.front() == 0);
    REQUIRE(l.packet_ptr.back() == a.rows);
    REQUIRE(l.perm.size() == std::size_t(a.rows));
    std::vector<std::int64_t> of(std::size_t(a.rows), -1);
    std::int64_t widest = 0;
    for (std::int64_t p = 0; p < l.packets(); ++p) {
        const std::int64_t n = l.packet_ptr[std::size_t(p) + 1] - l.packet_ptr[std::size_t(p)];
        REQUIRE(n >= 1);
        REQUIRE(n <= l.max_rows);
        widest = std::max(widest, n);
        for (auto i = l.packet_ptr[std::size_t(p)]; i < l.packet_ptr[std::size_t(p) + 1]; ++i) {
            const auto r = std::size_t(l.perm[std::size_t(i)]);
            REQUIRE(r < std::size_t(a.rows));
            REQUIRE(of[r] == -1); // every row in exactly one packet
            of[r] = p;
        }
    }
    REQUIRE(l.narrow == (widest <= 65536));
    REQUIRE(l.slot_ptr.size() == l.packet_ptr.size());
    REQUIRE(l.thread_steps.size() == std::size_t(l.packets()) * l.threads);
    std::size_t stepped = 0;
    for (std::int64_t p = 0; p < l.packets(); ++p) {
        const auto b = l.thread_steps.begin() + p * std::int64_t(l.threads);
        const std::int64_t depth = l.threads ? *std::max_element(b, b + l.threads) : 0;
        REQUIRE(l.slot_ptr[std::size_t(p) + 1] - l.slot_ptr[std::size_t(p)] == depth * std::int64_t(l.threads));
        stepped += std::size_t(std::accumulate(b, b + l.threads, std::int64_t(0)));
    }
    REQUIRE(std::size_t(l.slot_ptr.back()) == l.slots());
    REQUIRE(l.local.size() == l.slots() * (l.narrow ? 1 : 2));
    std::size_t crossing = 0;
    for (std::int64_t r = 0; r < a.rows; ++r)
        for (auto k = a.row_ptr[std::size_t(r)]; k < a.row_ptr[std::size_t(r) + 1]; ++k)
            crossing += of[std::size_t(r)] != of[std::size_t(a.col_idx[std::size_t(k)])];
    REQUIRE(l.remainder_nnz() == crossing);
    REQUIRE(stepped == l.packet_nnz());
    REQUIRE(l.rem_row.size() == l.remainder_nnz());
    REQUIRE(l.rem_col.size() == l.remainder_nnz());
    for (std::size_t k = 0; k < l.remainder_nnz(); ++k) {
        REQUIRE(of[std::size_t(l.rem_row[k])] != of[std::size_t(l.rem_col[k])]);
        if (k) REQUIRE(std::pair(l.rem_row[k - 1], l.rem_col[k - 1]) <= std::pair(l.rem_row[k], l.rem_col[k]));
    }
    REQUIRE(l.remainder_share() == (a.nnz() ? double(crossing) / double(a.nnz()) : 0.0));
}

// Row r of A times x in double precision, and the sum of its products' magnitudes (for the
// tolerance).
template <class T, class I>
std::pair<Wide<T>, double> row_product(const HostCsr<T, I>& a, const std::vector<T>& x, std::int64_t r) {
    Wide<T> sum = 0;
    double magnitude = 0;
    for (auto k = a.row_ptr[std::size_t(r)]; k < a.row_ptr[std::size_t(r) + 1]; ++k) {
        const auto p = Wide<T>(a.values[std::size_t(k)]) * Wide<T>(x[std::size_t(a.col_idx[std::size_t(k)])]);
        sum += p;
        magnitude += std::abs(p);
    }
    return {sum, magnitude};
}

// The layout's product (the host reference of the kernel) against CSR in double precision, on
// fresh random x.
template <class T, class I> void check_product(const HostCsr<T, I>& a, const PacketLayout<T, I>& l) {
    std::vector<T> x(std::size_t(a.cols));
    for (auto& v : x)
        v = random_value<T>();
    const auto y = apply_packets(l, x);
    REQUIRE(y.size() == std::size_t(a.rows));
    for (std::int64_t r = 0; r < a.rows; ++r) {
        const auto [want, magnitude] = row_product(a, x, r);
        const auto b = a.row_ptr[std::size_t(r)], e = a.row_ptr[std::size_t(r) + 1];
        const double tol = 4 * double(e - b + 1) * unit_roundoff<T>() * (magnitude + 1);
        INFO("row " << r << " of " << a.rows);
        REQUIRE(std::abs(Wide<T>(y[std::size_t(r)]) - want) <= tol);
    }
}

template <class T, class I> PacketLayout<T, I> check_packets(const HostCsr<T, I>& a, const PacketOptions& o) {
    INFO(a.rows << " rows, nnz " << a.nnz() << ", local " << o.local_bytes << " bytes, " << o.threads << " threads, "
                << name(o.partitioner));
    const auto l = build_packets(a, o);
    check_structure(a, l);
    check_product(a, l);
    return l;
}

PacketOptions options(std::size_t local_bytes, unsigned threads, Partitioner how = Partitioner::automatic) {
    PacketOptions o;
    o.local_bytes = local_bytes;
    o.threads = threads;
    o.partitioner = how;
    return o;
}

// Parts that are runs of consecutive rows: [0, first), then `size` rows at a time.
Partition runs(std::int64_t rows, std::int64_t first, std::int64_t size) {
    Partition p;
    p.rows.resize(std::size_t(rows));
    std::iota(p.rows.begin(), p.rows.end(), std::int64_t(0));
    if (first > 0) p.part_ptr.push_back(std::min(first, rows));
    while (p.part_ptr.back() < rows)
        p.part_ptr.push_back(std::min(p.part_ptr.back() + size, rows));
    return p;
}
// The layout with its local indices in two words a slot, as build_packets lays out packets of more
// than 65536 rows (so that small matrices test the device's wide path too).
template <class T, class I> PacketLayout<T, I> widened(PacketLayout<T, I> l) {
    REQUIRE(l.narrow);
    std::vector<std::uint32_t> wide(2 * l.local.size());
    for (std::size_t k = 0; k < l.local.size(); ++k) {
        wide[2 * k] = l.local[k] >> 16;
        wide[2 * k + 1] = l.local[k] & 0xffff;
    }
    l.local = std::move(wide);
    l.narrow = false;
    return l;
}

// y = alpha*A*x + beta*y on the device with layout l (handed to a fresh matrix), on fresh random
// x, y, alpha and beta, against CSR in double precision; the matrix reports l's remainder share.
template <class T, class I>
void check_device(const Context& ctx, const HostCsr<T, I>& a, const PacketLayout<T, I>& l, const std::string& what) {
    INFO(what << ": " << a.rows << " rows, nnz " << a.nnz() << ", " << l.packets() << " packets, " << l.threads
              << " threads, " << (l.narrow ? "narrow" : "wide") << ", remainder " << l.remainder_nnz());
    const Csr<T, I> m(ctx, a);
    REQUIRE(sparse::detail::use_packets(m, l));
    REQUIRE_FALSE(sparse::detail::use_packets(m, l)); // kept, not replaced
    REQUIRE(m.remainder_share() == l.remainder_share());
    std::vector<T> hx(std::size_t(a.cols)), hy(std::size_t(a.rows));
    for (auto& v : hx)
        v = random_value<T>();
    for (auto& v : hy)
        v = random_value<T>();
    const T alpha = random_value<T>(), beta = test::rng()() % 4 == 0 ? T(0) : random_value<T>();
    auto x = to_device<T>(ctx, hx), y = to_device<T>(ctx, hy);
    spmv(m, x, y, alpha, beta, Format::packeted);
    const auto got = y.get();
    for (std::int64_t r = 0; r < a.rows; ++r) {
        const auto [sum, magnitude] = row_product(a, hx, r);
        const auto b = a.row_ptr[std::size_t(r)], e = a.row_ptr[std::size_t(r) + 1];
        const Wide<T> want = Wide<T>(alpha) * sum + Wide<T>(beta) * Wide<T>(hy[std::size_t(r)]);
        const double tol = 4 * double(e - b + 2) * unit_roundoff<T>() * (magnitude + 2);
        INFO("row " << r << ", alpha " << alpha << ", beta " << beta);
        REQUIRE(std::abs(Wide<T>(got[std::size_t(r)]) - want) <= tol);
    }
}

// Every packet boundary of a small banded matrix on the device: two packets split at every row,
// runs of every length (from row 0 and from half a run in), each with 1, 7 (neither a power of two
// nor a divisor of the packet) and 32 work-items a packet; then wide indices, and packets of one
// row of a matrix without a diagonal (no local entries at all: everything in the remainder).
template <class T, class I> void device_boundaries(const Context& ctx) {
    const std::int64_t n = 48;
    const auto a = banded<T, I>(n, 3, 0.8);
    for (const unsigned threads : {1u, 7u, 32u}) {
        const auto o = options(std::size_t(n) * 2 * sizeof(T), threads);
        for (std::int64_t b = 1; b < n; ++b)
            check_device(ctx, a, build_packets(a, runs(n, b, n), o), "split at " + std::to_string(b));
        for (std::int64_t m = 1; m <= n; ++m)
            for (const std::int64_t first : {std::int64_t(0), m / 2})
                check_device(ctx, a, build_packets(a, runs(n, first, m), o),
                             "runs of " + std::to_string(m) + " after " + std::to_string(first));
        check_device(ctx, a, widened(build_packets(a, runs(n, 5, 9), o)), "wide, runs of 9 after 5");
        check_device(ctx, a, widened(build_packets(a, o)), "wide, partitioned");
    }
    auto off = a; // the band without its diagonal
    off.col_idx.clear();
    off.values.clear();
    for (std::int64_t r = 0; r < n; ++r) {
        for (auto k = a.row_ptr[std::size_t(r)]; k < a.row_ptr[std::size_t(r) + 1]; ++k)
            if (a.col_idx[std::size_t(k)] != r) {
                off.col_idx.push_back(a.col_idx[std::size_t(k)]);
                off.values.push_back(a.values[std::size_t(k)]);
            }
        off.row_ptr[std::size_t(r) + 1] = I(off.col_idx.size());
    }
    const auto single = build_packets(off, runs(n, 0, 1), options(2 * sizeof(T), 4));
    REQUIRE(single.slots() == 0);
    REQUIRE(single.remainder_share() == 1);
    check_device(ctx, off, single, "packets of one row, no local entries");
}

} // namespace

// The host builders as they were written first, serial from end to end: the threaded ones must
// give the same graph, partition and layout, to the bit. (They share the steps that the threads
// do not change: grouping rows by part, the layout's header and filling one packet's slots.)
namespace serial {

using sparse::detail::Graph;

template <class T, class I> Graph symmetric_graph(const HostCsr<T, I>& a) {
    const auto n = std::size_t(a.rows);
    Graph g;
    g.ptr.assign(n + 1, 0);
    for (std::size_t r = 0; r < n; ++r)
        for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k)
            if (const auto c = std::size_t(a.col_idx[k]); c != r) {
                ++g.ptr[r + 1];
                ++g.ptr[c + 1];
            }
    for (std::size_t v = 0; v < n; ++v)
        g.ptr[v + 1] += g.ptr[v];
    g.adj.resize(std::size_t(g.ptr[n]));
    {
        std::vector<std::int64_t> pos(g.ptr.begin(), g.ptr.end() - 1);
        for (std::size_t r = 0; r < n; ++r)
            for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k)
                if (const auto c = std::size_t(a.col_idx[k]); c != r) {
                    g.adj[std::size_t(pos[r]++)] = std::int64_t(c);
                    g.adj[std::size_t(pos[c]++)] = std::int64_t(r);
                }
    }
    // Sort and drop the duplicates (an entry present as (r, c) and (c, r), or repeated in a
    // non-canonical matrix), compacting in place.
    std::size_t out = 0;
    std::int64_t begin = 0;
    for (std::size_t v = 0; v < n; ++v) {
        const auto b = g.adj.begin() + begin, e = g.adj.begin() + g.ptr[v + 1];
        std::sort(b, e);
        const auto last = std::unique(b, e);
        begin = g.ptr[v + 1];
        g.ptr[v + 1] = std::int64_t(out + std::size_t(last - b));
        out = std::size_t(std::copy(b, last, g.adj.begin() + std::ptrdiff_t(out)) - g.adj.begin());
    }
    g.adj.resize(out);
    g.adj.shrink_to_fit();
    return g;
}

struct Levels {
    std::size_t count = 0; // levels the search went through
    std::size_t last = 0;  // where the last one begins in the order
};

// Breadth-first search over the vertices that `open` allows, from `start`, appending them to
// `order` in the order reached. `seen` holds a stamp per vertex so that repeated searches need no
// clearing.
template <class Open>
Levels bfs(const Graph& g, std::int64_t start, std::vector<std::int64_t>& order, std::vector<std::uint32_t>& seen,
           std::uint32_t stamp, Open open) {
    const std::size_t first = order.size();
    order.push_back(start);
    seen[std::size_t(start)] = stamp;
    Levels levels;
    std::size_t head = first;
    while (head < order.size()) {
        levels.last = head;
        ++levels.count;
        const std::size_t end = order.size();
        for (; head < end; ++head) {
            const auto v = std::size_t(order[head]);
            for (auto k = g.ptr[v]; k < g.ptr[v + 1]; ++k)
                if (const auto u = g.adj[std::size_t(k)]; seen[std::size_t(u)] != stamp && open(u)) {
                    seen[std::size_t(u)] = stamp;
                    order.push_back(u);
                }
        }
    }
    return levels;
}

// A vertex far from the rest of start's component (George and Liu's pseudo-peripheral node):
// search from start, move to a vertex of least degree in the last level, repeat while the
// number of levels grows. A few sweeps suffice; each costs one pass over the component.
template <class Open>
std::int64_t peripheral(const Graph& g, std::int64_t start, std::vector<std::uint32_t>& seen, std::uint32_t& stamp,
                        Open open) {
    std::vector<std::int64_t> order;
    std::size_t depth = 0;
    for (int sweep = 0; sweep < 8; ++sweep) {
        order.clear();
        const Levels levels = bfs(g, start, order, seen, ++stamp, open);
        if (sweep > 0 && levels.count <= depth) break;
        depth = levels.count;
        const auto degree = [&](std::int64_t v) { return g.ptr[std::size_t(v) + 1] - g.ptr[std::size_t(v)]; };
        start = *std::min_element(order.begin() + std::ptrdiff_t(levels.last), order.end(),
                                  [&](std::int64_t x, std::int64_t y) { return degree(x) < degree(y); });
    }
    return start;
}

Partition grow_parts(const Graph& g, std::int64_t max_rows) {
    const std::int64_t n = g.vertices();
    if (n == 0) return sparse::detail::collect({}, 0, Partitioner::graph_growing);
    // As many parts as max_rows forces, of even size: no part is left with a few rows.
    const std::int64_t count = (n + max_rows - 1) / max_rows;
    const std::int64_t target = (n + count - 1) / count;

    std::vector<std::uint32_t> seen(std::size_t(n), 0);
    std::uint32_t stamp = 0;
    std::vector<std::int64_t> order;
    order.reserve(std::size_t(n));
    {
        std::vector<char> placed(std::size_t(n), 0);
        for (std::int64_t v = 0; v < n; ++v) {
            if (placed[std::size_t(v)]) continue;
            const auto open = [&](std::int64_t u) { return !placed[std::size_t(u)]; };
            const std::size_t from = order.size();
            bfs(g, peripheral(g, v, seen, stamp, open), order, seen, ++stamp, open);
            for (std::size_t k = from; k < order.size(); ++k)
                placed[std::size_t(order[k])] = 1;
        }
    }

    std::vector<std::int64_t> part(std::size_t(n), -1);
    std::vector<std::int64_t> queue;
    std::int64_t parts = 0, taken = 0;
    std::size_t cursor = 0;
    while (taken < n) {
        std::int64_t size = 0;
        // A part whose region runs out before it is full continues from the next seed.
        while (size < target && taken < n) {
            while (part[std::size_t(order[cursor])] >= 0)
                ++cursor;
            queue.assign(1, order[cursor]);
            part[std::size_t(order[cursor])] = parts;
            ++size, ++taken;
            for (std::size_t head = 0; head < queue.size() && size < target; ++head) {
                const auto v = std::size_t(queue[head]);
                for (auto k = g.ptr[v]; k < g.ptr[v + 1] && size < target; ++k)
                    if (const auto u = g.adj[std::size_t(k)]; part[std::size_t(u)] < 0) {
                        part[std::size_t(u)] = parts;
                        queue.push_back(u);
                        ++size, ++taken;
                    }
            }
        }
        ++parts;
    }
    return sparse::detail::collect(part, parts, Partitioner::graph_growing);
}

template <class T, class I>
PacketLayout<T, I> build_packets(const HostCsr<T, I>& a, const Partition& part, const PacketOptions& options) {
    PacketLayout<T, I> out = sparse::detail::begin_layout(a, part, options);
    const auto n = std::size_t(a.rows);
    const std::size_t packets = std::size_t(part.parts());
    const std::size_t T_ = options.threads;

    // The packet of every row and its place in it.
    std::vector<std::int64_t> of(n), place(n);
    for (std::size_t p = 0; p < packets; ++p)
        for (auto i = part.part_ptr[p]; i < part.part_ptr[p + 1]; ++i) {
            of[std::size_t(part.rows[std::size_t(i)])] = std::int64_t(p);
            place[std::size_t(part.rows[std::size_t(i)])] = i - part.part_ptr[p];
        }

    // Local entries per row; the rest go to the remainder, row by row, columns sorted.
    std::vector<std::int64_t> cost(n, 0);
    std::vector<std::size_t> order;
    for (std::size_t r = 0; r < n; ++r) {
        const std::size_t from = out.rem_col.size();
        for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k) {
            const auto c = std::size_t(a.col_idx[k]);
            if (of[c] == of[r]) {
                ++cost[r];
            } else {
                out.rem_row.push_back(I(r));
                out.rem_col.push_back(a.col_idx[k]);
                out.rem_values.push_back(a.values[k]);
            }
        }
        if (!std::is_sorted(out.rem_col.begin() + std::ptrdiff_t(from), out.rem_col.end())) {
            order.resize(out.rem_col.size() - from);
            std::iota(order.begin(), order.end(), from);
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t x, std::size_t y) { return out.rem_col[x] < out.rem_col[y]; });
            std::vector<I> c(order.size());
            std::vector<T> v(order.size());
            for (std::size_t k = 0; k < order.size(); ++k) {
                c[k] = out.rem_col[order[k]];
                v[k] = out.rem_values[order[k]];
            }
            std::copy(c.begin(), c.end(), out.rem_col.begin() + std::ptrdiff_t(from));
            std::copy(v.begin(), v.end(), out.rem_values.begin() + std::ptrdiff_t(from));
        }
    }

    // Deal each packet's rows (by descending cost; ties by place) to its threads; a thread's
    // steps are the local entries of its rows, and the packet is as deep as its busiest thread.
    out.thread_steps.assign(packets * T_, I(0));
    std::vector<std::vector<std::int64_t>> dealt(packets); // places, in the order dealt
    std::uint64_t total = 0;
    out.slot_ptr.assign(1, I(0));
    for (std::size_t p = 0; p < packets; ++p) {
        auto& rows = dealt[p];
        rows.resize(std::size_t(part.size(std::int64_t(p))));
        std::iota(rows.begin(), rows.end(), std::int64_t(0));
        const auto row = [&](std::int64_t i) { return std::size_t(part.rows[std::size_t(part.part_ptr[p] + i)]); };
        std::stable_sort(rows.begin(), rows.end(),
                         [&](std::int64_t x, std::int64_t y) { return cost[row(x)] > cost[row(y)]; });
        std::int64_t depth = 0;
        for (std::size_t j = 0; j < rows.size(); ++j) {
            auto& steps = out.thread_steps[p * T_ + sparse::detail::zigzag(j, T_)];
            steps = I(steps + cost[row(rows[j])]);
            depth = std::max<std::int64_t>(depth, steps);
        }
        total += std::uint64_t(depth) * T_;
        if (total > std::uint64_t(std::numeric_limits<I>::max())) throw InvalidArgument("too many slots");
        out.slot_ptr.push_back(I(total));
    }

    out.values.assign(std::size_t(total), T(0));
    out.local.assign(std::size_t(total) * (out.narrow ? 1 : 2), 0);
    for (std::size_t p = 0; p < packets; ++p)
        sparse::detail::fill_packet(out, a, part, p, dealt[p].data(), of, place);
    return out;
}

} // namespace serial

TEST_CASE("the graph of A + A^T: symmetric, no diagonal, no duplicates", "[sparse][packets]") {
    const auto a = power_law<double>(300);
    const auto g = sparse::detail::symmetric_graph(a);
    std::set<std::pair<std::int64_t, std::int64_t>> want;
    for (std::int64_t r = 0; r < a.rows; ++r)
        for (auto k = a.row_ptr[std::size_t(r)]; k < a.row_ptr[std::size_t(r) + 1]; ++k)
            if (const std::int64_t c = a.col_idx[std::size_t(k)]; c != r) {
                want.insert({r, c});
                want.insert({c, r});
            }
    std::set<std::pair<std::int64_t, std::int64_t>> got;
    REQUIRE(g.vertices() == a.rows);
    for (std::int64_t v = 0; v < g.vertices(); ++v) {
        REQUIRE(std::is_sorted(g.adj.begin() + g.ptr[std::size_t(v)], g.adj.begin() + g.ptr[std::size_t(v) + 1]));
        for (auto k = g.ptr[std::size_t(v)]; k < g.ptr[std::size_t(v) + 1]; ++k)
            got.insert({v, std::int64_t(g.adj[std::size_t(k)])});
    }
    REQUIRE(std::size_t(g.ptr.back()) == want.size());
    REQUIRE(got == want);
}

TEST_CASE("partitions cover every row once, within the size limit", "[sparse][packets]") {
    for (const Partitioner how : partitioners()) {
        INFO(name(how));
        HostCsr<float> empty;
        check_partition(empty, partition_rows(empty, 7, how), 7);
        const auto one = from_coo<float, std::int32_t>(1, 1, std::vector<std::int32_t>{0}, std::vector<std::int32_t>{0},
                                                       std::vector<float>{2});
        check_partition(one, partition_rows(one, 1, how), 1);
        check_partition(one, partition_rows(one, 100, how), 100);
        HostCsr<double> zeros; // no entries at all: nothing connects the rows
        zeros.rows = zeros.cols = 50;
        zeros.row_ptr.assign(51, 0);
        for (const std::int64_t m : {1, 3, 50, 64})
            check_partition(zeros, partition_rows(zeros, m, how), m);
        const auto p = poisson2d<double>(40);
        for (const std::int64_t m : {1, 2, 5, 100, 399, 400, 1600, 5000})
            check_partition(p, partition_rows(p, m, how), m);
        const auto pl = power_law<std::complex<float>, std::int64_t>(2000);
        for (const std::int64_t m : {1, 37, 256, 2000})
            check_partition(pl, partition_rows(pl, m, how), m);
        const auto b = banded<float>(500, 3, 0.7);
        for (const std::int64_t m : {9, 64, 499})
            check_partition(b, partition_rows(b, m, how), m);
    }
}

TEST_CASE("the threaded graph, partition and layout are the serial ones", "[sparse][packets]") {
    // Past 2^16 rows (several blocks of rows) and with search frontiers past 2^14 vertices (the
    // power-law graph's), and a grid's narrow frontiers; rows out of order and repeated columns.
    auto shuffled = power_law<double>(70000);
    for (std::size_t r = 0; r < std::size_t(shuffled.rows); r += 3)
        std::reverse(shuffled.col_idx.begin() + shuffled.row_ptr[r],
                     shuffled.col_idx.begin() + shuffled.row_ptr[r + 1]);
    if (shuffled.nnz() > 1) shuffled.col_idx[1] = shuffled.col_idx[0];
    const std::vector<std::pair<std::string, HostCsr<double>>> cases{{"power law", power_law<double>(150000)},
                                                                     {"Poisson 300^2", poisson2d<double>(300)},
                                                                     {"rows out of order", shuffled}};
    for (const auto& [what, a] : cases) {
        INFO(what);
        const auto g = sparse::detail::symmetric_graph(a), want_g = serial::symmetric_graph(a);
        REQUIRE(g.ptr == want_g.ptr);
        REQUIRE(g.adj == want_g.adj);
        for (const std::int64_t max_rows : {std::int64_t(3072), std::int64_t(700)}) {
            const auto p = sparse::detail::grow_parts(g, max_rows), want_p = serial::grow_parts(g, max_rows);
            REQUIRE(p.part_ptr == want_p.part_ptr);
            REQUIRE(p.rows == want_p.rows);
            PacketOptions o;
            o.local_bytes = std::size_t(max_rows) * 2 * sizeof(double);
            o.threads = 64;
            const auto l = build_packets(a, p, o), want = serial::build_packets(a, p, o);
            CHECK(l.perm == want.perm);
            CHECK(l.packet_ptr == want.packet_ptr);
            CHECK(l.slot_ptr == want.slot_ptr);
            CHECK(l.thread_steps == want.thread_steps);
            CHECK(l.narrow == want.narrow);
            CHECK(l.local == want.local);
            CHECK(l.values == want.values);
            CHECK(l.rem_row == want.rem_row);
            CHECK(l.rem_col == want.rem_col);
            CHECK(l.rem_values == want.rem_values);
        }
    }
}

TEST_CASE("graph growing in regions: whole parts inside each region, deterministic, few more entries cut",
          "[sparse][packets]") {
    // The regions a large graph is grown in, here forced on small ones: every row once within the
    // size limit, no part across a region's border, the same partition every time, and a grid in
    // natural order cut little more than grown whole.
    CHECK(sparse::detail::growth_regions(1000) == 1);
    CHECK(sparse::detail::growth_regions(2 * sparse::detail::region_rows) == 2);
    CHECK(sparse::detail::growth_regions(std::int64_t(1) << 40) == sparse::detail::max_regions);
    const std::vector<std::pair<std::string, HostCsr<double>>> cases{{"Poisson 256^2", poisson2d<double>(256)},
                                                                     {"power law", power_law<double>(30000)},
                                                                     {"banded", banded<double>(5000, 3, 0.7)}};
    for (const auto& [what, a] : cases) {
        INFO(what);
        const auto g = sparse::detail::symmetric_graph(a);
        for (const std::int64_t max_rows : {std::int64_t(700), std::int64_t(3072)})
            for (const std::int64_t regions : {2, 5, 16}) {
                INFO("max_rows " << max_rows << ", regions " << regions);
                const auto p = sparse::detail::grow_parts(g, max_rows, regions);
                check_partition(a, p, max_rows);
                const auto q = sparse::detail::grow_parts(g, max_rows, regions);
                REQUIRE(p.part_ptr == q.part_ptr);
                REQUIRE(p.rows == q.rows);
                // Regions hold whole parts of the even size: a part's rows lie in one region.
                const std::int64_t count = (a.rows + max_rows - 1) / max_rows, target = (a.rows + count - 1) / count;
                const std::int64_t span = (count + regions - 1) / regions * target;
                for (std::int64_t part = 0; part < p.parts(); ++part)
                    REQUIRE(p.rows[std::size_t(p.part_ptr[std::size_t(part)])] / span ==
                            p.rows[std::size_t(p.part_ptr[std::size_t(part) + 1]) - 1] / span);
                if (what[0] == 'P') {
                    const double whole = double(cut_entries(a, sparse::detail::grow_parts(g, max_rows, 1)));
                    const double cut = double(cut_entries(a, p));
                    std::printf("Poisson 256^2, parts of <= %lld rows, %lld regions: %.2f%% of the entries cut (one "
                                "region: %.2f%%)\n",
                                static_cast<long long>(max_rows), static_cast<long long>(regions),
                                100 * cut / double(a.nnz()), 100 * whole / double(a.nnz()));
                    // Two regions add one border of 256 rows' entries to the parts' perimeters.
                    if (regions == 2) CHECK(cut < 1.5 * whole);
                }
            }
    }
}

TEST_CASE("partitions are deterministic", "[sparse][packets]") {
    const auto a = power_law<double>(3000);
    for (const Partitioner how : partitioners()) {
        const auto p = partition_rows(a, 200, how), q = partition_rows(a, 200, how);
        REQUIRE(p.part_ptr == q.part_ptr);
        REQUIRE(p.rows == q.rows);
    }
}

TEST_CASE("partitions of 2-D Poisson cut few entries", "[sparse][packets]") {
    const auto a = poisson2d<float>(256);
    for (const Partitioner how : partitioners())
        for (const std::int64_t m : {1024, 6144}) {
            const auto t0 = std::chrono::steady_clock::now();
            const auto p = partition_rows(a, m, how);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            check_partition(a, p, m);
            const double share = double(cut_entries(a, p)) / double(a.nnz());
            std::printf("Poisson 256^2, parts of <= %lld rows, %s: %lld parts, %.2f%% of the entries cut, %.0f ms\n",
                        static_cast<long long>(m), name(p.method), static_cast<long long>(p.parts()), 100 * share, ms);
            // Bounds about 1.5x what graph growing cuts (METIS cuts less).
            CHECK(share < (m == 1024 ? 0.06 : 0.03));
        }
}

TEST_CASE("partitions refuse what they cannot do", "[sparse][packets]") {
    HostCsr<double> wide;
    wide.rows = 2;
    wide.cols = 3;
    wide.row_ptr.assign(3, 0);
    REQUIRE_THROWS_WITH(partition_rows(wide, 4), Contains("square") && Contains("2 x 3"));
    const auto a = poisson2d<double>(4);
    REQUIRE_THROWS_WITH(partition_rows(a, 0), Contains("at least one row"));
    if (!have_metis()) REQUIRE_THROWS_WITH(partition_rows(a, 4, Partitioner::metis), Contains("no METIS"));
    auto bad = a;
    bad.col_idx[3] = 99;
    REQUIRE_THROWS_WITH(partition_rows(bad, 4), Contains("out of range"));
}

TEMPLATE_TEST_CASE("packets: small and degenerate matrices", "[sparse][packets]", (Combo<float, std::int32_t>),
                   (Combo<double, std::int32_t>), (Combo<std::complex<float>, std::int32_t>),
                   (Combo<std::complex<double>, std::int64_t>), (Combo<double, std::int64_t>)) {
    using T = typename TestType::value;
    using I = typename TestType::index;
    for (const Partitioner how : partitioners())
        for (const unsigned threads : {1u, 3u, 32u}) {
            const auto o = options(64 * 2 * sizeof(T), threads, how); // 64 rows a packet
            const auto empty = check_packets(HostCsr<T, I>{}, o);
            REQUIRE(empty.packets() == 0);
            REQUIRE(empty.remainder_share() == 0);
            const auto one =
                from_coo<T, I>(1, 1, std::vector<I>{0}, std::vector<I>{0}, std::vector<T>{random_value<T>()});
            const auto l1 = check_packets(one, o);
            REQUIRE(l1.packets() == 1);
            REQUIRE(l1.remainder_nnz() == 0);
            // Empty rows at the start, in the middle and at the end.
            auto e = power_law<T, I>(300);
            std::vector<I> r, c;
            std::vector<T> v;
            for (std::int64_t i = 0; i < e.rows; ++i)
                for (auto k = e.row_ptr[std::size_t(i)]; k < e.row_ptr[std::size_t(i) + 1]; ++k)
                    if (i > 2 && i != 150 && i < 297) {
                        r.push_back(I(i));
                        c.push_back(e.col_idx[std::size_t(k)]);
                        v.push_back(e.values[std::size_t(k)]);
                    }
            check_packets(from_coo<T, I>(300, 300, r, c, v), o);
            HostCsr<T, I> zeros;
            zeros.rows = zeros.cols = 100;
            zeros.row_ptr.assign(101, I(0));
            check_packets(zeros, o);
            check_packets(poisson2d<T, I>(20), o);
            check_packets(banded<T, I>(200, 4, 0.6), o);
        }
}

TEST_CASE("packets: a packet boundary at every position of a banded matrix", "[sparse][packets]") {
    const std::int64_t n = 48;
    const auto a = banded<double>(n, 3, 0.8);
    for (const unsigned threads : {1u, 4u, 32u}) {
        const auto o = options(n * 2 * sizeof(double), threads);
        // Two packets split at every row; then runs of every length, first run of every length.
        for (std::int64_t b = 1; b < n; ++b) {
            INFO("split at " << b << ", " << threads << " threads");
            const auto l = build_packets(a, runs(n, b, n), o);
            check_structure(a, l);
            check_product(a, l);
        }
        for (std::int64_t m = 1; m <= n; ++m)
            for (std::int64_t first = 0; first < m; first += std::max<std::int64_t>(1, m / 4)) {
                INFO("runs of " << m << " after " << first << ", " << threads << " threads");
                const auto l = build_packets(a, runs(n, first, m), options(std::size_t(m) * 16, threads));
                check_structure(a, l);
                check_product(a, l);
            }
        // And as the partitioners cut it, with every packet size.
        for (const Partitioner how : partitioners())
            for (std::int64_t m = 1; m <= n; ++m)
                check_packets(a, options(std::size_t(m) * 16, threads, how));
    }
}

TEST_CASE("packets: the remainder share of 2-D Poisson and a power-law matrix", "[sparse][packets]") {
    const auto p = poisson2d<double>(256);
    const auto pl = power_law<double>(20000);
    for (const Partitioner how : partitioners())
        for (const std::size_t kib : {48, 228}) {
            const auto t0 = std::chrono::steady_clock::now();
            const auto l = check_packets(p, options(kib * 1024, 256, how));
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            std::printf("Poisson 256^2 f64, %zu KiB, 256 threads, %s: %lld packets of <= %lld rows, remainder "
                        "%.2f%%, padding %.1f%% (build and check %.0f ms)\n",
                        kib, name(l.partitioner), static_cast<long long>(l.packets()),
                        static_cast<long long>(l.max_rows), 100 * l.remainder_share(), 100 * l.padding_share(), ms);
            // Bounds about 1.5x graph growing's remainders (METIS leaves less).
            CHECK(l.remainder_share() < (kib == 48 ? 0.03 : 0.015));
            const auto q = check_packets(pl, options(kib * 1024, 256, how));
            std::printf("power law 20000 rows (nnz %zu) f64, %zu KiB, %s: %lld packets, remainder %.1f%%, padding "
                        "%.1f%%\n",
                        pl.nnz(), kib, name(q.partitioner), static_cast<long long>(q.packets()),
                        100 * q.remainder_share(), 100 * q.padding_share());
        }
}

TEST_CASE("packets: wide local indices past 65536 rows a packet", "[sparse][packets]") {
    const auto a = poisson2d<float>(300); // 90000 rows
    const auto l = check_packets(a, options(100000 * 2 * sizeof(float), 64, Partitioner::graph_growing));
    REQUIRE_FALSE(l.narrow);
    REQUIRE(l.packets() == 1);
    REQUIRE(l.remainder_nnz() == 0);
}

TEST_CASE("packets: bad options and matrices are refused", "[sparse][packets]") {
    const auto a = poisson2d<double>(8);
    REQUIRE_THROWS_WITH(build_packets(a, options(15, 32)),
                        Contains("budget of 15 bytes holds no row") && Contains("16 bytes a row"));
    PacketOptions o = options(12, 32);
    o.value_size = 4; // f32 values in local memory
    REQUIRE_NOTHROW(build_packets(a, o));
    o.value_size = 8;
    REQUIRE_THROWS_WITH(build_packets(a, o), Contains("holds no row"));
    REQUIRE_THROWS_WITH(build_packets(a, options(1024, 0)), Contains("at least one thread"));
    HostCsr<float> tall;
    tall.rows = 3;
    tall.cols = 2;
    tall.row_ptr.assign(4, 0);
    REQUIRE_THROWS_WITH(build_packets(tall, options(1024, 32)), Contains("square") && Contains("3 x 2"));
    if (!have_metis())
        REQUIRE_THROWS_WITH(build_packets(a, options(1024, 32, Partitioner::metis)), Contains("no METIS"));
    auto bad = a;
    bad.row_ptr[5] = bad.row_ptr[4] - 1;
    REQUIRE_THROWS_WITH(build_packets(bad, options(1024, 32)), Contains("must not fall"));
    // A given partition that is not one.
    REQUIRE_THROWS_WITH(build_packets(a, runs(64, 0, 16), options(8 * 16, 32)), Contains("part 0 has 16 rows"));
    auto twice = runs(64, 0, 8);
    twice.rows[3] = 4;
    REQUIRE_THROWS_WITH(build_packets(a, twice, options(8 * 16, 32)), Contains("row 4 is in two parts"));
    REQUIRE_THROWS_WITH(build_packets(a, runs(63, 0, 8), options(8 * 16, 32)), Contains("each of the 64 rows"));
    // The reference refuses x of the wrong size, and a layout the kernel could not run.
    auto l = build_packets(a, options(16 * 16, 4));
    REQUIRE_THROWS_WITH(apply_packets(l, std::vector<double>(63)), Contains("x has 63 entries"));
    auto broken = l;
    broken.local[0] = 40u << 16;
    REQUIRE_THROWS_WITH(apply_packets(broken, std::vector<double>(64)), Contains("local row 40"));
}

TEST_CASE("packeted spmv on the device: a packet boundary at every position", "[sparse][packets]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        device_boundaries<double, std::int32_t>(ctx);
        device_boundaries<std::complex<float>, std::int64_t>(ctx);
    }
}

// Packets whose x and y slices take more local memory than static arrays may (48 KiB on CUDA):
// the slices are local-memory parameters, which CUDA gives up to its opt-in limit.
TEST_CASE("packeted spmv on the device: packets past 48 KiB of local memory", "[sparse][packets]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t limit = sparse::detail::packet_local_limit(ctx);
        const std::size_t bytes = std::min<std::size_t>(limit, 160 * 1024);
        if (bytes <= 48 * 1024) {
            WARN(ctx.device().name() << ": " << limit << " bytes of local memory a work-group; nothing past 48 KiB");
            continue;
        }
        const auto a = poisson2d<double>(120); // 14400 rows: packets of up to 10240 rows at 160 KiB
        const auto l = build_packets(a, options(bytes, 128));
        REQUIRE(std::size_t(l.max_rows) * 2 * sizeof(double) > 48 * 1024);
        check_device(ctx, a, l, "large packets");
    }
}

TEST_CASE("packeted spmv on the device: layouts the device cannot run are refused", "[sparse][packets]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto a = poisson2d<double>(8);
        const Csr<double> m(ctx, a);
        const auto& info = ctx.device().info();
        const auto limit = std::max(info.static_local_memory, info.local_memory);
        REQUIRE_THROWS_WITH(sparse::detail::use_packets(m, build_packets(a, options(std::size_t(limit) * 4, 32))),
                            Contains("bytes of local memory"));
        if (info.max_work_group_size < 100000)
            REQUIRE_THROWS_WITH(sparse::detail::use_packets(m, build_packets(a, options(1024, 100000))),
                                Contains("work-items a packet"));
        REQUIRE_THROWS_WITH(sparse::detail::use_packets(m, build_packets(poisson2d<double>(9), options(1024, 32))),
                            Contains("does not fit a 64x64 matrix"));
        CHECK_FALSE(m.remainder_share()); // nothing was kept
        // The default shape fits the device.
        const auto o = sparse::detail::packet_options(ctx, sizeof(double));
        CHECK(o.threads >= 1);
        CHECK(o.threads <= info.max_work_group_size);
        CHECK(o.local_bytes >= 2 * sizeof(double));
        REQUIRE(sparse::detail::use_packets(m, build_packets(a, o)));
    }
}
