// The OpenCL backend's classes (internal to backends/opencl).
#pragma once

#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_HPP_ENABLE_PROGRAM_CONSTRUCTION_FROM_ARRAY_COMPATIBILITY
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wignored-attributes"
#endif
#include <CL/opencl.hpp>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <map>
#include <mutex>
#include <shared_mutex>

#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu::opencl {

// errors.cpp
const char* error_name(cl_int code);
// Throws the xgpu error matching `code` (OutOfMemory, LaunchError, ...) unless it is CL_SUCCESS.
void check(cl_int code, const char* call, const std::string& detail = {});
[[noreturn]] void fail(cl_int code, const char* call, const std::string& detail = {});

// icd.cpp: gives the ICD loader the system's drivers, or the fallback one where none is registered
// (XGPU_OPENCL_ICD, XGPU_OPENCL_FALLBACK_ICD); once, before any other OpenCL call. Throws
// InvalidArgument for a bad XGPU_OPENCL_ICD.
void choose_icds();
// The loader and the ICDs it was given, one line each (BackendStatus::libraries).
std::vector<std::string> icd_libraries();

class Context;

class Event final : public detail::EventImpl {
public:
    explicit Event(cl_event e) : event(e) {} // takes ownership
    void wait() override;
    bool is_complete() override;
    double elapsed_ms(detail::EventImpl& later) override;
    cl::Event event;
};

class Buffer final : public detail::BufferImpl {
public:
    Buffer(std::shared_ptr<detail::ContextImpl> ctx, std::size_t bytes, cl::Buffer mem)
        : BufferImpl(std::move(ctx), bytes), memory(std::move(mem)) {}
    cl::Buffer memory;
};

// An image (image.cpp) and the cl_mem behind it.
class Image final : public detail::ImageImpl {
public:
    Image(std::shared_ptr<detail::ContextImpl> ctx, const ImageFormat& f, unsigned d,
          const std::array<std::size_t, 3>& e, cl_mem m)
        : ImageImpl(std::move(ctx), f, d, e), memory(m) {}
    ~Image() override { clReleaseMemObject(memory); }
    const cl_mem memory;
};
// The OpenCL image format of an xgpu one.
cl_image_format cl_format(const ImageFormat& f);
// The device's image limits (device.cpp fills DeviceInfo::images with it).
ImageLimits image_limits(const cl::Device& d);

class Kernel final : public detail::KernelImpl {
public:
    Kernel(std::string name, cl::Kernel k, const cl::Device& device);
    int num_args() override { return args; }
    std::size_t max_group_size() override { return max_group; }
    std::size_t max_group = 0; // CL_KERNEL_WORK_GROUP_SIZE on the program's device; 0 where unknown
    // Each parameter as the driver describes it (-cl-kernel-arg-info), or empty where it cannot:
    // what a launch argument is checked against before any is set.
    struct Param {
        enum class Kind : unsigned char { unknown, buffer, local, scalar, image, sampler } kind = Kind::unknown;
        std::size_t size = 0; // a scalar's bytes, 0 where the type is not a built-in one
        std::string type;     // as the source declares it
        unsigned dims = 0;    // an image's dimensions
        bool write_only = false;
    };
    std::vector<Param> params;
    void check_args(std::span<const detail::KernelArg> args) const;
    cl::Kernel kernel;
    int args = -1;
    std::mutex mutex; // a cl_kernel holds its arguments: one launch sets them at a time
    // The arguments last set, so that a launch with the same ones skips clSetKernelArg (a good
    // part of the host-side launch cost on NVIDIA's OpenCL).
    struct SetArg {
        bool valid = false;
        detail::KernelArg::Kind kind{};
        std::size_t size = 0;
        unsigned char bytes[64];
    };
    std::vector<SetArg> last;
};

class Program final : public detail::ProgramImpl {
public:
    explicit Program(cl::Program p) : program(std::move(p)) {}
    std::shared_ptr<detail::KernelImpl> create_kernel(const std::string& name) override;
    std::vector<std::string> kernel_names() override;
    cl::Program program;
};

class Queue final : public detail::QueueImpl {
public:
    Queue(std::shared_ptr<detail::ContextImpl> ctx, cl::CommandQueue q)
        : QueueImpl(std::move(ctx)), queue(std::move(q)) {}
    std::shared_ptr<detail::EventImpl> write(detail::BufferImpl& dst, std::size_t offset, const void* src,
                                             std::size_t bytes, bool blocking, bool want_event) override;
    std::shared_ptr<detail::EventImpl> read(detail::BufferImpl& src, std::size_t offset, void* dst, std::size_t bytes,
                                            bool blocking, bool want_event) override;
    std::shared_ptr<detail::EventImpl> copy(detail::BufferImpl& src, std::size_t src_offset, detail::BufferImpl& dst,
                                            std::size_t dst_offset, std::size_t bytes, bool want_event) override;
    std::shared_ptr<detail::EventImpl> fill(detail::BufferImpl& dst, std::size_t offset, const void* pattern,
                                            std::size_t pattern_size, std::size_t bytes) override;
    ~Queue() override;
    void launch(detail::KernelImpl& kernel, const Grid& grid, std::span<const detail::KernelArg> args) override;
    std::shared_ptr<detail::EventImpl> marker() override;
    void finish() override;
    void write_image(detail::ImageImpl& dst, const ImageRegion& region, const void* src) override;
    void read_image(detail::ImageImpl& src, const ImageRegion& region, void* dst) override;
    void copy_buffer_to_image(detail::BufferImpl& src, std::size_t offset, detail::ImageImpl& dst,
                              const ImageRegion& region) override;
    void copy_image_to_buffer(detail::ImageImpl& src, const ImageRegion& region, detail::BufferImpl& dst,
                              std::size_t offset) override;
    cl::CommandQueue queue;

private:
    std::mutex fill_mutex_;
    // Small blocking reads (a reduction's result) on GPUs go through a persistently mapped
    // host-allocated buffer (page-locked with NVIDIA's driver): a read into pageable memory costs
    // the driver its own staging. Null until first used, and on CPU devices.
    static constexpr std::size_t staging_bytes = 64 * 1024;
    std::mutex staging_mutex_;
    cl_mem staging_ = nullptr;
    void* staging_ptr_ = nullptr;
    bool read_staged(detail::BufferImpl& src, std::size_t offset, void* dst, std::size_t bytes);
};

class Context final : public detail::ContextImpl {
public:
    Context(Device device, cl::Device cl_device);
    const Device& device() const override { return device_; }
    std::shared_ptr<detail::QueueImpl> create_queue() override;
    std::shared_ptr<detail::BufferImpl> alloc(std::size_t bytes) override;
    std::shared_ptr<void> alloc_host(std::size_t bytes) override;
    std::string preamble() const override;
    std::string build_identity() const override;
    detail::BuildResult build(const std::string& source, const std::vector<std::string>& options) override;
    std::shared_ptr<detail::ProgramImpl> load(const std::vector<unsigned char>& binary,
                                              const std::vector<std::string>& options) override;
    bool image_format_supported(const ImageFormat& format, unsigned dims, bool writable) override;
    std::shared_ptr<detail::ImageImpl> create_image(const ImageFormat& format, unsigned dims,
                                                    const std::array<std::size_t, 3>& extent) override;
    unsigned sampled_image_params() const override { return 2; }
    // The sampler object of Sampler::key() `key`, made once per context.
    cl_sampler sampler(unsigned key);

    cl::Context context;
    cl::Device cl_device;
    // NVIDIA's clEnqueueFillBuffer fails (-9999) past 2 GiB into a buffer: such fills use this
    // kernel instead (built on first use).
    bool fill_needs_kernel(std::size_t end) const;
    cl_kernel fill_kernel();

    // PoCL compiles a kernel's work-group function on its worker thread when the kernel first
    // runs, and was seen to crash in LLVM when clBuildProgram ran on another thread meanwhile:
    // on PoCL, a build holds the gate exclusively and finishes queued work first, and every
    // enqueue (from any host thread) holds it shared, so nothing runs while a build does.
    [[nodiscard]] std::unique_lock<std::shared_mutex> quiesce_for_build();
    [[nodiscard]] std::shared_lock<std::shared_mutex> enqueue_gate() {
        return pocl_ ? std::shared_lock(gate_) : std::shared_lock<std::shared_mutex>();
    }

private:
    Device device_;
    bool pocl_ = false;
    std::shared_mutex gate_;
    std::mutex queues_mutex_;
    std::vector<std::weak_ptr<Queue>> queues_;
    std::mutex fill_mutex_;
    cl::Kernel fill_kernel_;
    std::mutex image_mutex_;
    // Formats the device lists, per image type and flags (CL_MEM_READ_ONLY, CL_MEM_READ_WRITE).
    std::map<std::pair<cl_mem_object_type, cl_mem_flags>, std::vector<cl_image_format>> formats_;
    std::map<unsigned, cl::Sampler> samplers_;
    bool format_listed(const cl_image_format& f, cl_mem_object_type type, cl_mem_flags flags);
};

using detail::join_options;
// Builds `p` for `d`; throws CompileError with the log and options (compiler.cpp).
void build_or_throw(cl::Program& p, const cl::Device& d, const std::vector<std::string>& options,
                    const std::string& source, const char* what);

} // namespace xgpu::opencl
