// The packeted format on the device (packeted.cpp, kernels/spmv_packeted.kernel): the packet
// shape a device allows, and a way to hand a matrix a layout built elsewhere (tests place packet
// boundaries where they want them this way).
#pragma once

#include "packets.hpp"
#include "spmv.hpp"

namespace xgpu::sparse::detail {

// The packet shape on ctx's device for values of value_size bytes: local memory, at most 48 KiB
// (four work-groups a GPU multiprocessor; a CPU core's L2 cache); a work-group of group_size(ctx)
// work-items; the partitioner automatic.
PacketOptions packet_options(const Context& ctx, std::size_t value_size);
// The most local memory one packet's x and y slices may take on ctx's device (DeviceInfo's
// local_memory: on CUDA the opt-in size of dynamic shared memory); the default layout takes less.
std::size_t packet_local_limit(const Context& ctx);

// Makes `layout` a's packeted layout, uploaded (timed as build_ms), unless a already has one:
// then returns false and keeps it. spmv in packeted then runs it with its own work-group size and
// packet size, whatever plan_spmv says the default is. Throws InvalidArgument for a layout of
// another size or one the device cannot run (local memory or work-group size past its limits).
template <Value T, Index I> bool use_packets(const Csr<T, I>& a, const PacketLayout<T, I>& layout);

template <Value T, Index I> void spmv_packeted(const SpmvCall<T, I>& c);

#define XGPU_PACKETED_EXTERN(T, I)                                                                                     \
    extern template bool use_packets(const Csr<T, I>&, const PacketLayout<T, I>&);                                     \
    extern template void spmv_packeted(const SpmvCall<T, I>&);
XGPU_SPARSE_TEMPLATES(XGPU_PACKETED_EXTERN)
#undef XGPU_PACKETED_EXTERN

} // namespace xgpu::sparse::detail
