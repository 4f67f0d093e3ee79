// State shared by the copies of one Context handle: the caches that refer back to the backend
// context (so they cannot live in it without a reference cycle). Dropped with the last handle;
// what users still hold (buffers, programs, kernels) keeps the backend context alive by itself.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "xgpu/context.hpp"
#include "xgpu/detail/backend.hpp"

namespace xgpu::detail {

struct PoolState;
struct MirrorSlots;

struct ContextShared {
    ContextShared() = default;
    ContextShared(const ContextShared&) = delete;
    ContextShared& operator=(const ContextShared&) = delete;
    // The last handle is gone: what it queued on the default queue is finished (PoCL crashes when
    // it still compiles queued work while the process tears LLVM down).
    ~ContextShared();

    std::mutex mutex;       // guards the program cache; builds run under it
    std::mutex queue_mutex; // guards the default queue (array work need not wait for a build)
    std::shared_ptr<QueueImpl> default_queue;
    std::unordered_map<std::string, std::shared_ptr<ProgramImpl>> programs; // by cache key
    std::mutex generated_mutex;
    std::unordered_map<std::string, Kernel> generated; // generated kernels by structural key
    std::shared_ptr<PoolState> pool;
    std::once_flag mirrors_once;
    std::shared_ptr<MirrorSlots> mirrors; // mapped memory for results read on the host (mirror.cpp)
};

// The context's default queue, created on first use.
std::shared_ptr<QueueImpl> default_queue(ContextShared& shared, const std::shared_ptr<ContextImpl>& ctx);

// The queue array work of this context runs on in the calling thread: the innermost QueueScope's
// for this context, else the default queue (created on first use).
std::shared_ptr<QueueImpl> current_queue(ContextShared& shared, const std::shared_ptr<ContextImpl>& ctx);

// Every queue the process has made is finished at exit (and by each backend when it is destroyed).
void track_queue(const std::shared_ptr<QueueImpl>& queue);

} // namespace xgpu::detail
