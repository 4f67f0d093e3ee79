// The CUDA backend's classes (internal to backends/cuda).
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "loader.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu::cuda {

// errors.cpp
std::string error_name(CUresult code);
// Which xgpu error a failure becomes: by its code, or always the given kind (a failed launch is a
// LaunchError whatever the code; any failure while starting the driver means it is unavailable).
enum class Kind { by_code, launch, unavailable };
[[noreturn]] void fail(CUresult code, const char* call, const std::string& detail = {}, Kind kind = Kind::by_code);
inline void check(CUresult code, const char* call, const std::string& detail = {}) {
    if (code != CUDA_SUCCESS) fail(code, call, detail);
}
std::string nvrtc_error_name(nvrtcResult code);
[[noreturn]] void fail(nvrtcResult code, const char* call, const std::string& detail = {});
inline void check(nvrtcResult code, const char* call, const std::string& detail = {}) {
    if (code != NVRTC_SUCCESS) fail(code, call, detail);
}
using detail::join_options;

// compiler.cpp: NVRTC
// What NVRTC compiles for: sm_XY (a cubin) for a device it knows, else compute_XY (PTX that the
// driver compiles when loading).
struct Target {
    std::string arch;
    bool cubin = true;
};
Target compile_target(int sm);
std::string nvrtc_version(); // "13.0", or "" without NVRTC
struct Compiled {
    std::vector<unsigned char> binary; // see pack_binary
    std::string log;
};
// Compiles CUDA C++; throws CompileError with the log and options, or BackendUnavailable without NVRTC.
Compiled compile(const std::string& source, const std::vector<std::string>& options, const Target& target);

// program.cpp: the binary build() returns and load() accepts: an 8-byte header (magic, format
// version, kind: 'C' cubin or 'P' PTX) and the image. The format version is in build_identity().
constexpr int binary_format_version = 1;
std::vector<unsigned char> pack_binary(char kind, const char* image, std::size_t size);

class Context;
class Module;
// Loads a binary from pack_binary; throws BackendError for a damaged binary and CompileError, with
// the driver's JIT log, when the driver rejects the image.
std::shared_ptr<Module> load_module(std::shared_ptr<Context> ctx, const std::vector<unsigned char>& binary,
                                    const std::vector<std::string>& options, const std::string& source);

// The CUcontext this thread made current through xgpu: a launch checks it instead of calling the
// driver. (Code that switches contexts behind xgpu's back must switch back.)
inline thread_local CUcontext current_context = nullptr;

class Context final : public detail::ContextImpl {
public:
    Context(Device device, CUdevice dev);
    ~Context() override;
    const Device& device() const override { return device_; }
    std::shared_ptr<detail::QueueImpl> create_queue() override;
    std::shared_ptr<detail::BufferImpl> alloc(std::size_t bytes) override;
    std::shared_ptr<void> alloc_host(std::size_t bytes) override;
    std::shared_ptr<detail::BufferImpl> alloc_mapped(std::size_t bytes) override;
    std::shared_ptr<detail::BufferImpl> adopt(std::uint64_t address, std::size_t bytes,
                                              std::shared_ptr<void> owner) override;
    std::string preamble() const override;
    std::string build_identity() const override { return identity_; }
    detail::BuildResult build(const std::string& source, const std::vector<std::string>& options) override;
    std::shared_ptr<detail::ProgramImpl> load(const std::vector<unsigned char>& binary,
                                              const std::vector<std::string>& options) override;
    bool image_format_supported(const ImageFormat& format, unsigned dims, bool writable) override;
    std::shared_ptr<detail::ImageImpl> create_image(const ImageFormat& format, unsigned dims,
                                                    const std::array<std::size_t, 3>& extent) override;
    std::shared_ptr<detail::ImageImpl> create_image_view(const std::shared_ptr<detail::BufferImpl>& buffer,
                                                         std::size_t offset, const ImageFormat& format,
                                                         std::size_t width, std::size_t height,
                                                         std::size_t pitch) override;

    // Makes this context current on the calling thread (cheap when it already is).
    void make_current() const {
        if (current_context != context) bind();
    }
    // make_current() for destructors: false instead of throwing.
    bool try_make_current() const noexcept;
    std::shared_ptr<Context> self() { return std::static_pointer_cast<Context>(shared_from_this()); }

    CUdevice cu_device = 0;
    CUcontext context = nullptr; // the device's primary context, retained
    int sm = 0;                  // compute capability as 10 * major + minor
    std::array<std::size_t, 3> max_block{}, max_grid{};

private:
    void bind() const;
    Device device_;
    Target target_;
    std::string identity_;
};

class Event final : public detail::EventImpl {
public:
    // Records a new event on `stream`.
    Event(std::shared_ptr<Context> ctx, CUstream stream);
    ~Event() override;
    void wait() override;
    bool is_complete() override;
    double elapsed_ms(detail::EventImpl& later) override;
    const std::shared_ptr<Context> context;
    CUevent event = nullptr;
};

class Buffer final : public detail::BufferImpl {
public:
    Buffer(std::shared_ptr<Context> ctx, std::size_t bytes); // allocates
    // Page-locked host memory mapped for the device (Context::alloc_mapped).
    struct Mapped {};
    Buffer(std::shared_ptr<Context> ctx, std::size_t bytes, Mapped);
    // Memory another library allocated (Context::adopt): `owner` keeps it; never freed here.
    Buffer(std::shared_ptr<Context> ctx, std::size_t bytes, CUdeviceptr address, std::shared_ptr<void> owner);
    ~Buffer() override;
    std::uint64_t device_address() const override { return std::uint64_t(pointer); }
    CUdeviceptr pointer = 0; // 0 for a zero-byte buffer
    std::shared_ptr<void> owner;
};

// An image (image.cpp): a CUDA array, with the texture objects made for it, one per sampler, and
// the surface object kernels write it through, each made at first use and kept until the image goes.
class Image final : public detail::ImageImpl {
public:
    Image(std::shared_ptr<Context> ctx, const ImageFormat& f, unsigned d, const std::array<std::size_t, 3>& e);
    // A 2-D view of pitched device memory (Image::view): no array, textures over the memory.
    Image(std::shared_ptr<Context> ctx, const ImageFormat& f, std::size_t width, std::size_t height, CUdeviceptr memory,
          std::size_t pitch);
    ~Image() override;
    CUtexObject texture(unsigned sampler_key);
    CUsurfObject surface();
    Context& owner;
    CUarray array = nullptr;
    CUdeviceptr memory = 0; // a view's first texel
    std::size_t pitch = 0;  // a view's row pitch in bytes

private:
    std::mutex mutex_;
    std::map<unsigned, CUtexObject> textures_;
    CUsurfObject surface_ = 0;
};
// The kernel parameter of an image: struct xgpu_image of kernels/preamble_cuda.h.
struct ImageParam {
    unsigned long long texture = 0;
    unsigned long long surface = 0;
    int width = 0, height = 0, depth = 0;
    unsigned format = 0; // channel type | channels << 4 | normalised << 8 | normalised coordinates << 9
};
static_assert(sizeof(ImageParam) == 32);
// Fills DeviceInfo::images (device.cpp).
ImageLimits image_limits(CUdevice d);

// A loaded module; the programs and kernels taken from it share it, so it outlives them all.
class Module {
public:
    Module(std::shared_ptr<Context> ctx, CUmodule m) : context(std::move(ctx)), handle(m) {}
    ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    const std::shared_ptr<Context> context;
    const CUmodule handle;
};

class Kernel final : public detail::KernelImpl {
public:
    Kernel(std::string name, std::shared_ptr<Module> m, CUfunction f);
    int num_args() override { return args; }
    std::size_t max_group_size() override { return max_threads; }
    // Lets launches use `bytes` of dynamic shared memory: beyond 48 KiB a kernel must opt in.
    void allow_shared_memory(std::size_t bytes);

    const std::shared_ptr<Module> module; // holds the kernel's code
    const CUfunction function;
    int args = -1;                        // -1 where the driver cannot tell
    std::vector<std::size_t> param_sizes; // bytes per parameter; empty where unknown
    std::size_t max_threads = 0;          // per block, given the kernel's registers
    std::atomic<std::size_t> shared_limit{48 * 1024};
};

class Program final : public detail::ProgramImpl {
public:
    explicit Program(std::shared_ptr<Module> m) : module(std::move(m)) { context = module->context; }
    std::shared_ptr<detail::KernelImpl> create_kernel(const std::string& name) override;
    std::vector<std::string> kernel_names() override;
    const std::shared_ptr<Module> module;
};

class Queue final : public detail::QueueImpl {
public:
    explicit Queue(std::shared_ptr<Context> ctx);
    ~Queue() override;
    std::shared_ptr<detail::EventImpl> write(detail::BufferImpl& dst, std::size_t offset, const void* src,
                                             std::size_t bytes, bool blocking, bool want_event) override;
    std::shared_ptr<detail::EventImpl> read(detail::BufferImpl& src, std::size_t offset, void* dst, std::size_t bytes,
                                            bool blocking, bool want_event) override;
    std::shared_ptr<detail::EventImpl> copy(detail::BufferImpl& src, std::size_t src_offset, detail::BufferImpl& dst,
                                            std::size_t dst_offset, std::size_t bytes, bool want_event) override;
    std::shared_ptr<detail::EventImpl> fill(detail::BufferImpl& dst, std::size_t offset, const void* pattern,
                                            std::size_t pattern_size, std::size_t bytes) override;
    void launch(detail::KernelImpl& kernel, const Grid& grid, std::span<const detail::KernelArg> args) override;
    std::shared_ptr<detail::EventImpl> marker() override;
    void finish() override;
    void write_image(detail::ImageImpl& dst, const ImageRegion& region, const void* src) override;
    void read_image(detail::ImageImpl& src, const ImageRegion& region, void* dst) override;
    void copy_buffer_to_image(detail::BufferImpl& src, std::size_t offset, detail::ImageImpl& dst,
                              const ImageRegion& region) override;
    void copy_image_to_buffer(detail::ImageImpl& src, const ImageRegion& region, detail::BufferImpl& dst,
                              std::size_t offset) override;

    Context& owner; // the context, kept alive by QueueImpl::context
    CUstream stream = nullptr;

private:
    // Ends a queue operation: waits for the stream when `blocking`, returns an event when wanted.
    std::shared_ptr<detail::EventImpl> finish_op(bool blocking, bool want_event);

    // Small blocking reads (a reduction's result) go through page-locked memory: a copy to pageable
    // memory costs the driver its own staging, many times the copy of a few bytes itself.
    static constexpr std::size_t staging_bytes = 64 * 1024;
    std::mutex staging_mutex_;
    void* staging_ = nullptr;
};

} // namespace xgpu::cuda
