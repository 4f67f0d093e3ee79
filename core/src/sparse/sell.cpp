// SELL-C-sigma (Kreutzer, Hager, Wellein, Fehske and Bishop 2014), kernels/spmv_sell.kernel: the
// layout is built on the host from the matrix's CSR on the first product in this format and kept
// with the matrix (layout.hpp).
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "layout.hpp"
#include "spmv.hpp"

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

template <Value T, Index I> struct SellLayout : Layout {
    unsigned chunk = 0, sigma = 0;
    Array<std::int64_t> chunk_ptr; // chunks + 1 offsets into col and val
    Array<I> len, perm;            // per sorted row (padded to whole chunks): its length, its original row
    Array<I> col;
    Array<T> val;
};

template <Value T, Index I>
std::shared_ptr<const SellLayout<T, I>> build(const Csr<T, I>& a, unsigned chunk, unsigned sigma) {
    const HostCsr<T, I> h = a.to_host();
    const auto rows = std::size_t(h.rows), chunks = (rows + chunk - 1) / chunk, padded_rows = chunks * chunk;
    const auto length = [&](std::size_t r) { return h.row_ptr[r + 1] - h.row_ptr[r]; };

    // Longest rows first within each window of sigma rows (stable: equal rows keep their order).
    std::vector<I> perm(padded_rows, I(0)), len(padded_rows, I(0));
    std::iota(perm.begin(), perm.begin() + std::ptrdiff_t(rows), I(0));
    for (std::size_t w = 0; w < rows; w += sigma)
        std::stable_sort(perm.begin() + std::ptrdiff_t(w), perm.begin() + std::ptrdiff_t(std::min(rows, w + sigma)),
                         [&](I p, I q) { return length(std::size_t(p)) > length(std::size_t(q)); });
    for (std::size_t p = 0; p < rows; ++p)
        len[p] = length(std::size_t(perm[p]));

    std::vector<std::int64_t> chunk_ptr(chunks + 1, 0);
    for (std::size_t c = 0; c < chunks; ++c) {
        const I width =
            *std::max_element(len.begin() + std::ptrdiff_t(c * chunk), len.begin() + std::ptrdiff_t((c + 1) * chunk));
        chunk_ptr[c + 1] = chunk_ptr[c] + std::int64_t(width) * chunk;
    }
    // Padding: column 0 and value 0, never read (the kernel stops at each row's length).
    std::vector<I> col(std::size_t(chunk_ptr[chunks]), I(0));
    std::vector<T> val(col.size(), T(0));
    for (std::size_t p = 0; p < rows; ++p) {
        const auto at = std::size_t(chunk_ptr[p / chunk]) + p % chunk, from = std::size_t(h.row_ptr[perm[p]]);
        for (std::size_t k = 0; k < std::size_t(len[p]); ++k) {
            col[at + k * chunk] = h.col_idx[from + k];
            val[at + k * chunk] = h.values[from + k];
        }
    }

    auto l = std::make_shared<SellLayout<T, I>>();
    l->chunk = chunk;
    l->sigma = sigma;
    const Context& ctx = a.context();
    l->chunk_ptr = to_device<std::int64_t>(ctx, chunk_ptr);
    l->len = to_device<I>(ctx, len);
    l->perm = to_device<I>(ctx, perm);
    l->col = to_device<I>(ctx, col);
    l->val = to_device<T>(ctx, val);
    ctx.current_queue().finish(); // the build time includes the upload
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
    const auto d = [](const auto& arr) -> const xgpu::detail::ArrayDesc& { return arr.desc(); }; // no copies
    const auto o = [](const auto& arr) { return std::int64_t(arr.desc().offset); };
    const std::uint32_t beta_zero = c.beta == T(0) ? 1 : 0;
    k.launch(ctx.current_queue(), codegen::groups_grid((items + wg - 1) / wg, wg), d(l->chunk_ptr).buffer,
             o(l->chunk_ptr), d(l->len).buffer, o(l->len), d(l->perm).buffer, o(l->perm), d(l->col).buffer, o(l->col),
             d(l->val).buffer, o(l->val), d(c.x).buffer, o(c.x), d(c.y).buffer, o(c.y), c.alpha, c.beta, beta_zero,
             rows);
}

#define XGPU_SELL_INSTANTIATE(T, I) template void spmv_sell(const SpmvCall<T, I>&);
XGPU_SPARSE_TEMPLATES(XGPU_SELL_INSTANTIATE)
#undef XGPU_SELL_INSTANTIATE

} // namespace xgpu::sparse::detail
