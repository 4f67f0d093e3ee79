// The packeted format on the device, kernels/spmv_packeted.kernel: the layout (packets.hpp) is
// built on the host from the matrix's CSR on the first product in this format, its remainder
// turned into CSR over the rows that have remainder entries, uploaded and kept with the matrix
// (layout.hpp; the build time covers the download, the partition, the layout and the upload).
// Two launches on the matrix's queue: the packets, then the remainder.
#include "packeted.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "build.hpp"
#include "layout.hpp"

namespace xgpu::sparse::detail {

namespace {

// What the packet kernel's static local arrays may take: the device's static limit
// (codegen::static_local_limit), never more than 48 KiB (CUDA's).
std::size_t static_local_bytes(const DeviceInfo& d) {
    return std::min<std::size_t>(codegen::static_local_limit(d), 48 * 1024);
}

// Past that, the x and y slices become local-memory parameters sized at launch: a packet may use
// all the local memory a work-group may have (DeviceInfo::local_memory: on CUDA the opt-in size
// of dynamic shared memory, 227 KiB on the H200, past the 48 KiB of static arrays).
std::size_t local_limit(const DeviceInfo& d) {
    return std::max<std::size_t>(std::size_t(d.local_memory), static_local_bytes(d));
}

// What the default layout gives a packet: what static arrays take, 48 KiB at most (the faster
// kernel, see kernels/spmv_packeted.kernel), so that four work-groups share a GPU
// multiprocessor's local memory (one packet of 227 KiB would leave it one work-group, too few
// loads in flight) and a CPU core's L2 cache holds the slices (PoCL reports 512 KiB).
std::size_t default_local_bytes(const DeviceInfo& d) {
    return static_local_bytes(d);
}

template <Value T, Index I> struct PacketedLayout : Layout {
    unsigned threads = 0;
    std::int64_t max_rows = 0; // sizes the kernel's local arrays
    bool narrow = true;
    std::uint64_t packets = 0;
    double remainder_share = 0;
    Array<I> packet_ptr, perm, slot_ptr, thread_steps;
    Array<std::uint32_t> local;
    Array<T> values;
    // The remainder as CSR over the rows that have remainder entries: row rem_row[j] has the
    // entries rem_ptr[j] .. rem_ptr[j + 1].
    std::uint64_t rem_rows = 0;
    Array<I> rem_row, rem_ptr, rem_col;
    Array<T> rem_values;
};

// An array with no elements has no buffer to pass: one element, never read, stands in for it.
template <class V> Array<V> upload(const Context& ctx, const std::vector<V>& v) {
    return to_device<V>(ctx, v.empty() ? std::vector<V>(1, V(0)) : v);
}

template <Value T, Index I> void check_runnable(const Csr<T, I>& a, const PacketLayout<T, I>& h) {
    const DeviceInfo& d = a.context().device().info();
    const std::size_t local = std::size_t(h.max_rows) * 2 * sizeof(T), limit = local_limit(d);
    if (h.rows != a.rows() || a.rows() != a.cols() || h.nnz != a.nnz() || h.perm.size() != std::size_t(h.rows) ||
        h.thread_steps.size() != std::size_t(h.packets()) * h.threads)
        throw InvalidArgument(fmt::format("xgpu: sparse: packeted: a layout of {} rows and {} entries does not fit a "
                                          "{}x{} matrix of {} entries",
                                          h.rows, h.nnz, a.rows(), a.cols(), a.nnz()));
    if (h.threads == 0 || (d.max_work_group_size && h.threads > d.max_work_group_size))
        throw InvalidArgument(fmt::format("xgpu: sparse: packeted: {} work-items a packet; the device runs 1 to {} "
                                          "in a work-group",
                                          h.threads, d.max_work_group_size));
    if (local > limit)
        throw InvalidArgument(fmt::format("xgpu: sparse: packeted: packets of up to {} rows need {} bytes of local "
                                          "memory; the device allows a kernel {}",
                                          h.max_rows, local, limit));
}

template <Value T, Index I>
std::shared_ptr<const PacketedLayout<T, I>> upload_layout(const Context& ctx, const PacketLayout<T, I>& h) {
    auto l = std::make_shared<PacketedLayout<T, I>>();
    l->threads = h.threads;
    l->max_rows = h.max_rows;
    l->narrow = h.narrow;
    l->packets = std::uint64_t(h.packets());
    l->remainder_share = h.remainder_share();
    l->packet_ptr = upload(ctx, h.packet_ptr);
    l->perm = upload(ctx, h.perm);
    l->slot_ptr = upload(ctx, h.slot_ptr);
    l->thread_steps = upload(ctx, h.thread_steps);
    l->local = upload(ctx, h.local);
    l->values = upload(ctx, h.values);
    // The remainder is sorted by row: its runs of equal rows become the CSR rows, found over the
    // host's threads by blocks of entries (runs counted, then written from each block's offset).
    const std::size_t m = h.remainder_nnz(), blocks = (m + csr_block_rows - 1) / csr_block_rows;
    const auto starts = [&](std::size_t b, auto&& f) {
        for (std::size_t k = b * csr_block_rows; k < std::min(m, (b + 1) * csr_block_rows); ++k)
            if (k == 0 || h.rem_row[k] != h.rem_row[k - 1]) f(k);
    };
    std::vector<std::size_t> first(blocks + 1, 0);
    for_blocks(blocks, [&](std::size_t b) { starts(b, [&](std::size_t) { ++first[b + 1]; }); });
    for (std::size_t b = 0; b < blocks; ++b)
        first[b + 1] += first[b];
    std::vector<I> rows(first[blocks]), ptr(first[blocks] + 1, I(m));
    for_blocks(blocks, [&](std::size_t b) {
        std::size_t j = first[b];
        starts(b, [&](std::size_t k) {
            rows[j] = h.rem_row[k];
            ptr[j++] = I(k);
        });
    });
    l->rem_rows = rows.size();
    l->rem_row = upload(ctx, rows);
    l->rem_ptr = upload(ctx, ptr);
    l->rem_col = upload(ctx, h.rem_col);
    l->rem_values = upload(ctx, h.rem_values);
    ctx.current_queue().finish(); // the build time includes the upload
    return l;
}

} // namespace

std::size_t packet_local_limit(const Context& ctx) {
    return local_limit(ctx.device().info());
}

PacketOptions packet_options(const Context& ctx, std::size_t value_size) {
    PacketOptions o;
    o.local_bytes = default_local_bytes(ctx.device().info());
    o.threads = group_size(ctx);
    o.value_size = value_size;
    return o;
}

template <Value T, Index I> bool use_packets(const Csr<T, I>& a, const PacketLayout<T, I>& layout) {
    check_runnable(a, layout);
    bool made = false;
    detail::layout<PacketedLayout<T, I>>(a, Format::packeted, [&] {
        made = true;
        return upload_layout(a.context(), layout);
    });
    return made;
}

template <Value T, Index I> void spmv_packeted(const SpmvCall<T, I>& c) {
    const Context& ctx = c.a.context();
    const auto l = layout<PacketedLayout<T, I>>(c.a, Format::packeted, [&] {
        PacketOptions o = packet_options(ctx, sizeof(T));
        o.threads = c.plan.threads;
        o.local_bytes = std::size_t(c.plan.packet_rows) * 2 * sizeof(T);
        const PacketLayout<T, I> h = build_packets(c.a.to_host(), o);
        check_runnable(c.a, h);
        return upload_layout(ctx, h);
    });
    const unsigned wg = l->threads;
    // The slices as static arrays where they fit the static limit, else as parameters.
    const Local slice{std::size_t(l->max_rows) * sizeof(T)}; // x's and y's, each
    const bool dynamic = 2 * slice.bytes > static_local_bytes(ctx.device().info());
    const std::string key = fmt::format("{}|g{}r{}{}", spmv_key<T, I>("packeted"), wg,
                                        dynamic ? std::int64_t(0) : l->max_rows, l->narrow ? "n" : "w");
    const auto source = [&] {
        return codegen::fill("spmv_packeted.kernel", {{"spmv_h", spmv_support<T, I>()},
                                                      {"threads", std::to_string(wg)},
                                                      {"max_rows", std::to_string(dynamic ? 1 : l->max_rows)},
                                                      {"dynamic", dynamic ? "1" : "0"},
                                                      {"narrow", l->narrow ? "1" : "0"}});
    };
    const Kernel packets = xgpu::detail::generated_kernel(ctx, key, source, "xgpu_spmv_packeted");
    const std::uint32_t beta_zero = c.beta == T(0) ? 1 : 0;
    const Queue& q = ctx.current_queue();
    const Grid grid = codegen::groups_grid(l->packets, wg);
    if (dynamic) // the x and y slices as local-memory parameters
        packets.launch(q, grid, l->packet_ptr, l->perm, l->slot_ptr, l->thread_steps, l->local, l->values, c.x, c.y,
                       c.alpha, c.beta, beta_zero, l->packets, slice, slice);
    else
        packets.launch(q, grid, l->packet_ptr, l->perm, l->slot_ptr, l->thread_steps, l->local, l->values, c.x, c.y,
                       c.alpha, c.beta, beta_zero, l->packets);
    if (l->rem_rows == 0) return;
    const Kernel remainder =
        xgpu::detail::generated_kernel(ctx, key + "|remainder", source, "xgpu_spmv_packeted_remainder");
    remainder.launch(q, codegen::groups_grid((l->rem_rows + wg - 1) / wg, wg), l->rem_row, l->rem_ptr, l->rem_col,
                     l->rem_values, c.x, c.y, c.alpha, l->rem_rows);
}

#define XGPU_PACKETED_INSTANTIATE(T, I)                                                                                \
    template bool use_packets(const Csr<T, I>&, const PacketLayout<T, I>&);                                            \
    template void spmv_packeted(const SpmvCall<T, I>&);
XGPU_SPARSE_TEMPLATES(XGPU_PACKETED_INSTANTIATE)
#undef XGPU_PACKETED_INSTANTIATE

} // namespace xgpu::sparse::detail

namespace xgpu::sparse {

template <Value T, Index I> std::optional<double> Csr<T, I>::remainder_share() const {
    if (!layouts_) return std::nullopt;
    const auto l = layouts_->template find<detail::PacketedLayout<T, I>>(Format::packeted);
    return l ? std::optional<double>(l->remainder_share) : std::nullopt;
}

#define XGPU_REMAINDER_SHARE_INSTANTIATE(T, I) template std::optional<double> Csr<T, I>::remainder_share() const;
XGPU_SPARSE_TEMPLATES(XGPU_REMAINDER_SHARE_INSTANTIATE)
#undef XGPU_REMAINDER_SHARE_INSTANTIATE

} // namespace xgpu::sparse
