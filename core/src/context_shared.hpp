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

struct ContextShared {
    std::mutex mutex; // guards the default queue and the program cache; builds run under it
    std::shared_ptr<QueueImpl> default_queue;
    std::unordered_map<std::string, std::shared_ptr<ProgramImpl>> programs; // by cache key
    std::mutex generated_mutex;
    std::unordered_map<std::string, Kernel> generated; // generated kernels by structural key
    std::shared_ptr<PoolState> pool;
};

} // namespace xgpu::detail
