#include "xgpu/context.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "cache.hpp"
#include "context_shared.hpp"
#include "env.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"
#include "xgpu/warning.hpp"

namespace xgpu {
namespace detail {
// XGPU_DUMP_KERNELS: every program a context builds or loads, as the compiler sees it (the
// dialect preamble included), named by its cache key. A directory that cannot be written costs a
// warning.
std::filesystem::path dump_source(const std::string& dir, const std::string& key, const std::string& source,
                                  const std::vector<std::string>& options) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const auto path = std::filesystem::path(dir) / (key.substr(0, 16) + ".xgpu.c");
    std::ofstream out(path);
    out << "/* xgpu program " << key << "\n * options: " << join_options(options) << " */\n" << source;
    out.close();
    if (!out) warn(fmt::format("XGPU_DUMP_KERNELS: cannot write {}", path.string()));
    return path;
}
} // namespace detail

namespace {

Program build_cached(const Context& handle, const std::string& source, const std::vector<std::string>& options) {
    detail::ContextImpl& ctx = *handle.impl();
    detail::ContextShared& shared = handle.shared();
    const std::string key = detail::cache_key(ctx, source, options);
    std::lock_guard lock(shared.mutex); // one build per context at a time: no duplicate compiles of one key
    if (auto it = shared.programs.find(key); it != shared.programs.end())
        return Program(it->second, ProgramOrigin::memory_cache);

    std::filesystem::path dumped;
    if (auto dir = detail::env::dump_kernels()) dumped = detail::dump_source(*dir, key, source, options);
    std::shared_ptr<detail::ProgramImpl> program;
    ProgramOrigin origin = ProgramOrigin::compiled;
    if (auto binary = detail::cache_load(key)) {
        try {
            program = ctx.load(*binary, options);
            origin = ProgramOrigin::disk_cache;
        } catch (const Error&) {
            program = nullptr; // a stale or foreign binary: rebuild and overwrite it
        }
    }
    if (!program) {
        detail::BuildResult built;
        try {
            built = ctx.build(source, options);
        } catch (const Error&) {
            // A dumped program that did not build here is marked, so that a check of its CUDA
            // dialect expects the same (the suite builds broken programs on purpose).
            std::error_code ec;
            if (!dumped.empty()) std::filesystem::rename(dumped, dumped.string() + ".failed", ec);
            throw;
        }
        program = std::move(built.program);
        if (!built.binary.empty()) detail::cache_store(key, built.binary);
    }
    program->context = ctx.shared_from_this();
    shared.programs.emplace(key, program);
    return Program(program, origin);
}

} // namespace

namespace detail {
std::shared_ptr<PoolState> make_pool_state(const std::shared_ptr<ContextImpl>& ctx,
                                           const std::shared_ptr<ContextShared>& shared);

ContextShared::~ContextShared() {
    if (!default_queue) return;
    try {
        default_queue->finish();
    } catch (...) { // a failed kernel: nobody is left to tell
    }
}

namespace {
struct LiveQueues {
    std::mutex mutex;
    std::vector<std::weak_ptr<QueueImpl>> queues;
};
LiveQueues& live_queues() {
    static auto* q = new LiveQueues; // never destroyed: the exit handler runs among static destructors
    return *q;
}
void finish_live_queues() {
    std::vector<std::shared_ptr<QueueImpl>> alive;
    {
        std::lock_guard lock(live_queues().mutex);
        for (const auto& w : live_queues().queues)
            if (auto q = w.lock()) alive.push_back(std::move(q));
    }
    for (const auto& q : alive) {
        try {
            q->finish();
        } catch (...) {
        }
    }
}

// The scopes of the calling thread, innermost last.
thread_local std::vector<std::shared_ptr<QueueImpl>> scopes;
} // namespace

void track_queue(const std::shared_ptr<QueueImpl>& queue) {
    static std::once_flag once;
    std::call_once(once, [] { std::atexit(finish_live_queues); });
    std::lock_guard lock(live_queues().mutex);
    auto& v = live_queues().queues;
    std::erase_if(v, [](const auto& w) { return w.expired(); });
    v.push_back(queue);
}

std::shared_ptr<QueueImpl> default_queue(ContextShared& shared, const std::shared_ptr<ContextImpl>& ctx) {
    std::lock_guard lock(shared.queue_mutex);
    if (!shared.default_queue) {
        shared.default_queue = ctx->create_queue();
        track_queue(shared.default_queue);
    }
    return shared.default_queue;
}

std::shared_ptr<QueueImpl> current_queue(ContextShared& shared, const std::shared_ptr<ContextImpl>& ctx) {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
        if ((*it)->context == ctx) return *it;
    return default_queue(shared, ctx);
}
} // namespace detail

QueueScope::QueueScope(const Queue& queue) : queue_(queue.impl()) {
    if (!queue_) throw InvalidArgument("xgpu: QueueScope of an empty Queue");
    detail::scopes.push_back(queue_);
}

QueueScope::~QueueScope() {
    // Scopes are objects with automatic storage: they end in reverse order of their start.
    auto& s = detail::scopes;
    for (auto it = s.rbegin(); it != s.rend(); ++it)
        if (*it == queue_) {
            s.erase(std::next(it).base());
            break;
        }
}

Context::Context(std::shared_ptr<detail::ContextImpl> impl) : impl_(std::move(impl)) {
    if (!impl_) return;
    shared_ = std::make_shared<detail::ContextShared>();
    shared_->pool = detail::make_pool_state(impl_, shared_);
}

Queue Context::current_queue() const {
    if (!impl_) throw InvalidArgument("xgpu: current_queue of an empty Context");
    return Queue(detail::current_queue(*shared_, impl_));
}

MemoryPool Context::pool() const {
    return MemoryPool(shared_->pool);
}

const Device& Context::device() const {
    return impl_->device();
}
const std::string& Context::backend() const {
    return impl_->device().backend();
}

Queue Context::queue() const {
    return Queue(detail::default_queue(*shared_, impl_));
}

Queue Context::new_queue() const {
    auto q = impl_->create_queue();
    detail::track_queue(q);
    return Queue(std::move(q));
}

namespace detail {
void check_allocation(const DeviceInfo& d, std::size_t bytes) {
    if (bytes > d.global_memory || (d.max_allocation && bytes > d.max_allocation))
        throw OutOfMemory(
            fmt::format("xgpu: cannot allocate {} bytes on {}: the device has {} bytes, and allows at most "
                        "{} in one buffer",
                        bytes, d.name, d.global_memory, d.max_allocation),
            {d.backend, "alloc", 0, ""});
}
} // namespace detail

Buffer Context::alloc(std::size_t bytes) const {
    detail::check_allocation(device().info(), bytes);
    return Buffer(impl_->alloc(bytes));
}

HostBuffer Context::alloc_host(std::size_t bytes) const {
    return HostBuffer(impl_->alloc_host(bytes), bytes);
}

std::string Context::preamble() const {
    return impl_->preamble();
}

std::uint64_t Context::launch_count() const {
    return impl_->launches.load(std::memory_order_relaxed);
}

Program Context::compile(std::string_view source, const std::vector<std::string>& options) const {
    // #line keeps the compiler's messages on the user's own line numbers.
    return build_cached(*this, impl_->preamble() + "\n#line 1\n" + std::string(source), options);
}

Program Context::compile_native(std::string_view source, const std::vector<std::string>& options) const {
    return build_cached(*this, std::string(source), options);
}

} // namespace xgpu
