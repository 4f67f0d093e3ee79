#include "mirror.hpp"

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "context_shared.hpp"

namespace xgpu::detail {
namespace {

constexpr std::size_t slab_slots = 4096; // 64 KiB of page-locked memory a slab
constexpr std::size_t max_slabs = 16;    // beyond 65536 live mirrored results, reads copy

} // namespace

// A slot no result stands for, and the queue of the last kernel that wrote it (empty if none;
// weak: the context's slots must not keep its queues alive).
struct FreeSlot {
    unsigned slab, slot;
    std::weak_ptr<QueueImpl> last;
};

// The context's slabs of mapped memory and their free slots.
struct MirrorSlots {
    std::mutex mutex;
    std::vector<Buffer> slabs;
    std::vector<FreeSlot> free;
};

struct HostMirror {
    HostMirror(std::shared_ptr<MirrorSlots> o, unsigned sl, unsigned st)
        : owner(std::move(o)), slab(sl), slot(st), memory(owner->slabs[sl]) {}
    ~HostMirror() {
        std::lock_guard lock(owner->mutex);
        owner->free.push_back({slab, slot, queue.impl()});
    }
    HostMirror(const HostMirror&) = delete;
    HostMirror& operator=(const HostMirror&) = delete;

    const std::shared_ptr<MirrorSlots> owner;
    const unsigned slab, slot;
    const Buffer memory; // the slab
    // Set by seal_mirror: what the slot stands for.
    const BufferImpl* of = nullptr;
    std::size_t offset = 0, bytes = 0;
    std::uint64_t count = 0; // of->use.count just after the write
    Queue queue;
};

std::shared_ptr<HostMirror> reserve_mirror(const Context& ctx) {
    if (!ctx.device().info().mapped_memory) return nullptr;
    ContextShared& shared = ctx.shared();
    std::call_once(shared.mirrors_once, [&] { shared.mirrors = std::make_shared<MirrorSlots>(); });
    const std::shared_ptr<MirrorSlots>& slots = shared.mirrors;
    std::unique_lock lock(slots->mutex);
    if (slots->free.empty()) {
        if (slots->slabs.size() == max_slabs) return nullptr;
        auto memory = ctx.impl()->alloc_mapped(slab_slots * mirror_bytes);
        if (!memory) return nullptr;
        const unsigned slab = unsigned(slots->slabs.size());
        slots->slabs.emplace_back(std::move(memory));
        for (unsigned s = slab_slots; s-- > 0;)
            slots->free.push_back({slab, s, {}});
    }
    const FreeSlot f = slots->free.back();
    slots->free.pop_back();
    lock.unlock();
    // The result that had the slot may be dropped before its kernel ran. On its own queue that
    // kernel runs before the next writer; from another queue it could write after the next one
    // and leave its value where the new result is read, so that queue's work finishes first.
    if (auto last = f.last.lock(); last && last != ctx.current_queue().impl()) Queue(std::move(last)).finish();
    return std::make_shared<HostMirror>(slots, f.slab, f.slot);
}

const Buffer& mirror_buffer(const HostMirror& m) {
    return m.memory;
}

std::size_t mirror_offset(const HostMirror& m) {
    return std::size_t(m.slot) * mirror_bytes;
}

void seal_mirror(HostMirror& m, const Buffer& buffer, std::size_t offset, std::size_t bytes, const Queue& queue) {
    m.of = buffer.impl().get();
    m.offset = offset;
    m.bytes = bytes;
    m.count = buffer.impl()->use.count.load(std::memory_order_acquire);
    m.queue = queue;
}

bool read_mirror(const HostMirror& m, const Buffer& buffer, std::size_t offset, std::size_t bytes, void* dst) {
    if (!m.of || m.of != buffer.impl().get() || m.offset != offset || m.bytes != bytes || bytes > mirror_bytes)
        return false;
    if (buffer.impl()->use.count.load(std::memory_order_acquire) != m.count) return false;
    m.queue.finish(); // the kernel's writes to mapped memory are visible once it has finished
    std::memcpy(dst, static_cast<const unsigned char*>(m.memory.impl()->host) + mirror_offset(m), bytes);
    return true;
}

} // namespace xgpu::detail
