#include "xgpu/pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "env.hpp"
#include "xgpu/context.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu {
namespace detail {

// Shared by the copies of one Context handle. Held blocks keep their ContextImpl alive, but the
// ContextImpl does not refer back to the pool, so there is no cycle: when the last handle goes,
// the pool and its held blocks go with it.
struct PoolState : std::enable_shared_from_this<PoolState> {
    std::weak_ptr<ContextImpl> context;
    bool enabled = true;
    std::mutex mutex;
    std::map<std::size_t, std::vector<std::shared_ptr<BufferImpl>>> held;
    PoolStats stats;
};

std::shared_ptr<PoolState> make_pool_state(const std::shared_ptr<ContextImpl>& ctx) {
    auto s = std::make_shared<PoolState>();
    s->context = ctx;
    s->enabled = env::pool_enabled();
    return s;
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
    const std::size_t bin =
        std::max(bytes, std::min<std::size_t>(bin_size(bytes), ctx->device().info().max_allocation));
    std::shared_ptr<detail::BufferImpl> real;
    {
        std::lock_guard lock(state_->mutex);
        auto it = state_->held.find(bin);
        if (it != state_->held.end() && !it->second.empty()) {
            real = std::move(it->second.back());
            it->second.pop_back();
            state_->stats.held_blocks--;
            state_->stats.held_bytes -= bin;
            state_->stats.hits++;
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
    // The handle's deleter returns the block to the pool while the pool lives.
    std::weak_ptr<detail::PoolState> weak = state_;
    detail::BufferImpl* raw = real.get();
    return Buffer(std::shared_ptr<detail::BufferImpl>(raw, [weak, real, bin](detail::BufferImpl*) mutable {
        if (auto pool = weak.lock()) {
            std::lock_guard lock(pool->mutex);
            pool->stats.active_blocks--;
            pool->stats.active_bytes -= bin;
            pool->stats.held_blocks++;
            pool->stats.held_bytes += bin;
            pool->held[bin].push_back(std::move(real));
        }
    }));
}

void MemoryPool::free_held() const {
    std::map<std::size_t, std::vector<std::shared_ptr<detail::BufferImpl>>> drop;
    {
        std::lock_guard lock(state_->mutex);
        drop.swap(state_->held);
        state_->stats.held_blocks = 0;
        state_->stats.held_bytes = 0;
    }
    // Released outside the lock.
}

PoolStats MemoryPool::stats() const {
    std::lock_guard lock(state_->mutex);
    return state_->stats;
}

} // namespace xgpu
