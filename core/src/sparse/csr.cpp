// Csr<T, I>: CSR arrays on a context. Checked on the host before any upload; the row statistics
// and the diagonal are computed in the same pass (detail::check_csr, over the host's threads), so
// later format choices read them without touching the device. On a GPU, large arrays are then
// copied through page-locked staging memory by the host's threads (staged_upload).
#include <algorithm>
#include <cstring>

#include "build.hpp"
#include "layout.hpp"

namespace xgpu::sparse {

namespace {

// Host-to-device copies of arrays of at least staged_min bytes in all: in rounds of up to
// staged_lanes chunks of staged_chunk bytes, a round copied into one of two sets of page-locked
// staging buffers by the host's threads while the device copies the previous round from the
// other set. A copy from pageable memory is staged by the driver through one thread, a fraction
// of a pinned copy's rate (`spmv-bench --n 4096 --p 0 --formats csr_vector` prints both beside
// the upload); here the host's threads fill the staging while the device reads it.
constexpr std::size_t staged_chunk = std::size_t(2) << 20;
constexpr std::size_t staged_lanes = 8;
constexpr std::size_t staged_min = std::size_t(16) << 20;

struct Piece {
    const xgpu::detail::ArrayDesc* dst;
    std::size_t element; // bytes an element
    const void* src;
    std::size_t bytes;
};

struct Chunk {
    const Piece* piece;
    std::size_t from, bytes;
};

void copy_rounds(const std::vector<Chunk>& chunks, std::size_t lanes, unsigned char* base, const Queue& q,
                 std::vector<Event> (&pending)[2]) {
    for (std::size_t round = 0; round * lanes < chunks.size(); ++round) {
        const std::size_t set = round % 2, first = round * lanes, count = std::min(lanes, chunks.size() - first);
        for (const Event& e : pending[set]) // the device is done with this set's previous round
            e.wait();
        pending[set].clear();
        unsigned char* const slots = base + set * lanes * staged_chunk;
        detail::for_blocks(count, [&](std::size_t i) {
            const Chunk& c = chunks[first + i];
            std::memcpy(slots + i * staged_chunk, static_cast<const unsigned char*>(c.piece->src) + c.from, c.bytes);
        });
        for (std::size_t i = 0; i < count; ++i) {
            const Chunk& c = chunks[first + i];
            const auto offset = std::size_t(c.piece->dst->offset) * c.piece->element + c.from;
            pending[set].push_back(q.write_async(c.piece->dst->buffer, slots + i * staged_chunk, c.bytes, offset));
        }
    }
}

void staged_upload(const Context& ctx, const std::vector<Piece>& pieces) {
    std::vector<Chunk> chunks;
    for (const Piece& p : pieces)
        for (std::size_t b = 0; b < p.bytes; b += staged_chunk)
            chunks.push_back({&p, b, std::min(staged_chunk, p.bytes - b)});
    const Queue q = ctx.current_queue();
    const std::size_t lanes = std::min(staged_lanes, chunks.size());
    const HostBuffer staging = ctx.alloc_host(2 * lanes * staged_chunk);
    auto* const base = static_cast<unsigned char*>(staging.data());
    std::vector<Event> pending[2];
    try {
        copy_rounds(chunks, lanes, base, q, pending);
    } catch (...) { // the staging memory outlives the copies from it
        try {
            q.finish();
        } catch (...) {
        }
        throw;
    }
    q.finish(); // the staging memory is released on return
}

} // namespace

template <Value T, Index I>
Csr<T, I>::Csr(const Context& ctx, const HostCsr<T, I>& host)
    : Csr(ctx, host.rows, host.cols, host.row_ptr, host.col_idx, host.values) {}

template <Value T, Index I>
Csr<T, I>::Csr(const Context& ctx, std::int64_t rows, std::int64_t cols, std::span<const I> row_ptr,
               std::span<const I> col_idx, std::span<const T> values) {
    RowStats stats;
    std::vector<T> diagonal;
    detail::check_csr<T, I>(rows, cols, row_ptr, col_idx, values.size(), values.data(), &stats, &diagonal);
    // Whether the columns rise strictly in every row (what multiply() asks of its right operand).
    std::atomic<bool> rising{true};
    detail::for_blocks((std::size_t(rows) + detail::csr_block_rows - 1) / detail::csr_block_rows, [&](std::size_t b) {
        const std::size_t r0 = b * detail::csr_block_rows,
                          r1 = std::min(std::size_t(rows), r0 + detail::csr_block_rows);
        for (std::size_t r = r0; r < r1 && rising.load(std::memory_order_relaxed); ++r)
            for (auto k = std::size_t(row_ptr[r]) + 1; k < std::size_t(row_ptr[r + 1]); ++k)
                if (col_idx[k - 1] >= col_idx[k]) {
                    rising = false;
                    break;
                }
    });
    canonical_ = rising;
    ctx_ = ctx;
    rows_ = rows;
    cols_ = cols;
    stats_ = stats;
    const std::size_t bytes =
        (row_ptr.size() + col_idx.size()) * sizeof(I) + (values.size() + diagonal.size()) * sizeof(T);
    if (bytes < staged_min || !detail::gpu_paths(ctx)) { // a CPU device's copy is a memcpy already
        row_ptr_ = to_device<I>(ctx, row_ptr);
        col_idx_ = to_device<I>(ctx, col_idx);
        values_ = to_device<T>(ctx, values);
        diagonal_ = to_device<T>(ctx, diagonal);
    } else {
        row_ptr_ = empty<I>(ctx, {row_ptr.size()});
        col_idx_ = empty<I>(ctx, {col_idx.size()});
        values_ = empty<T>(ctx, {values.size()});
        diagonal_ = empty<T>(ctx, {diagonal.size()});
        staged_upload(ctx, {{&row_ptr_.desc(), sizeof(I), row_ptr.data(), row_ptr.size_bytes()},
                            {&col_idx_.desc(), sizeof(I), col_idx.data(), col_idx.size_bytes()},
                            {&values_.desc(), sizeof(T), values.data(), values.size_bytes()},
                            {&diagonal_.desc(), sizeof(T), diagonal.data(), diagonal.size() * sizeof(T)}});
    }
    layouts_ = std::make_shared<detail::LayoutCache>();
}

template <Value T, Index I> std::optional<double> Csr<T, I>::build_ms(Format f) const {
    return layouts_ ? layouts_->build_ms(f) : std::nullopt;
}

template <Value T, Index I> HostCsr<T, I> Csr<T, I>::to_host() const {
    HostCsr<T, I> h;
    h.rows = rows_;
    h.cols = cols_;
    if (!row_ptr_.empty()) h.row_ptr = row_ptr_.get();
    if (!col_idx_.empty()) h.col_idx = col_idx_.get();
    if (!values_.empty()) h.values = values_.get();
    return h;
}

template <Value T, Index I> std::string Csr<T, I>::asymmetry(double rtol) const {
    return sparse::asymmetry(to_host(), rtol);
}

#define XGPU_SPARSE_INSTANTIATE(T, I) template class Csr<T, I>;
XGPU_SPARSE_TEMPLATES(XGPU_SPARSE_INSTANTIATE)
#undef XGPU_SPARSE_INSTANTIATE

} // namespace xgpu::sparse
