// SpMV along the merge path (Merrill and Garland 2016), kernels/spmv_merge.kernel: CSR as it is,
// no layout; each work-item takes an equal share of rows plus entries, so the work is even
// whatever the row lengths. Two launches on the matrix's queue: the product, then the carries of
// rows that cross work-groups.
#include <algorithm>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "spmv.hpp"

namespace xgpu::sparse::detail {

// Merge items (rows plus entries) per work-item. GPUs: few, so that a work-group's tile is small
// and many groups fill the device (Merrill and Garland use 7 per thread). CPUs: long shares, so
// that each work-item streams its entries and the binary searches (about log2(rows) scattered
// reads each) are few: PoCL, 2-D Poisson 1024^2 f64: 14 ms with 64 items, 5.3 ms with 512, beside
// 4.6 ms for CSR scalar on a busy machine.
unsigned merge_items(const Context& ctx) {
    return ctx.device().type() == DeviceType::cpu ? 512u : 8u;
}

// Whether a tile's row ends (one index each, plus one) and products (one value each) fit the
// device's static local memory beside the carries, on a GPU.
bool merge_staged(const Context& ctx, unsigned wg, unsigned items, std::size_t index_size, std::size_t value_size) {
    const DeviceInfo& d = ctx.device().info();
    const std::size_t limit = codegen::static_local_limit(d);
    const std::size_t tile = std::size_t(wg) * items;
    const std::size_t bytes = (tile + 1) * index_size + tile * value_size + std::size_t(wg) * (8 + value_size) + 16;
    return d.type != DeviceType::cpu && bytes <= limit;
}

template <Value T, Index I> void spmv_merge(const SpmvCall<T, I>& c) {
    const Context& ctx = c.a.context();
    const unsigned wg = group_size(ctx), items = c.plan.items;
    // GPUs stage the tile's row ends in local memory (kernels/spmv_merge.kernel); CPUs' long shares
    // would not fit, and their caches serve the searches.
    const bool staged = merge_staged(ctx, wg, items, sizeof(I), sizeof(T));
    const std::string key = fmt::format("{}|g{}i{}{}", spmv_key<T, I>("merge"), wg, items, staged ? "s" : "");
    const auto source = [&] {
        return codegen::fill("spmv_merge.kernel", {{"spmv_h", spmv_support<T, I>()},
                                                   {"group_size", std::to_string(wg)},
                                                   {"items", std::to_string(items)},
                                                   {"staged", staged ? "1" : "0"}});
    };
    const Kernel product = xgpu::detail::generated_kernel(ctx, key + "|product", source, "xgpu_spmv_merge");
    const Kernel carry = xgpu::detail::generated_kernel(ctx, key + "|carry", source, "xgpu_spmv_merge_carry");

    const std::int64_t rows = c.a.rows(), nnz = std::int64_t(c.a.nnz());
    const std::uint64_t tile = std::uint64_t(wg) * items, groups = (std::uint64_t(rows + nnz) + tile - 1) / tile;
    auto carry_row = empty<std::int64_t>(ctx, {std::size_t(groups)});
    auto carry_val = empty<T>(ctx, {std::size_t(groups)});
    const auto d = [](const auto& arr) -> const xgpu::detail::ArrayDesc& { return arr.desc(); }; // no copies
    const std::uint32_t beta_zero = c.beta == T(0) ? 1 : 0;
    const Queue& q = ctx.current_queue();
    // Staged: every tile's first row, searched by one work-item each before the product (H200,
    // power-law 2^24 rows: each group's own two searches, about 24 dependent loads while the rest
    // of the group waited, took most of the product's time).
    Array<std::int64_t> tile_rows = staged ? empty<std::int64_t>(ctx, {std::size_t(groups + 1)}) : carry_row;
    if (staged) {
        const Kernel bounds = xgpu::detail::generated_kernel(ctx, key + "|bounds", source, "xgpu_spmv_merge_bounds");
        bounds.launch(q, codegen::groups_grid((groups + 1 + wg - 1) / wg, wg), d(c.a.row_ptr()).buffer,
                      std::int64_t(d(c.a.row_ptr()).offset), rows, nnz, groups, d(tile_rows).buffer);
    }
    product.launch(q, codegen::groups_grid(groups, wg), d(c.a.row_ptr()).buffer, std::int64_t(d(c.a.row_ptr()).offset),
                   d(c.a.col_idx()).buffer, std::int64_t(d(c.a.col_idx()).offset), d(c.a.values()).buffer,
                   std::int64_t(d(c.a.values()).offset), d(c.x).buffer, std::int64_t(d(c.x).offset), d(c.y).buffer,
                   std::int64_t(d(c.y).offset), c.alpha, c.beta, beta_zero, rows, nnz, d(carry_row).buffer,
                   d(carry_val).buffer, d(tile_rows).buffer);
    if (groups > 1)
        carry.launch(q, codegen::groups_grid((groups + wg - 1) / wg, wg), d(carry_row).buffer, d(carry_val).buffer,
                     groups, d(c.y).buffer, std::int64_t(d(c.y).offset), c.alpha, rows);
}

#define XGPU_MERGE_INSTANTIATE(T, I) template void spmv_merge(const SpmvCall<T, I>&);
XGPU_SPARSE_TEMPLATES(XGPU_MERGE_INSTANTIATE)
#undef XGPU_MERGE_INSTANTIATE

} // namespace xgpu::sparse::detail
