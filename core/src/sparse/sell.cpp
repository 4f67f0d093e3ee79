// SELL-C-sigma (Kreutzer, Hager, Wellein, Fehske and Bishop 2014), kernels/spmv_sell.kernel: the
// layout is built on the device from the matrix's CSR (kernels/sell_build.kernel) on the first
// product in this format and kept with the matrix (layout.hpp). The CSR never leaves the device:
// the only transfer is the layout's size, read back to allocate it.
#include <algorithm>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "build.hpp"
#include "layout.hpp"
#include "spmv.hpp"
#include "xgpu/scan.hpp"

namespace xgpu::sparse::detail {

// C and sigma, chosen here only. GPUs: C = 32, a warp, so that one column of a chunk is one
// coalesced load per warp; sigma = 8 chunks: sorting within 256 rows removes most padding of
// uneven rows while x's accesses stay near the original row order. CPUs: C = 8, a chunk per
// work-item summed across its rows as 8 SIMD lanes (f64 AVX-512, or two AVX2 vectors); sigma = 8
// chunks likewise.
void sell_shape(const Context& ctx, unsigned& chunk, unsigned& sigma) {
    chunk = ctx.device().type() == DeviceType::cpu ? 8u : 32u;
    sigma = 8 * chunk;
}

namespace {

// Slots of the layout that one work-item of the fill writes (kernels/sell_build.kernel): enough
// that the work-group's search for its chunks is shared by a few thousand slots.
constexpr unsigned fill_items = 8;

template <Value T, Index I> struct SellLayout : Layout {
    unsigned chunk = 0, sigma = 0;
    Array<std::int64_t> chunk_ptr; // chunks + 1 offsets into col and val
    Array<I> len, perm;            // per sorted row (padded to whole chunks): its length, its original row
    Array<I> col;
    Array<T> val;
    std::int64_t slots = 0; // the elements of col and val in use (one stands in for none)
};

template <Value T, Index I>
std::shared_ptr<const SellLayout<T, I>> build(const Csr<T, I>& a, unsigned chunk, unsigned sigma) {
    if (chunk == 0 || sigma % chunk != 0)
        throw InvalidArgument(
            fmt::format("xgpu: sparse: SELL-C-sigma: sigma {} must be a multiple of C {}", sigma, chunk));
    const Context& ctx = a.context();
    const Queue q = ctx.current_queue();
    const auto rows = std::uint64_t(a.rows()), chunks = (rows + chunk - 1) / chunk, padded = chunks * chunk;
    auto l = std::make_shared<SellLayout<T, I>>();
    l->chunk = chunk;
    l->sigma = sigma;
    l->len = empty<I>(ctx, {std::size_t(padded)});
    l->perm = empty<I>(ctx, {std::size_t(padded)});
    l->chunk_ptr = zeros<std::int64_t>(ctx, {std::size_t(chunks) + 1});
    const unsigned wg = group_size(ctx);
    const auto source = [&] {
        return codegen::fill("sell_build.kernel", {{"spmv_h", spmv_support<T, I>()},
                                                   {"group_size", std::to_string(wg)},
                                                   {"chunk", std::to_string(chunk)},
                                                   {"sigma", std::to_string(sigma)},
                                                   {"items", std::to_string(fill_items)}});
    };
    const std::string key = fmt::format("{}|g{}c{}s{}i{}", spmv_key<T, I>("sell_build"), wg, chunk, sigma, fill_items);
    if (rows > 0) {
        // Chunk sizes into chunk_ptr, then scanned there in place.
        const Kernel sort = xgpu::detail::generated_kernel(ctx, key + "|sort", source, "xgpu_sell_sort");
        sort.launch(q, codegen::groups_grid((rows + sigma - 1) / sigma, wg), a.row_ptr(), l->len, l->perm, l->chunk_ptr,
                    rows, chunks);
        ScanKernel<std::int64_t>(ctx, "a + b", "0").exclusive(l->chunk_ptr, l->chunk_ptr);
    }
    std::int64_t slots = 0;
    q.read(l->chunk_ptr.buffer(), &slots, sizeof slots, std::size_t(l->chunk_ptr.offset() + std::int64_t(chunks)) * 8);
    // An array without elements has no buffer to pass: one element, never read, stands in for it.
    l->col = empty<I>(ctx, {std::size_t(std::max<std::int64_t>(slots, 1))});
    l->val = empty<T>(ctx, {std::size_t(std::max<std::int64_t>(slots, 1))});
    l->slots = slots;
    if (slots > 0 && gpu_paths(ctx)) {
        const Kernel fill = xgpu::detail::generated_kernel(ctx, key + "|fill", source, "xgpu_sell_fill");
        const std::uint64_t tile = std::uint64_t(wg) * fill_items;
        fill.launch(q, codegen::groups_grid((std::uint64_t(slots) + tile - 1) / tile, wg), a.row_ptr(), a.col_idx(),
                    a.values(), l->chunk_ptr, l->len, l->perm, l->col, l->val, chunks, std::uint64_t(slots));
    } else if (slots > 0) {
        const Kernel fill = xgpu::detail::generated_kernel(ctx, key + "|fill_rows", source, "xgpu_sell_fill_rows");
        fill.launch(q, codegen::groups_grid((padded + wg - 1) / wg, wg), a.row_ptr(), a.col_idx(), a.values(),
                    l->chunk_ptr, l->len, l->perm, l->col, l->val, padded);
    }
    q.finish(); // the build time covers the kernels
    return l;
}

} // namespace

template <Value T, Index I> void spmv_sell(const SpmvCall<T, I>& c) {
    const Context& ctx = c.a.context();
    const auto l = layout<SellLayout<T, I>>(c.a, Format::sell, [&] { return build(c.a, c.plan.chunk, c.plan.sigma); });
    const bool per_chunk = ctx.device().type() == DeviceType::cpu;
    const unsigned wg = group_size(ctx);
    const std::string key = fmt::format("{}|g{}c{}{}", spmv_key<T, I>("sell"), wg, l->chunk, per_chunk ? "k" : "r");
    const Kernel k = xgpu::detail::generated_kernel(
        ctx, key,
        [&] {
            return codegen::fill("spmv_sell.kernel", {{"spmv_h", spmv_support<T, I>()},
                                                      {"group_size", std::to_string(wg)},
                                                      {"chunk", std::to_string(l->chunk)},
                                                      {"per_chunk", per_chunk ? "1" : "0"}});
        },
        "xgpu_spmv_sell");
    const std::uint64_t rows = std::uint64_t(c.a.rows()), items = per_chunk ? (rows + l->chunk - 1) / l->chunk : rows;
    const std::uint32_t beta_zero = c.beta == T(0) ? 1 : 0;
    k.launch(ctx.current_queue(), codegen::groups_grid((items + wg - 1) / wg, wg), l->chunk_ptr, l->len, l->perm,
             l->col, l->val, c.x, c.y, c.alpha, c.beta, beta_zero, rows);
}

template <Value T, Index I> SellArrays<T, I> sell_arrays(const Csr<T, I>& a, unsigned chunk, unsigned sigma) {
    const auto l = build(a, chunk, sigma);
    SellArrays<T, I> h;
    h.chunk_ptr = l->chunk_ptr.get();
    if (l->len.size()) {
        h.len = l->len.get();
        h.perm = l->perm.get();
    }
    h.col = l->col.get();
    h.val = l->val.get();
    h.col.resize(std::size_t(l->slots));
    h.val.resize(std::size_t(l->slots));
    return h;
}

#define XGPU_SELL_INSTANTIATE(T, I)                                                                                    \
    template void spmv_sell(const SpmvCall<T, I>&);                                                                    \
    template SellArrays<T, I> sell_arrays(const Csr<T, I>&, unsigned, unsigned);
XGPU_SPARSE_TEMPLATES(XGPU_SELL_INSTANTIATE)
#undef XGPU_SELL_INSTANTIATE

} // namespace xgpu::sparse::detail
