// The memory pool: binned, per context, and ordered by queue as CuPy's stream-ordered pool.
//
// A block handed out for queue H (its home: the current queue of the allocating thread, see
// QueueScope) and freed is held until it is safe to hand out again:
// - for H again at once, when only H used it: H runs in order, so the new owner's work queues
//   behind the old owner's;
// - otherwise once an event recorded on every queue that used it has completed (recorded at the
//   free when several queues used it; recorded lazily, when a request for another queue first
//   looks at the block, when only H did).
// A block handed out again on H at once carries `reused`; if its new owner then enqueues it on
// another queue, record_use waits for H's earlier work first (PyOpenCL's issue 447).
#include "xgpu/pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "context_shared.hpp"
#include "env.hpp"
#include "xgpu/context.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu {
namespace detail {

namespace {
// A freed block, and what must complete before another queue may use it.
struct Held {
    std::shared_ptr<BufferImpl> block;
    std::weak_ptr<QueueImpl> home;                   // compared by owner: a later queue at the same address is another
    std::vector<std::shared_ptr<EventImpl>> pending; // empty: only `home` used it
    bool multi = false;                              // used on a queue besides home: wait for `pending`
};

bool same(const std::weak_ptr<QueueImpl>& a, const std::shared_ptr<QueueImpl>& b) {
    return !a.owner_before(b) && !b.owner_before(a);
}

bool complete(const std::vector<std::shared_ptr<EventImpl>>& events) {
    return std::all_of(events.begin(), events.end(), [](const auto& e) { return e->is_complete(); });
}
} // namespace

// Shared by the copies of one Context handle. Held blocks keep their ContextImpl alive, but the
// ContextImpl does not refer back to the pool, so there is no cycle: when the last handle goes,
// the pool and its held blocks go with it.
struct PoolState : std::enable_shared_from_this<PoolState> {
    std::weak_ptr<ContextImpl> context;
    std::weak_ptr<ContextShared> shared; // for the current queue
    bool enabled = true;
    std::mutex mutex;
    std::map<std::size_t, std::vector<Held>> held;
    PoolStats stats;
};

std::shared_ptr<PoolState> make_pool_state(const std::shared_ptr<ContextImpl>& ctx,
                                           const std::shared_ptr<ContextShared>& shared) {
    auto s = std::make_shared<PoolState>();
    s->context = ctx;
    s->shared = shared;
    s->enabled = env::pool_enabled();
    return s;
}

void record_use(BufferImpl& buffer, const std::shared_ptr<QueueImpl>& queue) {
    QueueUse& u = buffer.use;
    u.count.fetch_add(1, std::memory_order_relaxed);
    if (u.last.load(std::memory_order_acquire) == queue.get()) return;
    std::shared_ptr<QueueImpl> wait_for;
    {
        std::lock_guard lock(u.mutex);
        if (u.reused) {
            auto home = u.home.lock();
            if (home && home != queue) wait_for = std::move(home);
            u.reused = false;
        }
        const bool known = std::any_of(u.queues.begin(), u.queues.end(), [&](const auto& w) { return same(w, queue); });
        if (!known) u.queues.push_back(queue);
        u.last.store(queue.get(), std::memory_order_release);
    }
    // The previous owner's work on the home queue may still use the memory.
    if (wait_for) wait_for->marker()->wait();
}

} // namespace detail

std::size_t MemoryPool::bin_size(std::size_t bytes) {
    if (bytes <= 256) return 256;
    int e = 63 - __builtin_clzll(bytes - 1); // bytes - 1 < 2^(e+1)
    const std::size_t step = std::size_t(1) << (e - 2);
    return (bytes + step - 1) / step * step;
}

bool MemoryPool::enabled() const {
    return state_->enabled;
}

Buffer MemoryPool::allocate(std::size_t bytes) const {
    auto ctx = state_->context.lock();
    if (!ctx) throw InvalidArgument("xgpu: allocation from the pool of a destroyed context");
    detail::check_allocation(ctx->device().info(), bytes);
    if (!state_->enabled) return Buffer(ctx->alloc(bytes));
    auto shared = state_->shared.lock();
    if (!shared) throw InvalidArgument("xgpu: allocation from the pool of a destroyed context");
    const std::shared_ptr<detail::QueueImpl> home = detail::current_queue(*shared, ctx);
    const std::size_t bin =
        std::max(bytes, std::min<std::size_t>(bin_size(bytes), ctx->device().info().max_allocation));
    std::shared_ptr<detail::BufferImpl> real;
    bool reused = false;
    {
        std::lock_guard lock(state_->mutex);
        auto it = state_->held.find(bin);
        if (it != state_->held.end()) {
            auto& blocks = it->second;
            for (std::size_t k = blocks.size(); k-- > 0;) {
                detail::Held& h = blocks[k];
                bool ok = false;
                if (!h.multi && detail::same(h.home, home)) {
                    ok = true; // in order behind its last use
                    reused = true;
                } else {
                    if (!h.multi && h.pending.empty()) {
                        // Only its home used it: an event there now covers that use.
                        if (auto q = h.home.lock()) h.pending.push_back(q->marker());
                    }
                    ok = detail::complete(h.pending);
                }
                if (!ok) continue;
                real = std::move(h.block);
                blocks.erase(blocks.begin() + std::ptrdiff_t(k));
                state_->stats.held_blocks--;
                state_->stats.held_bytes -= bin;
                state_->stats.hits++;
                break;
            }
        }
    }
    if (!real) {
        try {
            real = ctx->alloc(bin);
        } catch (const OutOfMemory&) {
            free_held(); // give back what we hold, then try once more
            real = ctx->alloc(bin);
        }
        std::lock_guard lock(state_->mutex);
        state_->stats.misses++;
    }
    {
        std::lock_guard lock(state_->mutex);
        state_->stats.active_blocks++;
        state_->stats.active_bytes += bin;
    }
    {
        detail::QueueUse& u = real->use;
        std::lock_guard lock(u.mutex);
        u.home = home;
        u.queues.clear();
        u.reused = reused;
        u.last.store(nullptr, std::memory_order_release);
    }
    // The handle's deleter returns the block to the pool while the pool lives.
    std::weak_ptr<detail::PoolState> weak = state_;
    detail::BufferImpl* raw = real.get();
    return Buffer(std::shared_ptr<detail::BufferImpl>(raw, [weak, real, bin](detail::BufferImpl*) mutable {
        auto pool = weak.lock();
        if (!pool) return;
        detail::Held h;
        bool keep = true; // false: no event to wait for, so the block goes back to the driver
        {
            detail::QueueUse& u = real->use;
            std::lock_guard lock(u.mutex);
            auto home = u.home.lock();
            h.home = u.home;
            try {
                for (const auto& w : u.queues) {
                    if (detail::same(w, home)) continue;
                    h.multi = true;
                    // A destroyed queue finished its work: the backends finish at destruction.
                    if (auto q = w.lock()) h.pending.push_back(q->marker());
                }
                if (h.multi && home) h.pending.push_back(home->marker());
            } catch (...) {
                keep = false;
            }
        }
        std::lock_guard lock(pool->mutex);
        pool->stats.active_blocks--;
        pool->stats.active_bytes -= bin;
        if (!keep) return;
        h.block = std::move(real);
        pool->stats.held_blocks++;
        pool->stats.held_bytes += bin;
        pool->held[bin].push_back(std::move(h));
    }));
}

void MemoryPool::free_held() const {
    std::map<std::size_t, std::vector<detail::Held>> drop;
    {
        std::lock_guard lock(state_->mutex);
        drop.swap(state_->held);
        state_->stats.held_blocks = 0;
        state_->stats.held_bytes = 0;
    }
    // Released outside the lock. Work still queued on them: OpenCL keeps the memory until it is
    // done; the CUDA driver's free waits for the device.
}

PoolStats MemoryPool::stats() const {
    std::lock_guard lock(state_->mutex);
    return state_->stats;
}

} // namespace xgpu
