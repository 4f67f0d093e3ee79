// Queue operations: every argument is checked here, before the backend enqueues anything, so a
// bad call throws and leaves device memory untouched.
#include "xgpu/queue.hpp"

#include <cstdint>
#include <mutex>

#include <fmt/format.h>

#include "queue_ticket.hpp"

#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu {
namespace {

detail::QueueImpl& self(const Queue& q) {
    if (!q.impl()) throw InvalidArgument("xgpu: operation on an empty Queue");
    return *q.impl();
}

// Checks that [offset, offset+bytes) lies inside `b`, which belongs to the queue's context.
detail::BufferImpl& checked(const detail::QueueImpl& q, const Buffer& b, std::size_t offset, std::size_t bytes,
                            const char* op, const char* role) {
    // (record_use is called by the operations once every argument has passed.)
    if (!b.impl()) throw InvalidArgument(fmt::format("xgpu: {}: the {} buffer is empty", op, role));
    auto& impl = *b.impl();
    if (impl.context != q.context)
        throw InvalidArgument(fmt::format("xgpu: {}: the {} buffer belongs to another context", op, role));
    if (offset > impl.size || bytes > impl.size - offset)
        throw InvalidArgument(
            fmt::format("xgpu: {}: {} bytes at offset {} run past the end of the {} buffer ({} bytes)", op, bytes,
                        offset, role, impl.size));
    return impl;
}

void check_host(const void* p, std::size_t bytes, const char* op) {
    if (bytes > 0 && !p) throw InvalidArgument(fmt::format("xgpu: {}: host pointer is null", op));
}

Event wrap(std::shared_ptr<detail::EventImpl> e) {
    return Event(std::move(e));
}

} // namespace

void Queue::write(const Buffer& dst, const void* src, std::size_t bytes, std::size_t offset) const {
    auto& q = self(*this);
    auto& b = checked(q, dst, offset, bytes, "write", "destination");
    check_host(src, bytes, "write");
    if (!bytes) return;
    detail::record_use(b, impl_);
    q.write(b, offset, src, bytes, true, false);
}

Event Queue::write_async(const Buffer& dst, const void* src, std::size_t bytes, std::size_t offset) const {
    auto& q = self(*this);
    auto& b = checked(q, dst, offset, bytes, "write_async", "destination");
    check_host(src, bytes, "write_async");
    if (!bytes) return marker();
    detail::record_use(b, impl_);
    return wrap(q.write(b, offset, src, bytes, false, true));
}

void Queue::read(const Buffer& src, void* dst, std::size_t bytes, std::size_t offset) const {
    auto& q = self(*this);
    auto& b = checked(q, src, offset, bytes, "read", "source");
    check_host(dst, bytes, "read");
    if (!bytes) return;
    detail::record_use(b, impl_);
    q.read(b, offset, dst, bytes, true, false);
}

Event Queue::read_async(const Buffer& src, void* dst, std::size_t bytes, std::size_t offset) const {
    auto& q = self(*this);
    auto& b = checked(q, src, offset, bytes, "read_async", "source");
    check_host(dst, bytes, "read_async");
    if (!bytes) return marker();
    detail::record_use(b, impl_);
    return wrap(q.read(b, offset, dst, bytes, false, true));
}

void Queue::copy(const Buffer& src, const Buffer& dst, std::size_t bytes, std::size_t src_offset,
                 std::size_t dst_offset) const {
    copy_async(src, dst, bytes, src_offset, dst_offset).wait();
}

Event Queue::copy_async(const Buffer& src, const Buffer& dst, std::size_t bytes, std::size_t src_offset,
                        std::size_t dst_offset) const {
    auto& q = self(*this);
    auto& s = checked(q, src, src_offset, bytes, "copy", "source");
    auto& d = checked(q, dst, dst_offset, bytes, "copy", "destination");
    if (&s == &d && src_offset < dst_offset + bytes && dst_offset < src_offset + bytes && bytes)
        throw InvalidArgument(fmt::format("xgpu: copy: source [{}, {}) and destination [{}, {}) overlap in one buffer",
                                          src_offset, src_offset + bytes, dst_offset, dst_offset + bytes));
    if (!bytes) return marker();
    detail::record_use(s, impl_);
    detail::record_use(d, impl_);
    return wrap(q.copy(s, src_offset, d, dst_offset, bytes, true));
}

Event Queue::fill(const Buffer& dst, const void* pattern, std::size_t pattern_size, std::size_t bytes,
                  std::size_t offset) const {
    auto& q = self(*this);
    auto& b = checked(q, dst, offset, bytes, "fill", "destination");
    const bool pow2 = pattern_size && (pattern_size & (pattern_size - 1)) == 0;
    if (!pow2 || pattern_size > 128)
        throw InvalidArgument(fmt::format("xgpu: fill: pattern size {} is not one of 1, 2, 4, ..., 128", pattern_size));
    if (offset % pattern_size || bytes % pattern_size)
        throw InvalidArgument(fmt::format("xgpu: fill: offset {} and size {} must be multiples of the pattern size {}",
                                          offset, bytes, pattern_size));
    check_host(pattern, pattern_size, "fill");
    if (!bytes) return marker();
    detail::record_use(b, impl_);
    return wrap(q.fill(b, offset, pattern, pattern_size, bytes));
}

Event Queue::marker() const {
    return wrap(self(*this).marker());
}

void Queue::finish() const {
    self(*this).finish();
}

} // namespace xgpu

namespace xgpu::detail {

Buffer group_ticket(const Queue& queue) {
    QueueImpl& q = self(queue);
    std::call_once(q.ticket_once, [&q] {
        auto counter = q.context->alloc(sizeof(std::uint32_t));
        const std::uint32_t zero = 0;
        q.write(*counter, 0, &zero, sizeof zero, true, false);
        q.ticket = std::move(counter);
    });
    return Buffer(q.ticket);
}

} // namespace xgpu::detail
