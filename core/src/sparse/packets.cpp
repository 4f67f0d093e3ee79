// The packeted format on the host: the layout from a partition, and its reference product.
#include "packets.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "build.hpp"

namespace xgpu::sparse {

namespace {

std::size_t row_bytes(const PacketOptions& options, std::size_t value_size) {
    if (options.threads == 0) throw InvalidArgument("xgpu: sparse: packets: a packet needs at least one thread");
    const std::size_t bytes = 2 * (options.value_size ? options.value_size : value_size); // its x and its y entry
    if (options.local_bytes < bytes)
        throw InvalidArgument(fmt::format("xgpu: sparse: packets: a local-memory budget of {} bytes holds no row: a "
                                          "packet needs {} bytes a row (an x and a y value of {} bytes)",
                                          options.local_bytes, bytes, bytes / 2));
    return bytes;
}

template <Value T, Index I> void check_square(const HostCsr<T, I>& a) {
    if (a.rows != a.cols)
        throw InvalidArgument(fmt::format("xgpu: sparse: packets: the packeted format needs a square matrix, not {} x "
                                          "{}: use another format",
                                          a.rows, a.cols));
}

void check_partition(const Partition& part, std::int64_t rows, std::int64_t max_rows) {
    const auto fail = [](const std::string& what) {
        throw InvalidArgument("xgpu: sparse: packets: not a partition of the rows: " + what);
    };
    if (part.part_ptr.empty() || part.part_ptr.front() != 0 || part.part_ptr.back() != rows ||
        part.rows.size() != std::size_t(rows))
        fail(fmt::format("it must list each of the {} rows once", rows));
    for (std::int64_t p = 0; p < part.parts(); ++p)
        if (part.size(p) < 1 || part.size(p) > max_rows)
            fail(fmt::format("part {} has {} rows; parts hold 1 to {}", p, part.size(p), max_rows));
    std::vector<char> seen(std::size_t(rows), 0);
    for (const auto r : part.rows) {
        if (r < 0 || r >= rows) fail(fmt::format("row {} is out of range for {} rows", r, rows));
        if (seen[std::size_t(r)]++) fail(fmt::format("row {} is in two parts", r));
    }
}

} // namespace

template <Value T, Index I> PacketLayout<T, I> build_packets(const HostCsr<T, I>& a, const PacketOptions& options) {
    const std::size_t bytes = row_bytes(options, sizeof(T));
    check_square(a);
    const auto max_rows = std::int64_t(
        std::min<std::size_t>(options.local_bytes / bytes, std::size_t(std::numeric_limits<std::int64_t>::max())));
    return build_packets(a, partition_rows(a, max_rows, options.partitioner), options);
}

namespace detail {

template <Value T, Index I>
PacketLayout<T, I> begin_layout(const HostCsr<T, I>& a, const Partition& part, const PacketOptions& options) {
    const std::size_t bytes = row_bytes(options, sizeof(T));
    check_square(a);
    a.validate();
    PacketLayout<T, I> out;
    out.rows = a.rows;
    out.nnz = a.nnz();
    out.threads = options.threads;
    out.max_rows = std::int64_t(
        std::min<std::size_t>(options.local_bytes / bytes, std::size_t(std::numeric_limits<std::int64_t>::max())));
    check_partition(part, a.rows, out.max_rows);
    out.partitioner = part.method;
    out.perm.assign(part.rows.begin(), part.rows.end());
    out.packet_ptr.assign(part.part_ptr.begin(), part.part_ptr.end());
    std::int64_t widest = 0;
    for (std::int64_t p = 0; p < part.parts(); ++p)
        widest = std::max(widest, part.size(p));
    out.narrow = widest <= 65536;
    return out;
}

} // namespace detail

template <Value T, Index I>
PacketLayout<T, I> build_packets(const HostCsr<T, I>& a, const Partition& part, const PacketOptions& options) {
    PacketLayout<T, I> out = detail::begin_layout(a, part, options);
    const auto n = std::size_t(a.rows);
    const std::size_t packets = std::size_t(part.parts());
    const std::size_t T_ = options.threads;

    // Every pass below runs over the host's threads by blocks of packets or of rows, each block
    // writing only its own rows' or packets' entries, so the layout is the one a serial pass gives.
    constexpr std::size_t packet_block = 64;
    const std::size_t packet_blocks = (packets + packet_block - 1) / packet_block;
    const auto packets_of = [packets](std::size_t b) {
        return std::pair{b * packet_block, std::min(packets, (b + 1) * packet_block)};
    };

    // The packet of every row and its place in it.
    std::vector<std::int64_t> of(n), place(n);
    detail::for_blocks(packet_blocks, [&](std::size_t b) {
        const auto [p0, p1] = packets_of(b);
        for (std::size_t p = p0; p < p1; ++p)
            for (auto i = part.part_ptr[p]; i < part.part_ptr[p + 1]; ++i) {
                of[std::size_t(part.rows[std::size_t(i)])] = std::int64_t(p);
                place[std::size_t(part.rows[std::size_t(i)])] = i - part.part_ptr[p];
            }
    });

    // Local entries per row; the rest go to the remainder, row by row, columns sorted: counted by
    // blocks of rows, then written from each block's offset.
    const std::size_t row_blocks = (n + detail::csr_block_rows - 1) / detail::csr_block_rows;
    const auto rows_of = [n](std::size_t b) {
        return std::pair{b * detail::csr_block_rows, std::min(n, (b + 1) * detail::csr_block_rows)};
    };
    std::vector<std::int64_t> cost(n, 0);
    std::vector<std::size_t> rem_from(row_blocks + 1, 0);
    detail::for_blocks(row_blocks, [&](std::size_t b) {
        const auto [r0, r1] = rows_of(b);
        std::size_t remote = 0;
        for (std::size_t r = r0; r < r1; ++r) {
            for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k)
                if (of[std::size_t(a.col_idx[k])] == of[r]) ++cost[r];
            remote += std::size_t(a.row_ptr[r + 1] - a.row_ptr[r]) - std::size_t(cost[r]);
        }
        rem_from[b + 1] = remote;
    });
    for (std::size_t b = 0; b < row_blocks; ++b)
        rem_from[b + 1] += rem_from[b];
    out.rem_row.resize(rem_from[row_blocks]);
    out.rem_col.resize(rem_from[row_blocks]);
    out.rem_values.resize(rem_from[row_blocks]);
    detail::for_blocks(row_blocks, [&](std::size_t b) {
        const auto [r0, r1] = rows_of(b);
        std::size_t at = rem_from[b];
        std::vector<std::size_t> order;
        std::vector<I> c;
        std::vector<T> v;
        for (std::size_t r = r0; r < r1; ++r) {
            const std::size_t from = at;
            for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k)
                if (of[std::size_t(a.col_idx[k])] != of[r]) {
                    out.rem_row[at] = I(r);
                    out.rem_col[at] = a.col_idx[k];
                    out.rem_values[at] = a.values[k];
                    ++at;
                }
            const auto cb = out.rem_col.begin() + std::ptrdiff_t(from), ce = out.rem_col.begin() + std::ptrdiff_t(at);
            if (std::is_sorted(cb, ce)) continue;
            order.resize(at - from);
            std::iota(order.begin(), order.end(), from);
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t x, std::size_t y) { return out.rem_col[x] < out.rem_col[y]; });
            c.resize(order.size());
            v.resize(order.size());
            for (std::size_t k = 0; k < order.size(); ++k) {
                c[k] = out.rem_col[order[k]];
                v[k] = out.rem_values[order[k]];
            }
            std::copy(c.begin(), c.end(), cb);
            std::copy(v.begin(), v.end(), out.rem_values.begin() + std::ptrdiff_t(from));
        }
    });

    // Deal each packet's rows (by descending cost; ties by place) to its threads; a thread's
    // steps are the local entries of its rows, and the packet is as deep as its busiest thread.
    // dealt[part_ptr[p] ..]: packet p's places, in the order dealt.
    out.thread_steps.assign(packets * T_, I(0));
    std::vector<std::int64_t> dealt(n), depth(packets, 0);
    detail::for_blocks(packet_blocks, [&](std::size_t b) {
        const auto [p0, p1] = packets_of(b);
        for (std::size_t p = p0; p < p1; ++p) {
            const auto rows = dealt.begin() + part.part_ptr[p], rows_end = dealt.begin() + part.part_ptr[p + 1];
            std::iota(rows, rows_end, std::int64_t(0));
            const auto row = [&](std::int64_t i) { return std::size_t(part.rows[std::size_t(part.part_ptr[p] + i)]); };
            std::stable_sort(rows, rows_end,
                             [&](std::int64_t x, std::int64_t y) { return cost[row(x)] > cost[row(y)]; });
            for (std::size_t j = 0; j < std::size_t(rows_end - rows); ++j) {
                auto& steps = out.thread_steps[p * T_ + detail::zigzag(j, T_)];
                steps = I(steps + cost[row(rows[std::ptrdiff_t(j)])]);
                depth[p] = std::max<std::int64_t>(depth[p], steps);
            }
        }
    });
    std::uint64_t total = 0;
    out.slot_ptr.assign(1, I(0));
    for (std::size_t p = 0; p < packets; ++p) {
        total += std::uint64_t(depth[p]) * T_;
        if (total > std::uint64_t(std::numeric_limits<I>::max()))
            throw InvalidArgument(fmt::format("xgpu: sparse: packets: the layout needs more than {} slots, which do "
                                              "not fit {} indices: use int64 indices (HostCsr<T, std::int64_t>)",
                                              total, detail::index_name<I>()));
        out.slot_ptr.push_back(I(total));
    }

    out.values.assign(std::size_t(total), T(0));
    out.local.assign(std::size_t(total) * (out.narrow ? 1 : 2), 0);
    detail::for_blocks(packet_blocks, [&](std::size_t b) {
        const auto [p0, p1] = packets_of(b);
        for (std::size_t p = p0; p < p1; ++p)
            detail::fill_packet(out, a, part, p, &dealt[std::size_t(part.part_ptr[p])], of, place);
    });
    return out;
}

namespace detail {

template <Value T, Index I>
void fill_packet(PacketLayout<T, I>& out, const HostCsr<T, I>& a, const Partition& part, std::size_t p,
                 const std::int64_t* dealt, const std::vector<std::int64_t>& of,
                 const std::vector<std::int64_t>& place) {
    const std::size_t threads = out.threads;
    std::vector<std::size_t> next(threads, 0);
    const auto base = std::size_t(out.slot_ptr[p]);
    const auto first = std::size_t(part.part_ptr[p]), size = std::size_t(part.part_ptr[p + 1]) - first;
    for (std::size_t j = 0; j < size; ++j) {
        const std::size_t t = zigzag(j, threads);
        const auto lr = std::uint32_t(dealt[j]);
        const auto r = std::size_t(part.rows[first + lr]);
        for (auto k = std::size_t(a.row_ptr[r]); k < std::size_t(a.row_ptr[r + 1]); ++k) {
            const auto c = std::size_t(a.col_idx[k]);
            if (of[c] != std::int64_t(p)) continue;
            const std::size_t slot = base + next[t]++ * threads + t;
            const auto lc = std::uint32_t(place[c]);
            out.values[slot] = a.values[k];
            if (out.narrow) {
                out.local[slot] = lr << 16 | lc;
            } else {
                out.local[2 * slot] = lr;
                out.local[2 * slot + 1] = lc;
            }
        }
    }
}

} // namespace detail

template <Value T, Index I> std::vector<T> apply_packets(const PacketLayout<T, I>& layout, const std::vector<T>& x) {
    if (x.size() != std::size_t(layout.rows))
        throw InvalidArgument(
            fmt::format("xgpu: sparse: packets: x has {} entries; the matrix has {} columns", x.size(), layout.rows));
    std::vector<T> y(std::size_t(layout.rows), T(0));
    std::vector<T> sx, sy;
    std::vector<std::size_t> owner; // the thread that updates each local row: one, or the kernel races
    const std::size_t T_ = layout.threads;
    for (std::size_t p = 0; p < std::size_t(layout.packets()); ++p) {
        const auto base = std::size_t(layout.packet_ptr[p]);
        const auto n = std::size_t(layout.packet_ptr[p + 1]) - base;
        sx.resize(n);
        sy.assign(n, T(0));
        owner.assign(n, T_);
        for (std::size_t i = 0; i < n; ++i)
            sx[i] = x[std::size_t(layout.perm[base + i])];
        for (std::size_t t = 0; t < T_; ++t)
            for (std::size_t s = 0; s < std::size_t(layout.thread_steps[p * T_ + t]); ++s) {
                const std::size_t k = std::size_t(layout.slot_ptr[p]) + s * T_ + t;
                if (k >= std::size_t(layout.slot_ptr[p + 1]))
                    throw InvalidArgument(fmt::format("xgpu: sparse: packets: thread {} of packet {} runs past the "
                                                      "packet's slots",
                                                      t, p));
                const std::size_t r = layout.narrow ? layout.local[k] >> 16 : layout.local[2 * k];
                const std::size_t c = layout.narrow ? layout.local[k] & 0xffff : layout.local[2 * k + 1];
                if (r >= n || c >= n)
                    throw InvalidArgument(fmt::format("xgpu: sparse: packets: slot {} of packet {} ({} rows) names "
                                                      "local row {} and column {}",
                                                      k, p, n, r, c));
                if (owner[r] != t && owner[r] != T_)
                    throw InvalidArgument(fmt::format("xgpu: sparse: packets: local row {} of packet {} is updated "
                                                      "by threads {} and {}",
                                                      r, p, owner[r], t));
                owner[r] = t;
                sy[r] += layout.values[k] * sx[c];
            }
        for (std::size_t i = 0; i < n; ++i)
            y[std::size_t(layout.perm[base + i])] = sy[i];
    }
    for (std::size_t k = 0; k < layout.remainder_nnz(); ++k)
        y[std::size_t(layout.rem_row[k])] += layout.rem_values[k] * x[std::size_t(layout.rem_col[k])];
    return y;
}

#define XGPU_PACKETS_INSTANTIATE(T, I)                                                                                 \
    template struct PacketLayout<T, I>;                                                                                \
    template PacketLayout<T, I> build_packets(const HostCsr<T, I>&, const PacketOptions&);                             \
    template PacketLayout<T, I> build_packets(const HostCsr<T, I>&, const Partition&, const PacketOptions&);           \
    template std::vector<T> apply_packets(const PacketLayout<T, I>&, const std::vector<T>&);                           \
    template PacketLayout<T, I> detail::begin_layout(const HostCsr<T, I>&, const Partition&, const PacketOptions&);    \
    template void detail::fill_packet(PacketLayout<T, I>&, const HostCsr<T, I>&, const Partition&, std::size_t,        \
                                      const std::int64_t*, const std::vector<std::int64_t>&,                           \
                                      const std::vector<std::int64_t>&);
XGPU_SPARSE_TEMPLATES(XGPU_PACKETS_INSTANTIATE)
#undef XGPU_PACKETS_INSTANTIATE

} // namespace xgpu::sparse
