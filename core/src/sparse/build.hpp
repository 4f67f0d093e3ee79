// Pieces shared by the host-side builders: the index-width check, COO triplets to canonical CSR
// (from_coo and the Matrix Market reader, whose triplets are int64 whatever the index type asked
// for), and row statistics and the diagonal from raw CSR arrays (HostCsr and Csr's span constructor).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "xgpu/sparse.hpp"

namespace xgpu::sparse::detail {

template <Index I> const char* index_name() {
    return std::is_same_v<I, std::int32_t> ? "int32" : "int64";
}

// Throws unless a rows x cols matrix of nnz entries can be indexed with I: the check every
// builder makes before allocating anything.
template <Index I> void check_fits(std::int64_t rows, std::int64_t cols, std::uint64_t nnz) {
    if (rows < 0 || cols < 0)
        throw InvalidArgument("xgpu: sparse: negative shape " + std::to_string(rows) + " x " + std::to_string(cols));
    constexpr auto top = std::uint64_t(std::numeric_limits<I>::max());
    const auto too_big = [](const char* what, std::uint64_t n) {
        throw InvalidArgument(std::string("xgpu: sparse: ") + what + " " + std::to_string(n) + " does not fit " +
                              index_name<I>() + " indices: use int64 indices (HostCsr<T, std::int64_t>)");
    };
    if (std::uint64_t(rows) > top) too_big("a row count of", std::uint64_t(rows));
    if (std::uint64_t(cols) > top) too_big("a column count of", std::uint64_t(cols));
    if (nnz > top) too_big("an entry count (nnz) of", nnz);
}

// Entries in any order; indices already known to lie in range. Duplicates are summed in input
// order; columns end up sorted within rows.
template <Value T, Index I, class J>
HostCsr<T, I> coo_to_csr(std::int64_t rows, std::int64_t cols, std::span<const J> row, std::span<const J> col,
                         std::span<const T> val) {
    const std::size_t n = val.size();
    std::vector<std::int64_t> start(std::size_t(rows) + 1, 0);
    for (std::size_t k = 0; k < n; ++k)
        ++start[std::size_t(row[k]) + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());

    std::vector<J> c(n);
    std::vector<T> v(n);
    {
        std::vector<std::int64_t> pos(start.begin(), start.end() - 1);
        for (std::size_t k = 0; k < n; ++k) {
            const auto p = std::size_t(pos[std::size_t(row[k])]++);
            c[p] = col[k];
            v[p] = val[k];
        }
    }

    // Sort each row by column (stably, so duplicates are summed in input order) and merge.
    std::vector<std::size_t> order;
    std::vector<J> sc;
    std::vector<T> sv;
    std::vector<std::int64_t> ptr(std::size_t(rows) + 1, 0);
    std::size_t out = 0;
    for (std::size_t r = 0; r < std::size_t(rows); ++r) {
        const auto b = std::size_t(start[r]), e = std::size_t(start[r + 1]);
        if (!std::is_sorted(c.begin() + b, c.begin() + e)) {
            order.resize(e - b);
            std::iota(order.begin(), order.end(), b);
            std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return c[x] < c[y]; });
            sc.resize(e - b);
            sv.resize(e - b);
            for (std::size_t k = 0; k < e - b; ++k) {
                sc[k] = c[order[k]];
                sv[k] = v[order[k]];
            }
            std::copy(sc.begin(), sc.end(), c.begin() + b);
            std::copy(sv.begin(), sv.end(), v.begin() + b);
        }
        const std::size_t row_start = out;
        for (std::size_t p = b; p < e; ++p) {
            if (out > row_start && c[out - 1] == c[p]) {
                v[out - 1] += v[p];
            } else {
                c[out] = c[p];
                v[out] = v[p];
                ++out;
            }
        }
        ptr[r + 1] = std::int64_t(out);
    }
    check_fits<I>(rows, cols, out);

    HostCsr<T, I> a;
    a.rows = rows;
    a.cols = cols;
    a.row_ptr.assign(ptr.begin(), ptr.end());
    a.col_idx.assign(c.begin(), c.begin() + std::ptrdiff_t(out));
    v.resize(out);
    a.values = std::move(v);
    return a;
}

// Runs f(b) once for every b in [0, blocks), spread over the host's threads (each takes the next
// block when done with one, so uneven blocks even out). f must not throw.
template <class F> void for_blocks(std::size_t blocks, F&& f) {
    const std::size_t threads = std::min<std::size_t>(blocks, std::max(1u, std::thread::hardware_concurrency()));
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
        for (std::size_t b; (b = next++) < blocks;)
            f(b);
    };
    {
        std::vector<std::jthread> pool; // joined on the way out, also when one fails to start
        for (std::size_t t = 1; t < threads; ++t)
            pool.emplace_back(work);
        work();
    }
}

// Rows a block of the passes over CSR arrays: a fixed count, so that the row statistics, summed
// block by block in block order, come out the same whatever the number of threads.
inline constexpr std::size_t csr_block_rows = std::size_t(1) << 16;

// validate_csr's checks, in its order and with its messages, and with them (where stats or
// diagonal is given) the row statistics and the diagonal (values: nvalues of them), in one pass
// over the arrays by blocks of rows across the host's threads. Throws before touching stats or
// diagonal beyond their sizes.
template <Value T, Index I>
void check_csr(std::int64_t rows, std::int64_t cols, std::span<const I> row_ptr, std::span<const I> col_idx,
               std::size_t nvalues, const T* values, RowStats* stats, std::vector<T>* diagonal);

// The row statistics of row pointers known to be valid (the same figures check_csr gives).
template <Index I> RowStats row_stats(std::int64_t rows, std::span<const I> row_ptr);

template <Value T, Index I>
std::vector<T> diagonal(std::int64_t rows, std::int64_t cols, std::span<const I> row_ptr, std::span<const I> col_idx,
                        std::span<const T> values) {
    std::vector<T> d(std::size_t(std::min(rows, cols)), T(0));
    for (std::size_t r = 0; r < d.size(); ++r)
        for (auto k = std::size_t(row_ptr[r]); k < std::size_t(row_ptr[r + 1]); ++k)
            if (std::size_t(col_idx[k]) == r) d[r] += values[k];
    return d;
}

// The paths a GPU takes where a CPU device takes another (the staged upload of a large Csr,
// the SELL fill a work-item per slot), taken on every device while a GpuPathsScope lives: tests
// run them on a CPU device this way.
inline std::atomic<int> gpu_paths_forced{0};
struct GpuPathsScope {
    GpuPathsScope() { ++gpu_paths_forced; }
    ~GpuPathsScope() { --gpu_paths_forced; }
    GpuPathsScope(const GpuPathsScope&) = delete;
    GpuPathsScope& operator=(const GpuPathsScope&) = delete;
};
inline bool gpu_paths(const Context& ctx) {
    return ctx.device().type() != DeviceType::cpu || gpu_paths_forced.load() > 0;
}

} // namespace xgpu::sparse::detail
