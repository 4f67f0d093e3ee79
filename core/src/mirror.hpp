// Host mirrors of small results: where the device writes page-locked host memory directly
// (DeviceInfo::mapped_memory), the kernel that writes a result (a reduction's value) writes it into
// a slot of such memory too, and reading the result on the host then costs waiting for the queue
// and no copy on it (that copy is a large share of a small dot's time read with .get(), which
// `array-bench --latency` measures). The mirror stands for the result while its buffer has recorded
// no use since the write (every transfer, fill and launch records one), so anything that may have
// changed the result sends the read down the ordinary path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "xgpu/buffer.hpp"
#include "xgpu/context.hpp"
#include "xgpu/queue.hpp"

namespace xgpu::detail {

struct HostMirror;

// Bytes one mirror holds (the largest result type, complex double).
inline constexpr std::size_t mirror_bytes = 16;

// A free slot for a result on `ctx`, or null where the device has no mapped memory (or the
// context holds too many mirrored results already).
std::shared_ptr<HostMirror> reserve_mirror(const Context& ctx);
// The mapped memory kernels write the mirrored value to, and the slot's byte offset in it.
const Buffer& mirror_buffer(const HostMirror& m);
std::size_t mirror_offset(const HostMirror& m);
// Called once the write of `bytes` bytes at byte `offset` of `buffer`, and of the mirror, are
// enqueued on `queue` (nothing else uses `buffer` meanwhile: a result just made).
void seal_mirror(HostMirror& m, const Buffer& buffer, std::size_t offset, std::size_t bytes, const Queue& queue);
// Where `m` still stands for those bytes of `buffer`: waits for its queue, copies them to `dst`
// and returns true. Otherwise returns false and does nothing.
bool read_mirror(const HostMirror& m, const Buffer& buffer, std::size_t offset, std::size_t bytes, void* dst);

} // namespace xgpu::detail
