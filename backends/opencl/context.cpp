// The OpenCL backend: contexts, buffers, pinned host memory and the compiler.
#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {

Context::Context(Device device, cl::Device d)
    : cl_device(std::move(d)), device_(std::move(device)),
      pocl_(device_.info().platform.find("Portable Computing Language") != std::string::npos) {
    cl_int err = CL_SUCCESS;
    context = cl::Context(cl_device, nullptr, nullptr, nullptr, &err);
    check(err, "clCreateContext", device_.name());
}

std::shared_ptr<detail::QueueImpl> Context::create_queue() {
    cl_int err = CL_SUCCESS;
    // Profiling is always on: Event::elapsed_ms needs it, and it costs nothing measurable per launch.
    cl::CommandQueue q(context, cl_device, CL_QUEUE_PROFILING_ENABLE, &err);
    check(err, "clCreateCommandQueue");
    auto queue = std::make_shared<Queue>(shared_from_this(), std::move(q));
    std::lock_guard lock(queues_mutex_);
    queues_.push_back(queue);
    return queue;
}

std::shared_ptr<detail::BufferImpl> Context::alloc(std::size_t bytes) {
    cl_int err = CL_SUCCESS;
    // OpenCL has no empty buffers: a zero-byte Buffer holds one byte that is never addressed.
    cl::Buffer mem(context, CL_MEM_READ_WRITE, bytes ? bytes : 1, nullptr, &err);
    check(err, "clCreateBuffer", fmt::format("{} bytes on {}", bytes, device_.name()));
    return std::make_shared<Buffer>(shared_from_this(), bytes, std::move(mem));
}

std::shared_ptr<void> Context::alloc_host(std::size_t bytes) {
    // Host-visible memory the driver can pin: an ALLOC_HOST_PTR buffer, mapped for its lifetime.
    cl_int err = CL_SUCCESS;
    cl::Buffer mem(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes ? bytes : 1, nullptr, &err);
    check(err, "clCreateBuffer", fmt::format("{} bytes of host memory", bytes));
    cl::CommandQueue q(context, cl_device, 0, &err);
    check(err, "clCreateCommandQueue");
    void* p =
        q.enqueueMapBuffer(mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes ? bytes : 1, nullptr, nullptr, &err);
    check(err, "clEnqueueMapBuffer");
    return std::shared_ptr<void>(p, [mem, q](void* ptr) mutable {
        q.enqueueUnmapMemObject(mem, ptr);
        q.finish();
    });
}

namespace {

// A PoCL built on an LLVM older than 16 names an AVX-512 Zen 4 host "znver3" (its HSTR ends so),
// yet takes 512-bit vectors from the host's features; its code generator then aborts the process
// on operations of 512-bit vectors ("LLVM ERROR: Cannot select: ... fma", a segfault converting a
// ulong8): pocl-binary-distribution 3.0, the PyPI wheel, does. There the dialect has no vector
// types, and the CPU forms take their scalar loops.
bool vectors_break(const DeviceInfo& i, bool pocl) {
    if (!pocl) return false;
    const auto at = i.version.rfind('-');
    const std::string cpu = at == std::string::npos ? std::string() : i.version.substr(at + 1);
    if (cpu != "znver1" && cpu != "znver2" && cpu != "znver3") return false;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    return __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
}

} // namespace

std::string Context::preamble() const {
    // NVIDIA's compute capability (cl_nv_device_attribute_query) for the preamble's inline-PTX
    // functions.
    const unsigned nv = device_.info().nv_compute_capability;
    return std::string(device_.has_fp64() ? "#define XGPU_HAS_FP64 1\n" : "") +
           (nv ? "#define XGPU_NV_SM " + std::to_string(nv) + "\n" : std::string()) +
           (vectors_break(device_.info(), pocl_) ? "" : "#define XGPU_HAS_VECTORS 1\n") +
           std::string(detail::embedded_kernel("preamble_opencl.h"));
}

std::string Context::build_identity() const {
    const auto& i = device_.info();
    return fmt::format("platform={}|device={}|vendor={}|version={}|driver={}|clc={}", i.platform, i.name, i.vendor,
                       i.version, i.driver_version, i.compiler_version);
}

} // namespace xgpu::opencl

namespace xgpu::opencl {

bool Context::fill_needs_kernel(std::size_t end) const {
    return end > (std::size_t(1) << 31) && device_.vendor().find("NVIDIA") != std::string::npos;
}

cl_kernel Context::fill_kernel() {
    std::lock_guard lock(fill_mutex_);
    if (!fill_kernel_()) {
        static const char* source = R"(
typedef struct { uchar b[128]; } xgpu_pattern;
__kernel void xgpu_fill(__global uchar* p, const ulong offset, const ulong bytes, const xgpu_pattern pat,
                        const uint size) {
    const ulong i = get_global_id(0);
    if (i < bytes) p[offset + i] = pat.b[i % size];
})";
        cl_int err = CL_SUCCESS;
        cl::Program p(context, source, false, &err);
        check(err, "clCreateProgramWithSource", "fill kernel");
        build_or_throw(p, cl_device, {}, source, "compiling the fill kernel");
        fill_kernel_ = cl::Kernel(p, "xgpu_fill", &err);
        check(err, "clCreateKernel", "xgpu_fill");
    }
    return fill_kernel_();
}

} // namespace xgpu::opencl
