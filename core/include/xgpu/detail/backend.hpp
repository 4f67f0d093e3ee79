// The backend contract: what a backend (backends/cuda, backends/opencl) implements. The neutral
// runtime (core/src) checks every argument before calling in, so implementations may assume
// valid ranges, matching contexts and well-formed geometry.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xgpu/device.hpp"
#include "xgpu/error.hpp"
#include "xgpu/grid.hpp"
#include "xgpu/image_format.hpp"
#include "xgpu/kernel.hpp"

namespace xgpu::detail {

class ContextImpl;

class EventImpl {
public:
    virtual ~EventImpl() = default;
    virtual void wait() = 0;
    virtual bool is_complete() = 0;
    // Milliseconds from this event to `later`, both of the same backend.
    virtual double elapsed_ms(EventImpl& later) = 0;
};

class QueueImpl;

// The queues a block of memory has been used on since it was handed out: what the memory pool
// needs to reuse a block only where no queue can still be using it (core/src/pool.cpp).
struct QueueUse {
    std::atomic<const QueueImpl*> last{nullptr}; // the queue of the latest use: the fast path
    std::mutex mutex;                            // guards the rest
    std::weak_ptr<QueueImpl> home;               // the queue the block was handed out for
    std::vector<std::weak_ptr<QueueImpl>> queues;
    bool reused = false; // handed out again while work on `home` may still use it
    // Uses recorded so far (every transfer, fill and launch counts one): a copy of the contents
    // kept elsewhere is current while this has not moved (core/src/mirror.cpp).
    std::atomic<std::uint64_t> count{0};
};

class BufferImpl {
public:
    BufferImpl(std::shared_ptr<ContextImpl> ctx, std::size_t bytes) : context(std::move(ctx)), size(bytes) {}
    virtual ~BufferImpl() = default;
    const std::shared_ptr<ContextImpl> context; // keeps the context alive while memory exists
    const std::size_t size;
    QueueUse use; // kept by the neutral layer
    // Memory from ContextImpl::alloc_mapped: the same bytes as the host sees them; else null.
    void* host = nullptr;
    // The address in the device's address space, where the backend's buffers have one (Buffer::device_address).
    virtual std::uint64_t device_address() const { return 0; }
};

// Notes that `queue` is about to enqueue work on `buffer` (every transfer, fill and launch calls
// it before enqueueing): a pooled block handed out again is first waited for here when a queue
// other than its home uses it.
void record_use(BufferImpl& buffer, const std::shared_ptr<QueueImpl>& queue);

// An image (xgpu/image.hpp): the neutral layer has checked its format and sizes against the device.
// `extent` is (width, height, depth), 1 in the dimensions the image lacks.
class ImageImpl {
public:
    ImageImpl(std::shared_ptr<ContextImpl> ctx, const ImageFormat& f, unsigned d, const std::array<std::size_t, 3>& e)
        : context(std::move(ctx)), format(f), dims(d), extent(e) {}
    virtual ~ImageImpl() = default;
    const std::shared_ptr<ContextImpl> context;
    const ImageFormat format;
    const unsigned dims;
    const std::array<std::size_t, 3> extent;
    std::shared_ptr<void> handle; // the neutral layer's Context handle (image.cpp), for its queue
    // A view of a buffer's memory (Image::view): read by kernels only; the buffer is kept alive.
    std::shared_ptr<BufferImpl> viewed;
    std::size_t view_offset = 0, view_pitch = 0;
};

class KernelImpl {
public:
    explicit KernelImpl(std::string kernel_name) : name(std::move(kernel_name)) {}
    virtual ~KernelImpl() = default;
    // Parameters the kernel declares, or -1 where unknown.
    virtual int num_args() = 0;
    // The most work-items a work-group of this kernel may hold on its device, its registers and
    // local memory considered (CUDA: max threads per block; OpenCL: CL_KERNEL_WORK_GROUP_SIZE);
    // 0 where the driver cannot tell.
    virtual std::size_t max_group_size() = 0;
    const std::string name;
    const ContextImpl* context = nullptr; // set by the neutral layer at lookup
};

class ProgramImpl {
public:
    virtual ~ProgramImpl() = default;
    // Creates a kernel object; nullptr if the program has no kernel of that name.
    virtual std::shared_ptr<KernelImpl> create_kernel(const std::string& name) = 0;
    virtual std::vector<std::string> kernel_names() = 0;

    std::shared_ptr<ContextImpl> context;
    std::string build_log;
    // Kernels already looked up (filled by the neutral layer).
    std::mutex mutex;
    std::unordered_map<std::string, std::shared_ptr<KernelImpl>> kernels;
};

class QueueImpl {
public:
    explicit QueueImpl(std::shared_ptr<ContextImpl> ctx) : context(std::move(ctx)) {}
    virtual ~QueueImpl() = default;
    // Each returns an event for the enqueued work when `want_event`, else nullptr.
    // Blocking variants return after the work has finished.
    virtual std::shared_ptr<EventImpl> write(BufferImpl& dst, std::size_t offset, const void* src, std::size_t bytes,
                                             bool blocking, bool want_event) = 0;
    virtual std::shared_ptr<EventImpl> read(BufferImpl& src, std::size_t offset, void* dst, std::size_t bytes,
                                            bool blocking, bool want_event) = 0;
    virtual std::shared_ptr<EventImpl> copy(BufferImpl& src, std::size_t src_offset, BufferImpl& dst,
                                            std::size_t dst_offset, std::size_t bytes, bool want_event) = 0;
    virtual std::shared_ptr<EventImpl> fill(BufferImpl& dst, std::size_t offset, const void* pattern,
                                            std::size_t pattern_size, std::size_t bytes) = 0;
    // `grid.local` is either empty (backend chooses) or divides `grid.global` in every dimension.
    virtual void launch(KernelImpl& kernel, const Grid& grid, std::span<const KernelArg> args) = 0;
    virtual std::shared_ptr<EventImpl> marker() = 0;
    virtual void finish() = 0;
    // Image transfers of a region (checked inside the image) between the image and packed texels:
    // on the host (blocking) or in a buffer from byte `offset` (asynchronous).
    virtual void write_image(ImageImpl& dst, const ImageRegion& region, const void* src) = 0;
    virtual void read_image(ImageImpl& src, const ImageRegion& region, void* dst) = 0;
    virtual void copy_buffer_to_image(BufferImpl& src, std::size_t offset, ImageImpl& dst,
                                      const ImageRegion& region) = 0;
    virtual void copy_image_to_buffer(ImageImpl& src, const ImageRegion& region, BufferImpl& dst,
                                      std::size_t offset) = 0;

    const std::shared_ptr<ContextImpl> context;
    // Kept by the neutral layer (core/src/queue.cpp): the zeroed counter that reductions whose
    // last work-group combines the partials draw tickets from, made at first use; each such
    // launch leaves it at zero, and launches on one queue run in order.
    std::once_flag ticket_once;
    std::shared_ptr<BufferImpl> ticket;
};

// A program built from source: the loaded program and, where the backend can give one, a
// binary that load() accepts later (stored in the disk cache).
struct BuildResult {
    std::shared_ptr<ProgramImpl> program;
    std::vector<unsigned char> binary;
};

class ContextImpl : public std::enable_shared_from_this<ContextImpl> {
public:
    virtual ~ContextImpl() = default;
    virtual const Device& device() const = 0;
    virtual std::shared_ptr<QueueImpl> create_queue() = 0;
    virtual std::shared_ptr<BufferImpl> alloc(std::size_t bytes) = 0;
    virtual std::shared_ptr<void> alloc_host(std::size_t bytes) = 0;
    // Page-locked host memory that kernels read and write like a buffer (BufferImpl::host is the
    // host's view); null where the backend has none (then DeviceInfo::mapped_memory is false).
    virtual std::shared_ptr<BufferImpl> alloc_mapped(std::size_t) { return nullptr; }
    // Device memory another library allocated on this device (DLPack's import): `bytes` at
    // `address`, kept alive by `owner` and never freed here; null where the backend's buffers
    // have no addresses (OpenCL). The device's work enqueued so far has completed when it returns,
    // so that every queue sees the other library's writes.
    virtual std::shared_ptr<BufferImpl> adopt(std::uint64_t /*address*/, std::size_t /*bytes*/,
                                              std::shared_ptr<void> /*owner*/) {
        return nullptr;
    }
    // Images: whether the device takes `format` for images of `dims` dimensions (written by
    // kernels where `writable`), and a new image (contents undefined).
    virtual bool image_format_supported(const ImageFormat& format, unsigned dims, bool writable) = 0;
    virtual std::shared_ptr<ImageImpl> create_image(const ImageFormat& format, unsigned dims,
                                                    const std::array<std::size_t, 3>& extent) = 0;
    // A 2-D image over `buffer`'s memory from byte `offset`, rows `pitch` bytes apart (checked
    // against DeviceInfo::images; the backend checks the address's alignment). Only where
    // ImageLimits::buffer_views.
    virtual std::shared_ptr<ImageImpl> create_image_view(const std::shared_ptr<BufferImpl>&, std::size_t,
                                                         const ImageFormat&, std::size_t, std::size_t, std::size_t) {
        return nullptr;
    }
    // How many kernel parameters a sampled image argument takes (XGPU_IMAGE*D_PARAM declares the
    // image and its sampler as two on OpenCL).
    virtual unsigned sampled_image_params() const { return 1; }
    // The dialect preamble for this device (see kernels/preamble_*.h).
    virtual std::string preamble() const = 0;
    // Everything besides source and options that changes the binary: compiler and driver
    // versions, device identity and architecture. Part of the cache key.
    virtual std::string build_identity() const = 0;
    // Compiles `source`; throws CompileError with the log and options on failure.
    virtual BuildResult build(const std::string& source, const std::vector<std::string>& options) = 0;
    // Loads a binary from build(); throws on any failure (the caller then rebuilds).
    virtual std::shared_ptr<ProgramImpl> load(const std::vector<unsigned char>& binary,
                                              const std::vector<std::string>& options) = 0;

    // Kernel launches enqueued on this context (all queues).
    std::atomic<std::uint64_t> launches{0};
    // The neutral layer's caches (default queue, programs, generated kernels, memory pool) live in
    // the Context handles' shared state, not here: they refer to this object, and holding them
    // here would make cycles that keep a context alive forever.
};

class BackendImpl {
public:
    virtual ~BackendImpl() = default;
    virtual std::string name() const = 0;
    // Loads the driver if needed and lists devices; throws BackendUnavailable naming what is missing.
    virtual std::vector<Device> devices() = 0;
    virtual std::shared_ptr<ContextImpl> create_context(const Device& device) = 0;
    // The libraries behind the backend, one line each with its path (BackendStatus::libraries).
    // May load them; never throws for a missing one, which it names instead.
    virtual std::vector<std::string> libraries() { return {}; }
};

// A backend that loads its driver and lists its devices once, on first use, and remembers why it
// could not: every later call gets the same devices, or the same BackendUnavailable.
class ProbedBackend : public BackendImpl {
public:
    std::vector<Device> devices() final;

protected:
    // Loads the driver and lists the devices; throws an xgpu Error saying why the backend cannot
    // start. Runs once, under the lock.
    virtual std::vector<Device> probe() = 0;

private:
    std::mutex mutex_;
    bool probed_ = false;
    std::vector<Device> devices_;
    std::string unavailable_;
    ErrorOrigin origin_;
};

// The registry of compiled-in backends, in the order `auto` tries them.
void register_backend(std::shared_ptr<BackendImpl> backend);
std::shared_ptr<BackendImpl> find_backend(std::string_view name); // nullptr if not compiled in

// Compiler options as one command line: what the compilers take and what error messages show.
std::string join_options(const std::vector<std::string>& options);

// Throws the CompileError of a failed build or binary load, in one form for every backend:
// "xgpu[<backend>]: <what> failed: <code name> (<code>)", the options the compiler got (`used`),
// then its log. The error carries the caller's `options` and the source.
[[noreturn]] void throw_compile_error(const std::string& backend, const std::string& what, const char* call,
                                      long long code, const std::string& code_name, const std::string& log,
                                      const std::vector<std::string>& used, const std::vector<std::string>& options,
                                      const std::string& source);

// Throws OutOfMemory, before any allocation, for a request the device can never satisfy.
void check_allocation(const DeviceInfo& device, std::size_t bytes);

// Kernel sources from kernels/, embedded at build time: contents of the named file, or throws.
std::string_view embedded_kernel(std::string_view file_name);

} // namespace xgpu::detail
