// Host CSR: validation, COO to CSR, row statistics, transpose and diagonal.
#include <algorithm>
#include <complex>
#include <cstring>

#include <fmt/format.h>

#include "build.hpp"

namespace xgpu::sparse {

template <Index I> void check_index_width(std::int64_t rows, std::int64_t cols, std::uint64_t nnz) {
    detail::check_fits<I>(rows, cols, nnz);
}

namespace detail {

namespace {

// What one block of rows found: its share of the row statistics, and the first error in it.
struct BlockScan {
    static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    std::int64_t min = std::numeric_limits<std::int64_t>::max(), max = 0;
    double sq = 0;                       // squared deviations from the mean, summed in row order
    std::size_t fall = none;             // the first row r whose row_ptr[r + 1] < row_ptr[r]
    std::size_t bad = none, bad_row = 0; // the first entry whose column is out of range, and its row
};

// The lengths of rows [r0, r1): their extremes and squared deviations from `mean`, stopping at
// the first falling pointer. True when the block's pointers do not fall.
template <Index I>
bool block_lengths(std::span<const I> row_ptr, std::size_t r0, std::size_t r1, double mean, BlockScan& s) {
    for (std::size_t r = r0; r < r1; ++r) {
        const std::int64_t len = std::int64_t(row_ptr[r + 1]) - std::int64_t(row_ptr[r]);
        if (len < 0) {
            s.fall = r;
            return false;
        }
        s.min = std::min(s.min, len);
        s.max = std::max(s.max, len);
        const double d = double(len) - mean;
        s.sq += d * d;
    }
    return true;
}

RowStats combine(std::int64_t rows, double mean, const std::vector<BlockScan>& blocks) {
    RowStats s;
    if (rows == 0) return s;
    s.min = std::numeric_limits<std::int64_t>::max();
    double sq = 0;
    for (const BlockScan& b : blocks) { // in block order: the same sum on any number of threads
        s.min = std::min(s.min, b.min);
        s.max = std::max(s.max, b.max);
        sq += b.sq;
    }
    s.mean = mean;
    s.stddev = std::sqrt(sq / double(rows));
    return s;
}

} // namespace

template <Value T, Index I>
void check_csr(std::int64_t rows, std::int64_t cols, std::span<const I> row_ptr, std::span<const I> col_idx,
               std::size_t nvalues, const T* values, RowStats* stats, std::vector<T>* diagonal) {
    detail::check_fits<I>(rows, cols, std::max<std::uint64_t>(col_idx.size(), nvalues));
    const auto fail = [](const std::string& what) { throw InvalidArgument("xgpu: sparse: " + what); };
    if (row_ptr.size() != std::uint64_t(rows) + 1)
        fail(fmt::format("row_ptr has {} entries; a matrix of {} rows needs {}", row_ptr.size(), rows,
                         std::uint64_t(rows) + 1));
    if (col_idx.size() != nvalues)
        fail(fmt::format("col_idx has {} entries and values {}: they must match", col_idx.size(), nvalues));
    if (row_ptr[0] != 0) fail(fmt::format("row_ptr[0] is {}: row pointers must start at 0", row_ptr[0]));

    // Every block checks its pointers, then its columns (and sums its diagonal entries) where its
    // pointers rise and stay within the entries; where they leave them, an error the serial order
    // reports first (a fall before the block, or the end) is found below.
    const auto n = std::size_t(rows);
    const double mean = rows ? double(row_ptr[n]) / double(rows) : 0.0;
    const std::size_t diag = std::size_t(std::min(rows, cols));
    if (diagonal) diagonal->assign(diag, T(0));
    std::vector<BlockScan> blocks((n + csr_block_rows - 1) / csr_block_rows);
    for_blocks(blocks.size(), [&](std::size_t b) {
        BlockScan& s = blocks[b];
        const std::size_t r0 = b * csr_block_rows, r1 = std::min(n, r0 + csr_block_rows);
        if (!block_lengths<I>(row_ptr, r0, r1, mean, s)) return;
        if (row_ptr[r0] < 0 || std::uint64_t(row_ptr[r1]) > nvalues) return;
        for (std::size_t r = r0; r < r1; ++r)
            for (auto k = std::size_t(row_ptr[r]); k < std::size_t(row_ptr[r + 1]); ++k) {
                const I c = col_idx[k];
                if (c < 0 || c >= cols) {
                    s.bad = k;
                    s.bad_row = r;
                    return;
                }
                if (diagonal && std::size_t(c) == r && r < diag) (*diagonal)[r] += values[k];
            }
    });
    for (const BlockScan& s : blocks)
        if (s.fall != BlockScan::none)
            fail(fmt::format("row pointers must not fall: row_ptr[{}] = {} but row_ptr[{}] = {}", s.fall,
                             row_ptr[s.fall], s.fall + 1, row_ptr[s.fall + 1]));
    if (std::uint64_t(row_ptr[n]) != nvalues)
        fail(fmt::format("row_ptr ends at {} but there are {} entries (nnz)", row_ptr[n], nvalues));
    for (const BlockScan& s : blocks)
        if (s.bad != BlockScan::none)
            fail(fmt::format("col_idx[{}] = {} (row {}) is out of range for {} columns", s.bad, col_idx[s.bad],
                             s.bad_row, cols));
    if (stats) *stats = combine(rows, mean, blocks);
}

template <Index I> RowStats row_stats(std::int64_t rows, std::span<const I> row_ptr) {
    const auto n = std::size_t(rows);
    const double mean = rows ? double(row_ptr[n]) / double(rows) : 0.0;
    std::vector<BlockScan> blocks((n + csr_block_rows - 1) / csr_block_rows);
    for_blocks(blocks.size(), [&](std::size_t b) {
        block_lengths<I>(row_ptr, b * csr_block_rows, std::min(n, (b + 1) * csr_block_rows), mean, blocks[b]);
    });
    return combine(rows, mean, blocks);
}

} // namespace detail

template <Index I>
void validate_csr(std::int64_t rows, std::int64_t cols, std::span<const I> row_ptr, std::span<const I> col_idx,
                  std::size_t nvalues) {
    detail::check_csr<double, I>(rows, cols, row_ptr, col_idx, nvalues, nullptr, nullptr, nullptr);
}

template <Value T, Index I> void HostCsr<T, I>::validate() const {
    validate_csr<I>(rows, cols, row_ptr, col_idx, values.size());
}

template <Value T, Index I> bool HostCsr<T, I>::is_canonical() const {
    for (std::size_t r = 0; r + 1 < row_ptr.size(); ++r)
        for (auto k = row_ptr[r] + 1; k < row_ptr[r + 1]; ++k)
            if (col_idx[std::size_t(k) - 1] >= col_idx[std::size_t(k)]) return false;
    return true;
}

template <Value T, Index I> bool HostCsr<T, I>::identical(const HostCsr& o) const {
    return rows == o.rows && cols == o.cols && row_ptr == o.row_ptr && col_idx == o.col_idx &&
           values.size() == o.values.size() &&
           (values.empty() || std::memcmp(values.data(), o.values.data(), values.size() * sizeof(T)) == 0);
}

template <Value T, Index I>
HostCsr<T, I> from_coo(std::int64_t rows, std::int64_t cols, std::span<const I> row, std::span<const I> col,
                       std::span<const T> val) {
    detail::check_fits<I>(rows, cols, 0);
    if (row.size() != val.size() || col.size() != val.size())
        throw InvalidArgument(fmt::format("xgpu: sparse: from_coo: {} row indices, {} column indices and {} values: "
                                          "the three must match",
                                          row.size(), col.size(), val.size()));
    for (std::size_t k = 0; k < val.size(); ++k) {
        if (row[k] < 0 || row[k] >= rows)
            throw InvalidArgument(
                fmt::format("xgpu: sparse: from_coo: row[{}] = {} is out of range for {} rows", k, row[k], rows));
        if (col[k] < 0 || col[k] >= cols)
            throw InvalidArgument(
                fmt::format("xgpu: sparse: from_coo: col[{}] = {} is out of range for {} columns", k, col[k], cols));
    }
    return detail::coo_to_csr<T, I, I>(rows, cols, row, col, val);
}

template <Value T, Index I> RowStats row_stats(const HostCsr<T, I>& a) {
    return detail::row_stats<I>(a.rows, a.row_ptr);
}

template <Value T, Index I> HostCsr<T, I> transpose(const HostCsr<T, I>& a) {
    HostCsr<T, I> t;
    t.rows = a.cols;
    t.cols = a.rows;
    t.row_ptr.assign(std::size_t(a.cols) + 1, 0);
    for (const I c : a.col_idx)
        ++t.row_ptr[std::size_t(c) + 1];
    for (std::size_t c = 0; c < std::size_t(a.cols); ++c)
        t.row_ptr[c + 1] += t.row_ptr[c];
    t.col_idx.resize(a.nnz());
    t.values.resize(a.nnz());
    std::vector<I> pos(t.row_ptr.begin(), t.row_ptr.end() - 1);
    for (std::size_t r = 0; r < std::size_t(a.rows); ++r)
        for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k) {
            const auto p = std::size_t(pos[std::size_t(a.col_idx[k])]++);
            t.col_idx[p] = I(r);
            t.values[p] = a.values[k];
        }
    return t;
}

template <Value T, Index I> std::vector<T> diagonal(const HostCsr<T, I>& a) {
    return detail::diagonal<T, I>(a.rows, a.cols, a.row_ptr, a.col_idx, a.values);
}

namespace {
template <class T> std::string value_text(T v) {
    if constexpr (std::is_floating_point_v<T>)
        return fmt::format("{}", v);
    else
        return fmt::format("({}, {})", v.real(), v.imag());
}

// Row r's entries (column, value) sorted by column, duplicates summed.
template <Value T, Index I> void sorted_row(const HostCsr<T, I>& a, std::size_t r, std::vector<std::pair<I, T>>& out) {
    out.clear();
    for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k)
        out.emplace_back(a.col_idx[k], a.values[k]);
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::size_t w = 0;
    for (std::size_t k = 0; k < out.size(); ++k) {
        if (w > 0 && out[w - 1].first == out[k].first)
            out[w - 1].second += out[k].second;
        else
            out[w++] = out[k];
    }
    out.resize(w);
}
} // namespace

template <Value T, Index I> std::string asymmetry(const HostCsr<T, I>& a, double rtol) {
    if (a.rows != a.cols) return fmt::format("the matrix is {} x {}, not square", a.rows, a.cols);
    const HostCsr<T, I> t = transpose(a);
    std::vector<std::pair<I, T>> x, y;
    const auto differ = [&](T v, T w) { return std::abs(v - w) > rtol * std::max(std::abs(v), std::abs(w)); };
    for (std::size_t r = 0; r < std::size_t(a.rows); ++r) {
        sorted_row(a, r, x); // row r of a: a(r, c)
        sorted_row(t, r, y); // row r of the transpose: a(c, r)
        std::size_t i = 0, j = 0;
        while (i < x.size() || j < y.size()) {
            const I c = j == y.size() || (i < x.size() && x[i].first < y[j].first) ? x[i].first : y[j].first;
            const T v = i < x.size() && x[i].first == c ? x[i++].second : T(0);
            const T w = j < y.size() && y[j].first == c ? y[j++].second : T(0);
            if (differ(v, w))
                return fmt::format("entry ({}, {}) = {} but ({}, {}) = {}", r, c, value_text(v), c, r, value_text(w));
        }
    }
    return {};
}

template <Value T, Index I>
HostCsr<T, I> poisson_rows(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::int64_t first, std::int64_t count) {
    if (nx < 1 || ny < 1 || nz < 1)
        throw InvalidArgument(
            fmt::format("xgpu: sparse::poisson: the grid {} x {} x {} must have every side >= 1", nx, ny, nz));
    const bool three = nz > 1;
    std::int64_t rows = 0;
    if (__builtin_mul_overflow(nx, ny, &rows) || __builtin_mul_overflow(rows, nz, &rows))
        throw InvalidArgument("xgpu: sparse::poisson: the grid's size overflows 64 bits");
    const std::int64_t plane = nx * ny;
    if (first < 0 || count < 0 || first > rows - count)
        throw InvalidArgument(
            fmt::format("xgpu: sparse::poisson_rows: rows {} .. {} of a grid of {} rows", first, first + count, rows));
    detail::check_fits<I>(rows, rows, std::uint64_t(count) * (three ? 7 : 5));
    HostCsr<T, I> h;
    h.rows = count;
    h.cols = rows;
    h.row_ptr.assign(std::size_t(count) + 1, 0);
    h.col_idx.reserve(std::size_t(count) * (three ? 7 : 5));
    h.values.reserve(h.col_idx.capacity());
    for (std::int64_t i = first; i < first + count; ++i) {
        const std::int64_t x = i % nx, y = (i / nx) % ny, z = i / plane;
        const auto add = [&](std::int64_t c, double v) {
            h.col_idx.push_back(I(c));
            h.values.push_back(T(v));
        };
        if (z > 0) add(i - plane, -1);
        if (y > 0) add(i - nx, -1);
        if (x > 0) add(i - 1, -1);
        add(i, three ? 6 : 4);
        if (x + 1 < nx) add(i + 1, -1);
        if (y + 1 < ny) add(i + nx, -1);
        if (z + 1 < nz) add(i + plane, -1);
        h.row_ptr[std::size_t(i - first) + 1] = I(h.values.size());
    }
    return h;
}

template <Value T, Index I> HostCsr<T, I> poisson(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
    if (nx < 1 || ny < 1 || nz < 1)
        throw InvalidArgument(
            fmt::format("xgpu: sparse::poisson: the grid {} x {} x {} must have every side >= 1", nx, ny, nz));
    if (nx > std::numeric_limits<std::int64_t>::max() / ny / nz)
        throw InvalidArgument("xgpu: sparse::poisson: the grid's size overflows 64 bits");
    return poisson_rows<T, I>(nx, ny, nz, 0, nx * ny * nz);
}

#define XGPU_SPARSE_INSTANTIATE(T, I)                                                                                  \
    template void detail::check_csr(std::int64_t, std::int64_t, std::span<const I>, std::span<const I>, std::size_t,   \
                                    const T*, RowStats*, std::vector<T>*);                                             \
    template struct HostCsr<T, I>;                                                                                     \
    template HostCsr<T, I> from_coo(std::int64_t, std::int64_t, std::span<const I>, std::span<const I>,                \
                                    std::span<const T>);                                                               \
    template RowStats row_stats(const HostCsr<T, I>&);                                                                 \
    template HostCsr<T, I> transpose(const HostCsr<T, I>&);                                                            \
    template std::vector<T> diagonal(const HostCsr<T, I>&);                                                            \
    template std::string asymmetry(const HostCsr<T, I>&, double);                                                      \
    template HostCsr<T, I> poisson(std::int64_t, std::int64_t, std::int64_t);                                          \
    template HostCsr<T, I> poisson_rows(std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t);
XGPU_SPARSE_TEMPLATES(XGPU_SPARSE_INSTANTIATE)
#undef XGPU_SPARSE_INSTANTIATE
template void check_index_width<std::int32_t>(std::int64_t, std::int64_t, std::uint64_t);
template void check_index_width<std::int64_t>(std::int64_t, std::int64_t, std::uint64_t);
template RowStats detail::row_stats(std::int64_t, std::span<const std::int32_t>);
template RowStats detail::row_stats(std::int64_t, std::span<const std::int64_t>);
template void validate_csr(std::int64_t, std::int64_t, std::span<const std::int32_t>, std::span<const std::int32_t>,
                           std::size_t);
template void validate_csr(std::int64_t, std::int64_t, std::span<const std::int64_t>, std::span<const std::int64_t>,
                           std::size_t);

} // namespace xgpu::sparse
