// The OpenCL backend: transfers, fills, markers and kernel launches on a command queue.
#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {
namespace {

cl_mem mem(detail::BufferImpl& b) { return static_cast<Buffer&>(b).memory(); }

std::shared_ptr<detail::EventImpl> wrap(cl_event e) { return e ? std::make_shared<Event>(e) : nullptr; }

} // namespace

std::shared_ptr<detail::EventImpl> Queue::write(detail::BufferImpl& dst, std::size_t offset, const void* src,
                                                std::size_t bytes, bool blocking, bool want_event) {
    cl_event e = nullptr;
    check(clEnqueueWriteBuffer(queue(), mem(dst), blocking ? CL_TRUE : CL_FALSE, offset, bytes, src, 0, nullptr,
                               want_event ? &e : nullptr),
          "clEnqueueWriteBuffer");
    return wrap(e);
}

std::shared_ptr<detail::EventImpl> Queue::read(detail::BufferImpl& src, std::size_t offset, void* dst, std::size_t bytes,
                                               bool blocking, bool want_event) {
    cl_event e = nullptr;
    check(clEnqueueReadBuffer(queue(), mem(src), blocking ? CL_TRUE : CL_FALSE, offset, bytes, dst, 0, nullptr,
                              want_event ? &e : nullptr),
          "clEnqueueReadBuffer");
    return wrap(e);
}

std::shared_ptr<detail::EventImpl> Queue::copy(detail::BufferImpl& src, std::size_t src_offset, detail::BufferImpl& dst,
                                               std::size_t dst_offset, std::size_t bytes, bool want_event) {
    cl_event e = nullptr;
    check(clEnqueueCopyBuffer(queue(), mem(src), mem(dst), src_offset, dst_offset, bytes, 0, nullptr,
                              want_event ? &e : nullptr),
          "clEnqueueCopyBuffer");
    return wrap(e);
}

std::shared_ptr<detail::EventImpl> Queue::fill(detail::BufferImpl& dst, std::size_t offset, const void* pattern,
                                               std::size_t pattern_size, std::size_t bytes) {
    cl_event e = nullptr;
    check(clEnqueueFillBuffer(queue(), mem(dst), pattern, pattern_size, offset, bytes, 0, nullptr, &e),
          "clEnqueueFillBuffer");
    return wrap(e);
}

void Queue::launch(detail::KernelImpl& kernel, const Grid& grid, std::span<const detail::KernelArg> args) {
    auto& k = static_cast<Kernel&>(kernel);
    std::lock_guard lock(k.mutex);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        cl_int err = CL_SUCCESS;
        switch (a.kind) {
        case detail::KernelArg::Kind::buffer: {
            cl_mem m = mem(*a.buffer);
            err = clSetKernelArg(k.kernel(), cl_uint(i), sizeof m, &m);
            break;
        }
        case detail::KernelArg::Kind::scalar: err = clSetKernelArg(k.kernel(), cl_uint(i), a.size, a.value); break;
        case detail::KernelArg::Kind::local: err = clSetKernelArg(k.kernel(), cl_uint(i), a.size ? a.size : 1, nullptr); break;
        }
        if (err != CL_SUCCESS)
            fail(err, "clSetKernelArg",
                 fmt::format("argument {} of kernel '{}' ({} of {} bytes) does not fit the kernel's parameter", i, k.name,
                             a.kind == detail::KernelArg::Kind::buffer  ? "a buffer"
                             : a.kind == detail::KernelArg::Kind::local ? "local memory"
                                                                        : "a scalar",
                             a.size));
    }
    const std::size_t* local = grid.local.empty() ? nullptr : grid.local.size.data();
    const cl_int err =
        clEnqueueNDRangeKernel(queue(), k.kernel(), grid.global.dims, nullptr, grid.global.size.data(), local, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        fail(err, "clEnqueueNDRangeKernel",
             fmt::format("kernel '{}', global {}, local {}", k.name, grid.global.str(), grid.local.str()));
}

std::shared_ptr<detail::EventImpl> Queue::marker() {
    cl_event e = nullptr;
    check(clEnqueueMarkerWithWaitList(queue(), 0, nullptr, &e), "clEnqueueMarkerWithWaitList");
    return wrap(e);
}

void Queue::finish() { check(clFinish(queue()), "clFinish"); }

} // namespace xgpu::opencl
