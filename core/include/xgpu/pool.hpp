// xgpu memory pool: a binned caching allocator per context, as PyCUDA's DeviceMemoryPool.
// Arrays and temporaries take their memory from it: a freed block is held, not returned to the
// driver, and the next request of the same size bin reuses it. On out-of-memory the pool releases
// what it holds and retries once. XGPU_POOL=off makes every allocation go to the driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "xgpu/buffer.hpp"

namespace xgpu {

class Context;
namespace detail {
struct PoolState;
}

struct PoolStats {
    std::size_t active_blocks = 0, active_bytes = 0; // handed out and not yet freed
    std::size_t held_blocks = 0, held_bytes = 0;     // freed, kept for reuse
    std::uint64_t hits = 0, misses = 0;              // requests served from held blocks / by the driver
};

class MemoryPool {
public:
    explicit MemoryPool(std::shared_ptr<detail::PoolState> s) : state_(std::move(s)) {}

    // A buffer of at least `bytes` (its size() is the size bin's).
    Buffer allocate(std::size_t bytes) const;
    // Returns every held block to the driver.
    void free_held() const;
    PoolStats stats() const;
    bool enabled() const;

    // The bin a request falls in: sizes round up to 4 steps per power of two (at most 25% waste),
    // and to at least 256 bytes.
    static std::size_t bin_size(std::size_t bytes);

private:
    std::shared_ptr<detail::PoolState> state_;
};

} // namespace xgpu
