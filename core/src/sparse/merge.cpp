// SpMV along the merge path (Merrill and Garland 2016), kernels/spmv_merge.kernel: CSR as it is;
// each work-item takes an equal share of rows plus entries, so the work is even whatever the row
// lengths. Launches on the matrix's queue: staged (GPUs), the tiles' first rows once (kept with
// the matrix); the product; then the carries of rows that cross work-groups.
#include <algorithm>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "layout.hpp"
#include "spmv.hpp"

namespace xgpu::sparse::detail {

// A staged tile's local memory: its row ends (an offset each, plus one), its products (one value
// each), and each work-item's first row (an offset), its last row (32-bit) and its share of that
// row; the offsets are 16-bit in tiles of fewer than 2^16 steps, else 32-bit.
std::size_t merge_tile_bytes(unsigned wg, unsigned items, std::size_t value_size) {
    const std::size_t tile = std::size_t(wg) * items, offset = tile < 65536 ? 2 : 4;
    return (tile + 1) * offset + tile * value_size + std::size_t(wg) * (offset + 4 + value_size) + 32; // + alignment
}

// The shape: a LaunchShapeScope's, whose staged tile must fit the device's local memory (else
// refused, naming the sizes), or the default (core/src/codegen/launch.cpp), whose staged tile is
// unstaged where it would not fit (complex<double> values on a device of 32 KiB).
// plan_spmv asks first, so a refusal comes before any work.
template <Value T, Index I> LaunchShape merge_shape(const Context& ctx) {
    LaunchShape s = launch_shape(ctx, KernelFamily::merge, dtype_of<T>::value);
    const std::size_t bytes = merge_tile_bytes(s.group_size, s.items, sizeof(T)),
                      limit = codegen::static_local_limit(ctx.device().info());
    if (s.staged && bytes > limit) {
        if (codegen::scoped_shape(ctx, KernelFamily::merge, dtype_of<T>::value))
            throw InvalidArgument(fmt::format("xgpu: launch shape {} for merge kernels stages {} bytes of local "
                                              "memory, more than the {} of {}",
                                              s.key(), bytes, limit, ctx.device().name()));
        s.staged = false;
    }
    return s;
}

// The merge path's layout: the first row of every tile of `tile` steps.
struct MergeTiles : Layout {
    std::uint64_t tile = 0;
    Array<std::int64_t> rows;
    MergeTiles(std::uint64_t t, Array<std::int64_t> r) : tile(t), rows(std::move(r)) {}
};

template <Value T, Index I> void spmv_merge(const SpmvCall<T, I>& c) {
    const Context& ctx = c.a.context();
    const LaunchShape s = merge_shape<T, I>(ctx);
    const unsigned wg = s.group_size, items = s.items;
    const bool staged = s.staged;
    // Staged tiles load the ends of each work-item's first two rows before the entries, so that
    // their latency overlaps the entries' (on GPUs faster than loading them after the gathers, or
    // than loading three rows' ends).
    const unsigned prefetch = staged ? 2 : 0;
    const std::string key =
        fmt::format("{}|g{}i{}{}p{}", spmv_key<T, I>("merge"), wg, items, staged ? "s" : "", prefetch);
    const auto source = [&] {
        return codegen::fill("spmv_merge.kernel", {{"spmv_h", spmv_support<T, I>()},
                                                   {"group_size", std::to_string(wg)},
                                                   {"items", std::to_string(items)},
                                                   {"staged", staged ? "1" : "0"},
                                                   {"prefetch", std::to_string(prefetch)}});
    };
    const Kernel product = xgpu::detail::generated_kernel(ctx, key + "|product", source, "xgpu_spmv_merge");
    const Kernel carry = xgpu::detail::generated_kernel(ctx, key + "|carry", source, "xgpu_spmv_merge_carry");

    const std::int64_t rows = c.a.rows(), nnz = std::int64_t(c.a.nnz());
    const std::uint64_t tile = std::uint64_t(wg) * items, groups = (std::uint64_t(rows + nnz) + tile - 1) / tile;
    auto carry_row = empty<std::int64_t>(ctx, {std::size_t(groups)});
    auto carry_val = empty<T>(ctx, {std::size_t(groups)});
    const std::uint32_t beta_zero = c.beta == T(0) ? 1 : 0;
    const Queue& q = ctx.current_queue();
    // Staged: every tile's first row, searched by one work-item each (on a power-law matrix of 2^24
    // rows each group's own two searches, about 24 dependent loads while the rest of the group
    // waited, took most of the product's time), once: kept with the matrix for the tile size of its
    // first staged product (the layout's build time), searched again on each call under other
    // shapes.
    Array<std::int64_t> tile_rows = carry_row;
    if (staged) {
        const auto search = [&] {
            auto r = empty<std::int64_t>(ctx, {std::size_t(groups + 1)});
            const Kernel bounds =
                xgpu::detail::generated_kernel(ctx, key + "|bounds", source, "xgpu_spmv_merge_bounds");
            bounds.launch(q, codegen::groups_grid((groups + 1 + wg - 1) / wg, wg), c.a.row_ptr(), rows, nnz, groups,
                          r.buffer());
            return r;
        };
        const auto tiles = layout<MergeTiles>(c.a, Format::merge_path, [&] {
            auto l = std::make_shared<MergeTiles>(tile, search());
            q.finish(); // other queues may read it next
            return std::shared_ptr<const MergeTiles>(std::move(l));
        });
        tile_rows = tiles->tile == tile ? tiles->rows : search();
    }
    product.launch(q, codegen::groups_grid(groups, wg), c.a.row_ptr(), c.a.col_idx(), c.a.values(), c.x, c.y, c.alpha,
                   c.beta, beta_zero, rows, nnz, carry_row.buffer(), carry_val.buffer(), tile_rows.buffer());
    if (groups > 1)
        carry.launch(q, codegen::groups_grid((groups + wg - 1) / wg, wg), carry_row.buffer(), carry_val.buffer(),
                     groups, c.y, c.alpha, rows);
}

#define XGPU_MERGE_INSTANTIATE(T, I)                                                                                   \
    template void spmv_merge(const SpmvCall<T, I>&);                                                                   \
    template LaunchShape merge_shape<T, I>(const Context&);
XGPU_SPARSE_TEMPLATES(XGPU_MERGE_INSTANTIATE)
#undef XGPU_MERGE_INSTANTIATE

} // namespace xgpu::sparse::detail
