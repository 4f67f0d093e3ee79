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

// The context's slabs of mapped memory and their free slots.
struct MirrorSlots {
    std::mutex mutex;
    std::vector<Buffer> slabs;
    std::vector<std::pair<unsigned, unsigned>> free; // (slab, slot)
};

struct HostMirror {
    HostMirror(std::shared_ptr<MirrorSlots> o, unsigned sl, unsigned st)
        : owner(std::move(o)), slab(sl), slot(st), memory(owner->slabs[sl]) {}
    ~HostMirror() {
        std::lock_guard lock(owner->mutex);
        owner->free.emplace_back(slab, slot);
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
    std::lock_guard lock(slots->mutex);
    if (slots->free.empty()) {
        if (slots->slabs.size() == max_slabs) return nullptr;
        auto memory = ctx.impl()->alloc_mapped(slab_slots * mirror_bytes);
        if (!memory) return nullptr;
        const unsigned slab = unsigned(slots->slabs.size());
        slots->slabs.emplace_back(std::move(memory));
        for (unsigned s = slab_slots; s-- > 0;)
            slots->free.emplace_back(slab, s);
    }
    const auto [slab, slot] = slots->free.back();
    slots->free.pop_back();
    return std::make_shared<HostMirror>(slots, slab, slot);
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
