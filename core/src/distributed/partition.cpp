// Row partitions of a distributed matrix: contiguous rows balanced by entries, and METIS.
#include "collective.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "../sparse/metis_kway.hpp"
#include "../sparse/partition.hpp"

namespace xgpu::distributed {

const char* name(Partitioning p) {
    switch (p) {
    case Partitioning::balanced: return "balanced";
    case Partitioning::metis: return "metis";
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

int RowPartition::owner(std::int64_t row) const {
    return int(std::upper_bound(offsets.begin(), offsets.end(), row) - offsets.begin()) - 1;
}

namespace {

void check_ranks(std::int64_t rows, int ranks) {
    if (ranks < 1) throw InvalidArgument(fmt::format("xgpu: distributed: a partition into {} ranks", ranks));
    if (rows < ranks)
        throw InvalidArgument(fmt::format("xgpu: distributed: {} ranks for a matrix of {} rows: the automatic "
                                          "partitions give every rank at least one row (Options::row_offsets may "
                                          "leave ranks empty)",
                                          ranks, rows));
}

} // namespace

RowPartition balanced_partition(std::span<const std::int64_t> row_lengths, int ranks) {
    const auto n = std::int64_t(row_lengths.size());
    check_ranks(n, ranks);
    // prefix[k]: the weight of rows 0 .. k-1, each row weighing its entries plus one.
    std::vector<std::int64_t> prefix(std::size_t(n) + 1, 0);
    for (std::int64_t i = 0; i < n; ++i) {
        if (row_lengths[std::size_t(i)] < 0)
            throw InvalidArgument(
                fmt::format("xgpu: distributed: row {} has length {}", i, row_lengths[std::size_t(i)]));
        prefix[std::size_t(i) + 1] = prefix[std::size_t(i)] + row_lengths[std::size_t(i)] + 1;
    }
    RowPartition p;
    p.offsets.assign(std::size_t(ranks) + 1, 0);
    p.offsets.back() = n;
    for (int r = 1; r < ranks; ++r) {
        // The boundary whose weight before it is nearest r/ranks of the total, kept such that every
        // rank before and after it still gets a row.
        const double target = double(prefix.back()) * double(r) / double(ranks);
        auto k = std::int64_t(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin());
        if (k > 0 && target - double(prefix[std::size_t(k) - 1]) < double(prefix[std::size_t(k)]) - target) --k;
        p.offsets[std::size_t(r)] = std::clamp(k, p.offsets[std::size_t(r) - 1] + 1, n - (ranks - r));
    }
    return p;
}

template <Real T, sparse::Index I> RowPartition metis_partition(const sparse::HostCsr<T, I>& a, int ranks) {
#ifndef XGPU_HAVE_METIS
    (void)a;
    (void)ranks;
    throw InvalidArgument("xgpu: distributed: the metis partitioning was asked for, but this build of xgpu's "
                          "distributed layer has no METIS (configure where libmetis-dev is installed)");
#else
    if (a.rows != a.cols)
        throw InvalidArgument(
            fmt::format("xgpu: distributed: a row partition needs a square matrix, not {} x {}", a.rows, a.cols));
    a.validate();
    const std::int64_t n = a.rows;
    check_ranks(n, ranks);
    RowPartition p;
    p.offsets = {0, n};
    if (ranks == 1) return p;
    // The graph of A + A^T without the diagonal (the sparse layer's), each row weighing its entries.
    const sparse::detail::Graph g = sparse::detail::symmetric_graph(a);
    std::vector<std::int64_t> weights(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        weights[std::size_t(i)] = std::int64_t(a.row_ptr[std::size_t(i) + 1] - a.row_ptr[std::size_t(i)]) + 1;
    const std::vector<std::int64_t> where = sparse::detail::metis_kway(g, ranks, &weights, 0, "distributed", "");
    // Rank r's rows are those of part r, in their original order: a stable renumbering.
    p.offsets.assign(std::size_t(ranks) + 1, 0);
    for (auto w : where)
        ++p.offsets[std::size_t(w) + 1];
    std::partial_sum(p.offsets.begin(), p.offsets.end(), p.offsets.begin());
    std::vector<std::int64_t> next(p.offsets.begin(), p.offsets.end() - 1);
    p.permutation.resize(std::size_t(n));
    for (std::int64_t i = 0; i < n; ++i)
        p.permutation[std::size_t(i)] = next[std::size_t(where[std::size_t(i)])]++;
    return p;
#endif
}

#define XGPU_DISTRIBUTED_METIS(T, I) template RowPartition metis_partition(const sparse::HostCsr<T, I>&, int);
XGPU_DISTRIBUTED_TEMPLATES(XGPU_DISTRIBUTED_METIS)
#undef XGPU_DISTRIBUTED_METIS

} // namespace xgpu::distributed
