// Row partitions for the packeted format: the rows of a square matrix split into parts of at most
// max_rows rows, cutting as few entries of A + A^T as the partitioner manages.
//
// The matrix being square, a row index is also a column index, so a part names both the rows a
// packet computes (its y slice) and the x entries it reads from local memory (its x slice, the
// same index set). An entry (r, c) is inside a part when r and c lie in the same one; every other
// entry is cut and goes to the packeted format's remainder. A part therefore never touches more
// than max_rows distinct columns inside it, and that is the bound the local memory needs.
//
// Two partitioners: a built-in graph-growing one (always there, deterministic) and METIS
// (METIS_PartGraphKway) when the library is built with it (CMake's XGPU_WITH_METIS).
#pragma once

#include <cstdint>
#include <vector>

#include "xgpu/sparse.hpp"

namespace xgpu::sparse {

// automatic: METIS when the library is built with it (and the graph fits its 32-bit indices),
// else graph_growing. Asking for metis in a build without it throws InvalidArgument.
enum class Partitioner { automatic, graph_growing, metis };
const char* name(Partitioner p);
// Whether this build of the library can partition with METIS.
bool have_metis();

// Every row of the matrix in exactly one part; parts are not empty, hold at most max_rows rows
// each, and list their rows in ascending order. Parts come in the order the partitioner made
// them (neighbouring parts tend to be near each other in that order).
struct Partition {
    std::vector<std::int64_t> part_ptr{0};           // parts() + 1 offsets into rows
    std::vector<std::int64_t> rows;                  // part p: rows[part_ptr[p] .. part_ptr[p + 1])
    Partitioner method = Partitioner::graph_growing; // the one that ran (never automatic)

    std::int64_t parts() const { return std::int64_t(part_ptr.size()) - 1; }
    std::int64_t size(std::int64_t p) const { return part_ptr[std::size_t(p) + 1] - part_ptr[std::size_t(p)]; }
    // part_of()[r]: the part that holds row r.
    std::vector<std::int64_t> part_of() const;
};

// Partitions the graph of A + A^T (the diagonal ignored) of a valid square matrix. Throws
// InvalidArgument for a matrix that is not square, max_rows < 1, or metis asked for without it.
// Deterministic: the same matrix and arguments give the same partition.
template <Value T, Index I>
Partition partition_rows(const HostCsr<T, I>& a, std::int64_t max_rows, Partitioner how = Partitioner::automatic);

namespace detail {

// The partition in which row r is in part part[r] (0 .. parts-1): rows grouped by part, ascending
// within each part.
Partition collect(const std::vector<std::int64_t>& part, std::int64_t parts, Partitioner method);

// The symmetric adjacency of A + A^T without the diagonal: the neighbours of vertex v are
// adj[ptr[v] .. ptr[v + 1]), ascending and distinct.
struct Graph {
    std::vector<std::int64_t> ptr{0};
    std::vector<std::int64_t> adj;
    std::int64_t vertices() const { return std::int64_t(ptr.size()) - 1; }
};
template <Value T, Index I> Graph symmetric_graph(const HostCsr<T, I>& a);

// Graphs of at least 2 region_rows vertices are grown in regions of consecutive vertices side by
// side, at most max_regions of them, at least region_rows vertices each: growth_regions() of
// them for a graph of that many vertices.
inline constexpr std::int64_t region_rows = std::int64_t(1) << 18;
inline constexpr std::int64_t max_regions = 64;
std::int64_t growth_regions(std::int64_t vertices);
// Graph growing (partition.cpp) in `regions` regions (at most; each a whole number of parts), or
// growth_regions(g.vertices()) of them for regions < 1. Parts never cross a region's border.
Partition grow_parts(const Graph& g, std::int64_t max_rows, std::int64_t regions = 0);
#ifdef XGPU_HAVE_METIS
// Throws InvalidArgument when the graph does not fit METIS's indices.
Partition metis_parts(const Graph& g, std::int64_t max_rows);
#endif

} // namespace detail

#define XGPU_PARTITION_EXTERN(T, I)                                                                                    \
    extern template Partition partition_rows(const HostCsr<T, I>&, std::int64_t, Partitioner);                         \
    extern template detail::Graph detail::symmetric_graph(const HostCsr<T, I>&);
XGPU_SPARSE_TEMPLATES(XGPU_PARTITION_EXTERN)
#undef XGPU_PARTITION_EXTERN

} // namespace xgpu::sparse
