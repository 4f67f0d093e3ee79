// The packeted format (Garland and Bell's, as PyCUDA's sparse/packeted.py ran it), on the host:
// the layout the device kernel reads, and a host reference that runs it step for step.
//
// The rows of a square matrix are partitioned (partition.hpp) into packets whose x and y slices
// fit a work-group's local memory together. Renumbering the rows packet by packet makes each
// packet's rows a contiguous range, and its x slice is the same range. A work-group per packet:
//
//   s_x[i] = x[perm[base + i]], s_y[i] = 0            for i < n, the packet's rows
//   barrier
//   thread t, step s < thread_steps[p * threads + t]:  k = slot_ptr[p] + s * threads + t
//       s_y[row(k)] += values[k] * s_x[col(k)]         (each row belongs to one thread: no race)
//   barrier
//   y[perm[base + i]] = s_y[i]                         (alpha, beta applied here by the kernel)
//
// and then the remainder, the entries whose row and column lie in different packets, as COO
// sorted by row: y[rem_row[k]] += rem_values[k] * x[rem_col[k]]. x and y are in the matrix's own
// numbering throughout; only the local indices are packet-relative.
//
// Within a packet, rows are sorted by their number of local entries (descending) and dealt to
// the threads zig-zag (0, 1, .., T-1, T-1, .., 0, 0, 1, ..); a thread's entries are stored row
// after row, step k of every thread contiguous (thread-major interleaving), so a step's loads
// coalesce. Each packet is padded to its busiest thread's step count; padding slots hold 0 and
// local index 0, and are never read (thread_steps bounds every thread).
#pragma once

#include <cstdint>
#include <vector>

#include "partition.hpp"

namespace xgpu::sparse {

struct PacketOptions {
    std::size_t local_bytes = 48 * 1024; // local memory one work-group may use (from DeviceInfo)
    unsigned threads = 128;              // work-items per packet (the work-group size)
    std::size_t value_size = 0;          // bytes of one value in local memory; 0: sizeof(T)
    Partitioner partitioner = Partitioner::automatic;
};

template <Value T, Index I> struct PacketLayout {
    std::int64_t rows = 0;                                // the matrix is rows x rows
    std::size_t nnz = 0;                                  // of the matrix: packet_nnz() + remainder_nnz()
    unsigned threads = 0;                                 // work-items per packet
    std::int64_t max_rows = 0;                            // the most rows a packet may hold (what local memory allows)
    Partitioner partitioner = Partitioner::graph_growing; // the one that ran

    // perm[i]: the row (of the matrix) that renumbered row i is. Packet p holds renumbered rows
    // [packet_ptr[p], packet_ptr[p + 1]), and reads the x entries of the same indices.
    std::vector<I> perm;
    std::vector<I> packet_ptr{0};

    // Slots of packet p: [slot_ptr[p], slot_ptr[p + 1]), steps x threads of them, step-major.
    std::vector<I> slot_ptr{0};
    std::vector<I> thread_steps; // packets() * threads: the steps thread t of packet p runs
    // Local row and column of slot k, relative to the packet's first row. narrow (every packet
    // holds at most 65536 rows): local[k] = row << 16 | col. Otherwise two words a slot:
    // local[2k] = row, local[2k + 1] = col.
    bool narrow = true;
    std::vector<std::uint32_t> local;
    std::vector<T> values;

    // Entries whose row and column lie in different packets, in the matrix's numbering, sorted
    // by row then column.
    std::vector<I> rem_row, rem_col;
    std::vector<T> rem_values;

    std::int64_t packets() const { return std::int64_t(packet_ptr.size()) - 1; }
    std::size_t slots() const { return values.size(); }
    std::size_t remainder_nnz() const { return rem_values.size(); }
    std::size_t packet_nnz() const { return nnz - remainder_nnz(); }
    // The entries left to the remainder, as a share of all entries (0 for no entries).
    double remainder_share() const { return nnz ? double(remainder_nnz()) / double(nnz) : 0.0; }
    // The padding slots, as a share of all slots.
    double padding_share() const { return slots() ? 1.0 - double(packet_nnz()) / double(slots()) : 0.0; }
};

// Partitions a (validated, square) matrix and lays it out in packets of at most
// local_bytes / (2 * value_size) rows (their x and y slices). Throws InvalidArgument for a matrix
// that is not square (the caller falls back to another format), no threads, a budget too small
// for one row, a layout whose slot count does not fit I, or a partitioner this build lacks.
template <Value T, Index I> PacketLayout<T, I> build_packets(const HostCsr<T, I>& a, const PacketOptions& options = {});
// The same with the partition given (options.partitioner unused): its parts become the packets,
// in its order. Throws InvalidArgument unless it lists every row once in parts of 1 to max_rows.
template <Value T, Index I>
PacketLayout<T, I> build_packets(const HostCsr<T, I>& a, const Partition& part, const PacketOptions& options);

// y = A x by running the layout as the device kernel does (packets, threads, steps, then the
// remainder), accumulating in T. x has layout.rows entries. Throws InvalidArgument for an x of
// the wrong size or a layout the kernel could not run: local indices that leave their packet, a
// thread that runs past its packet's slots, a row updated by two threads (a race in local memory).
template <Value T, Index I> std::vector<T> apply_packets(const PacketLayout<T, I>& layout, const std::vector<T>& x);

namespace detail {

// The thread that the j-th row (in order of cost) goes to: 0, 1, .., T-1, T-1, .., 0, 0, 1, ..
// so that the costliest rows of each sweep are spread and the sweeps even out.
inline std::size_t zigzag(std::size_t j, std::size_t threads) {
    const std::size_t q = j % (2 * threads);
    return q < threads ? q : 2 * threads - 1 - q;
}

// A layout's header for partition `part` (checked against A and the options): sizes, threads,
// the largest packet, the row order and the packets' bounds, the width of the local indices.
template <Value T, Index I>
PacketLayout<T, I> begin_layout(const HostCsr<T, I>& a, const Partition& part, const PacketOptions& options);

// Packet p's slots (out.slot_ptr, values and local allocated): the entries of its rows whose
// columns are in the packet too (of[c] == p; place[c] their local index), row dealt[j] (a place
// in the packet) going to thread zigzag(j), each thread's entries in row order.
template <Value T, Index I>
void fill_packet(PacketLayout<T, I>& out, const HostCsr<T, I>& a, const Partition& part, std::size_t p,
                 const std::int64_t* dealt, const std::vector<std::int64_t>& of,
                 const std::vector<std::int64_t>& place);

} // namespace detail

#define XGPU_PACKETS_EXTERN(T, I)                                                                                      \
    extern template struct PacketLayout<T, I>;                                                                         \
    extern template PacketLayout<T, I> build_packets(const HostCsr<T, I>&, const PacketOptions&);                      \
    extern template PacketLayout<T, I> build_packets(const HostCsr<T, I>&, const Partition&, const PacketOptions&);    \
    extern template std::vector<T> apply_packets(const PacketLayout<T, I>&, const std::vector<T>&);
XGPU_SPARSE_TEMPLATES(XGPU_PACKETS_EXTERN)
#undef XGPU_PACKETS_EXTERN

} // namespace xgpu::sparse
