// xgpu queues (CUDA streams, OpenCL command queues): transfers, fills, markers and launches run
// in order on one queue. Blocking calls return when the work is done; *_async calls return an
// Event, and the host memory they use must stay alive and unchanged until that event completes.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

#include "xgpu/buffer.hpp"
#include "xgpu/event.hpp"

namespace xgpu {

namespace detail {
class QueueImpl;
class ContextImpl;
} // namespace detail

class Queue {
public:
    Queue() = default;
    explicit Queue(std::shared_ptr<detail::QueueImpl> impl) : impl_(std::move(impl)) {}

    // Host to device: `bytes` from `src` into `dst` at byte `offset`.
    void write(const Buffer& dst, const void* src, std::size_t bytes, std::size_t offset = 0) const;
    Event write_async(const Buffer& dst, const void* src, std::size_t bytes, std::size_t offset = 0) const;
    // Device to host.
    void read(const Buffer& src, void* dst, std::size_t bytes, std::size_t offset = 0) const;
    Event read_async(const Buffer& src, void* dst, std::size_t bytes, std::size_t offset = 0) const;
    // Device to device (same context).
    void copy(const Buffer& src, const Buffer& dst, std::size_t bytes, std::size_t src_offset = 0,
              std::size_t dst_offset = 0) const;
    Event copy_async(const Buffer& src, const Buffer& dst, std::size_t bytes, std::size_t src_offset = 0,
                     std::size_t dst_offset = 0) const;
    // Repeats a pattern of 1, 2, 4, 8, 16, 32, 64 or 128 bytes over `bytes` bytes from `offset`
    // (both multiples of the pattern size). Asynchronous.
    Event fill(const Buffer& dst, const void* pattern, std::size_t pattern_size, std::size_t bytes,
               std::size_t offset = 0) const;
    template <class T> Event fill(const Buffer& dst, const T& value) const {
        static_assert(std::is_trivially_copyable_v<T>);
        return fill(dst, &value, sizeof(T), dst.size() / sizeof(T) * sizeof(T), 0);
    }

    // An event that completes when all work enqueued before it has completed.
    Event marker() const;
    // Blocks until all enqueued work has finished; throws if any of it failed.
    void finish() const;

    const std::shared_ptr<detail::QueueImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::QueueImpl> impl_;
};

// Array operations of the queue's context run on `queue` in this thread while the scope lives
// (CuPy's `with stream:`; PyOpenCL's arrays carry a queue). Scopes nest; each thread has its own.
//
//   auto q2 = ctx.new_queue();
//   { xgpu::QueueScope on(q2); y = 2.0 * x + 1.0; }   // enqueued on q2
//
// Memory from the context's pool is ordered by queue: a block freed on one queue is handed to
// another only once the work that used it has completed, so arrays may move between queues.
// Ordering between queues is the caller's, as with streams: an array written on one queue and
// read on another needs a q.finish() or an event wait in between.
class QueueScope {
public:
    explicit QueueScope(const Queue& queue);
    ~QueueScope();
    QueueScope(const QueueScope&) = delete;
    QueueScope& operator=(const QueueScope&) = delete;

private:
    std::shared_ptr<detail::QueueImpl> queue_;
};

} // namespace xgpu
