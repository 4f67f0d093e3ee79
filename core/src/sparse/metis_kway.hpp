// One METIS k-way partition of a graph made by symmetric_graph, for the two callers that need one:
// the packeted format's parts (core/src/sparse/partition.cpp) and the distributed layer's ranks
// (core/src/distributed/partition.cpp). Inline, so that it compiles into whichever library was
// built with METIS (XGPU_HAVE_METIS): the core takes only a static libmetis, the distributed layer
// a shared one too (CMakeLists.txt says why).
#pragma once

#ifdef XGPU_HAVE_METIS

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <metis.h>

#include "partition.hpp"
#include "xgpu/error.hpp"

namespace xgpu::sparse::detail {

// part[v] of each vertex, 0 .. parts - 1: METIS_PartGraphKway with a fixed seed (the same graph
// gives the same parts), vertex weights (none: all equal) and METIS's imbalance ufactor (0: its
// default). Graphs too large for METIS's indices are refused (InvalidArgument) with `who` and
// `instead` in the message; METIS's own failures are Errors.
inline std::vector<std::int64_t> metis_kway(const Graph& g, std::int64_t parts,
                                            const std::vector<std::int64_t>* weights, int ufactor, std::string_view who,
                                            std::string_view instead) {
    const std::int64_t n = g.vertices();
    constexpr auto top = std::int64_t(std::numeric_limits<idx_t>::max());
    if (n > top || g.ptr.back() > top || parts > top)
        throw InvalidArgument(fmt::format("xgpu: {}: METIS: a graph of {} vertices and {} edges does not fit this "
                                          "METIS's {}-bit indices{}",
                                          who, n, g.ptr.back() / 2, IDXTYPEWIDTH, instead));
    std::vector<std::int64_t> part(std::size_t(n), 0);
    if (parts <= 1 || n == 0) return part;
    std::vector<idx_t> xadj(g.ptr.begin(), g.ptr.end()), adjncy(g.adj.begin(), g.adj.end()), vwgt;
    if (weights)
        for (const std::int64_t w : *weights)
            vwgt.push_back(idx_t(std::min(top, w)));
    std::vector<idx_t> where(std::size_t(n), 0);
    idx_t nvtxs = idx_t(n), ncon = 1, nparts = idx_t(parts), cut = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_SEED] = 1; // deterministic
    if (ufactor > 0) options[METIS_OPTION_UFACTOR] = ufactor;
    const int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), weights ? vwgt.data() : nullptr,
                                       nullptr, nullptr, &nparts, nullptr, nullptr, options, &cut, where.data());
    if (rc != METIS_OK)
        throw Error(fmt::format("xgpu: {}: METIS_PartGraphKway failed ({}) on a graph of {} vertices into {} parts",
                                who,
                                rc == METIS_ERROR_INPUT    ? "METIS_ERROR_INPUT"
                                : rc == METIS_ERROR_MEMORY ? "METIS_ERROR_MEMORY"
                                                           : "METIS_ERROR",
                                n, parts));
    part.assign(where.begin(), where.end());
    return part;
}

} // namespace xgpu::sparse::detail

#endif
