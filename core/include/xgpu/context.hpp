// xgpu contexts: one device of one backend, with its default queue, memory and compiled programs.
//
//   auto ctx = xgpu::Context::from_env();   // XGPU_BACKEND, XGPU_DEVICE; else automatic
//   auto buf = ctx.alloc(bytes);
//   auto k   = ctx.compile(source, {"-DN=16"}).kernel("twice");
//   k.launch(ctx.queue(), xgpu::Grid{n}, buf, 2.0f);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xgpu/buffer.hpp"
#include "xgpu/device.hpp"
#include "xgpu/kernel.hpp"
#include "xgpu/pool.hpp"
#include "xgpu/queue.hpp"

namespace xgpu {

namespace detail {
class ContextImpl;
struct ContextShared;
} // namespace detail

class Context {
public:
    Context() = default;
    explicit Context(std::shared_ptr<detail::ContextImpl> impl);

    // The context the environment selects: XGPU_BACKEND (cuda|opencl|auto) and XGPU_DEVICE
    // (an index, or a case-insensitive substring of the device, platform or vendor name).
    static Context from_env();
    // A context on `backend` ("cuda", "opencl" or "auto"); `device` as XGPU_DEVICE.
    static Context create(std::string_view backend, std::string_view device = {});
    // A context on a device from backends().
    static Context create(const Device& device);

    const Device& device() const;
    const std::string& backend() const;

    // The default queue, and a new independent one.
    Queue queue() const;
    Queue new_queue() const;
    // The queue array operations (expressions, reductions, scans, transfers, random numbers, pool
    // allocations) run on in the calling thread: the innermost QueueScope's for this context, else
    // the default queue.
    Queue current_queue() const;

    Buffer alloc(std::size_t bytes) const;
    HostBuffer alloc_host(std::size_t bytes) const;

    // Compiles source written in the xgpu dialect (the backend's preamble is prepended).
    // Options are passed to the compiler; "-DNAME=value" works on both backends.
    // Results are cached in memory per context and on disk (XGPU_CACHE_DIR, XGPU_CACHE=off).
    Program compile(std::string_view source, const std::vector<std::string>& options = {}) const;
    // Compiles native CUDA C++ or OpenCL C, without the dialect preamble.
    Program compile_native(std::string_view source, const std::vector<std::string>& options = {}) const;
    // The dialect preamble for this device.
    std::string preamble() const;

    // The context's memory pool (shared by every copy of this handle).
    MemoryPool pool() const;

    // Kernel launches enqueued on this context so far (all queues).
    std::uint64_t launch_count() const;

    const std::shared_ptr<detail::ContextImpl>& impl() const { return impl_; }
    friend bool operator==(const Context& a, const Context& b) { return a.impl_ == b.impl_; }

private:
    std::shared_ptr<detail::ContextImpl> impl_;
    std::shared_ptr<detail::ContextShared> shared_;
    friend struct detail::ContextShared;

public:
    // The neutral layer's per-context caches (internal).
    detail::ContextShared& shared() const { return *shared_; }
};

} // namespace xgpu
