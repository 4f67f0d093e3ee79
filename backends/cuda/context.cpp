// The CUDA backend: contexts (the device's primary context), device and pinned host memory, and
// building programs with NVRTC.
#include <fmt/format.h>

#include "cuda.hpp"

namespace xgpu::cuda {

Context::Context(Device device, CUdevice dev) : cu_device(dev), device_(std::move(device)) {
    const auto attr = [&](CUdevice_attribute what) {
        int v = 0;
        check(api::cuDeviceGetAttribute(&v, what, cu_device), "cuDeviceGetAttribute");
        return std::size_t(v);
    };
    sm = int(10 * attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
             attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    max_block = {attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                 attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
    max_grid = {attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    target_ = compile_target(sm);
    const auto& i = device_.info();
    identity_ =
        fmt::format("device={}|arch={}|target={} {}|driver={}|nvrtc={}|binary=v{}", i.name, i.arch, target_.arch,
                    target_.cubin ? "cubin" : "ptx", i.driver_version, nvrtc_version(), binary_format_version);
    // Last, so that nothing can throw after it: the destructor, which releases it, would not run.
    // The primary context is the one the CUDA runtime and libraries use too, so memory and streams
    // can be shared with them.
    check(api::cuDevicePrimaryCtxRetain(&context, cu_device), "cuDevicePrimaryCtxRetain", device_.name());
}

Context::~Context() {
    if (current_context == context) current_context = nullptr;
    api::cuDevicePrimaryCtxRelease(cu_device); // nothing to do about a failure in a destructor
}

void Context::bind() const {
    check(api::cuCtxSetCurrent(context), "cuCtxSetCurrent", device_.name());
    current_context = context;
}

bool Context::try_make_current() const noexcept {
    if (current_context == context) return true;
    if (api::cuCtxSetCurrent(context) != CUDA_SUCCESS) return false;
    current_context = context;
    return true;
}

std::shared_ptr<detail::QueueImpl> Context::create_queue() {
    return std::make_shared<Queue>(self());
}

std::shared_ptr<detail::BufferImpl> Context::alloc(std::size_t bytes) {
    return std::make_shared<Buffer>(self(), bytes);
}

Buffer::Buffer(std::shared_ptr<Context> ctx, std::size_t bytes) : BufferImpl(ctx, bytes) {
    if (bytes == 0) return; // cuMemAlloc refuses 0 bytes; an empty buffer is never addressed
    ctx->make_current();
    check(api::cuMemAlloc(&pointer, bytes), "cuMemAlloc", fmt::format("{} bytes on {}", bytes, ctx->device().name()));
}

Buffer::Buffer(std::shared_ptr<Context> ctx, std::size_t bytes, Mapped) : BufferImpl(ctx, bytes) {
    ctx->make_current();
    check(api::cuMemHostAlloc(&host, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
          "cuMemHostAlloc", fmt::format("{} bytes of mapped page-locked host memory", bytes));
    if (const CUresult r = api::cuMemHostGetDevicePointer(&pointer, host, 0); r != CUDA_SUCCESS) {
        api::cuMemFreeHost(host);
        check(r, "cuMemHostGetDevicePointer");
    }
}

Buffer::Buffer(std::shared_ptr<Context> ctx, std::size_t bytes, CUdeviceptr address, std::shared_ptr<void> o)
    : BufferImpl(ctx, bytes), pointer(address), owner(std::move(o)) {}

Buffer::~Buffer() {
    // A destructor cannot throw: a failure here (a context already broken by a faulting kernel)
    // was reported by the call that met it first.
    if (owner) {
        // Adopted: its owner hands it back to the other library, whose allocator may give it out
        // at once on its own streams. xgpu's work on it (on any queue) completes first.
        if (static_cast<Context&>(*context).try_make_current()) api::cuCtxSynchronize();
        return;
    }
    if (host) {
        if (static_cast<Context&>(*context).try_make_current()) api::cuMemFreeHost(host);
        return;
    }
    if (!pointer) return;
    if (static_cast<Context&>(*context).try_make_current()) api::cuMemFree(pointer);
}

std::shared_ptr<detail::BufferImpl> Context::alloc_mapped(std::size_t bytes) {
    return std::make_shared<Buffer>(self(), bytes, Buffer::Mapped{});
}

std::shared_ptr<detail::BufferImpl> Context::adopt(std::uint64_t address, std::size_t bytes,
                                                   std::shared_ptr<void> owner) {
    make_current();
    // The other library's work on its streams (which need not wait for ours) completes first.
    check(api::cuCtxSynchronize(), "cuCtxSynchronize", "adopting another library's device memory");
    return std::make_shared<Buffer>(self(), bytes, CUdeviceptr(address), std::move(owner));
}

std::shared_ptr<void> Context::alloc_host(std::size_t bytes) {
    make_current();
    void* p = nullptr;
    // Portable: pinned for every context, so a second device's queue copies from it at full speed too.
    check(api::cuMemHostAlloc(&p, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc",
          fmt::format("{} bytes of page-locked host memory", bytes));
    return std::shared_ptr<void>(p, [ctx = self()](void* ptr) {
        if (ctx->try_make_current()) api::cuMemFreeHost(ptr);
    });
}

std::string Context::preamble() const {
    return "#define XGPU_HAS_FP64 1\n" + std::string(detail::embedded_kernel("preamble_cuda.h"));
}

detail::BuildResult Context::build(const std::string& source, const std::vector<std::string>& options) {
    Compiled compiled = compile(source, options, target_);
    auto module = load_module(self(), compiled.binary, options, source);
    auto program = std::make_shared<Program>(std::move(module));
    program->build_log = std::move(compiled.log);
    return {program, std::move(compiled.binary)};
}

std::shared_ptr<detail::ProgramImpl> Context::load(const std::vector<unsigned char>& binary,
                                                   const std::vector<std::string>& options) {
    return std::make_shared<Program>(load_module(self(), binary, options, {}));
}

} // namespace xgpu::cuda
