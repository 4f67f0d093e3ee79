// The OpenCL backend: transfers, fills, markers and kernel launches on a command queue.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {
namespace {

cl_mem mem(detail::BufferImpl& b) {
    return static_cast<Buffer&>(b).memory();
}

std::shared_ptr<detail::EventImpl> wrap(cl_event e) {
    return e ? std::make_shared<Event>(e) : nullptr;
}

std::shared_lock<std::shared_mutex> gate(const std::shared_ptr<detail::ContextImpl>& ctx) {
    return static_cast<Context&>(*ctx).enqueue_gate();
}

// Whether the `n` bytes at `a` and `b` are equal: the common sizes (a cl_mem, a 32- or 64-bit
// scalar) compared inline, without a call to memcmp.
bool same(const unsigned char* a, const void* b, std::size_t n) {
    if (n == 8) {
        std::uint64_t x, y;
        std::memcpy(&x, a, 8);
        std::memcpy(&y, b, 8);
        return x == y;
    }
    if (n == 4) {
        std::uint32_t x, y;
        std::memcpy(&x, a, 4);
        std::memcpy(&y, b, 4);
        return x == y;
    }
    return std::memcmp(a, b, n) == 0;
}

} // namespace

// Transfers and fills go in pieces of at most 1 GiB: NVIDIA's OpenCL fails (error -9999) on
// single commands past 2 GiB. The queue is in order, so only the last piece blocks or gives the
// event, and it completes after the others.
namespace {
constexpr std::size_t piece = std::size_t(1) << 30;

template <class Enqueue>
std::shared_ptr<detail::EventImpl> in_pieces(std::size_t bytes, std::size_t align, bool blocking, bool want_event,
                                             Enqueue&& enqueue) {
    const std::size_t step = piece / align * align;
    cl_event e = nullptr;
    for (std::size_t done = 0; done < bytes; done += step) {
        const std::size_t n = std::min(step, bytes - done);
        const bool last = done + n == bytes;
        enqueue(done, n, last && blocking, last && want_event ? &e : nullptr);
    }
    return wrap(e);
}
} // namespace

std::shared_ptr<detail::EventImpl> Queue::write(detail::BufferImpl& dst, std::size_t offset, const void* src,
                                                std::size_t bytes, bool blocking, bool want_event) {
    const auto in_gate = gate(context);
    return in_pieces(bytes, 1, blocking, want_event, [&](std::size_t at, std::size_t n, bool block, cl_event* e) {
        check(clEnqueueWriteBuffer(queue(), mem(dst), block ? CL_TRUE : CL_FALSE, offset + at, n,
                                   static_cast<const char*>(src) + at, 0, nullptr, e),
              "clEnqueueWriteBuffer");
    });
}

bool Queue::read_staged(detail::BufferImpl& src, std::size_t offset, void* dst, std::size_t bytes) {
    auto& ctx = static_cast<Context&>(*context);
    if (bytes > staging_bytes || ctx.device().info().type == DeviceType::cpu) return false;
    const std::lock_guard lock(staging_mutex_);
    if (!staging_) {
        cl_int err = CL_SUCCESS;
        cl_mem m =
            clCreateBuffer(ctx.context(), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, staging_bytes, nullptr, &err);
        if (err != CL_SUCCESS) return false; // the plain read still works
        void* p = clEnqueueMapBuffer(queue(), m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, staging_bytes, 0, nullptr,
                                     nullptr, &err);
        if (err != CL_SUCCESS) {
            clReleaseMemObject(m);
            return false;
        }
        staging_ = m;
        staging_ptr_ = p;
    }
    check(clEnqueueReadBuffer(queue(), mem(src), CL_TRUE, offset, bytes, staging_ptr_, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    std::memcpy(dst, staging_ptr_, bytes);
    return true;
}

std::shared_ptr<detail::EventImpl> Queue::read(detail::BufferImpl& src, std::size_t offset, void* dst,
                                               std::size_t bytes, bool blocking, bool want_event) {
    const auto in_gate = gate(context);
    if (blocking && !want_event && read_staged(src, offset, dst, bytes)) return nullptr;
    return in_pieces(bytes, 1, blocking, want_event, [&](std::size_t at, std::size_t n, bool block, cl_event* e) {
        check(clEnqueueReadBuffer(queue(), mem(src), block ? CL_TRUE : CL_FALSE, offset + at, n,
                                  static_cast<char*>(dst) + at, 0, nullptr, e),
              "clEnqueueReadBuffer");
    });
}

std::shared_ptr<detail::EventImpl> Queue::copy(detail::BufferImpl& src, std::size_t src_offset, detail::BufferImpl& dst,
                                               std::size_t dst_offset, std::size_t bytes, bool want_event) {
    const auto in_gate = gate(context);
    return in_pieces(bytes, 1, false, want_event, [&](std::size_t at, std::size_t n, bool, cl_event* e) {
        check(clEnqueueCopyBuffer(queue(), mem(src), mem(dst), src_offset + at, dst_offset + at, n, 0, nullptr, e),
              "clEnqueueCopyBuffer");
    });
}

std::shared_ptr<detail::EventImpl> Queue::fill(detail::BufferImpl& dst, std::size_t offset, const void* pattern,
                                               std::size_t pattern_size, std::size_t bytes) {
    const auto in_gate = gate(context);
    auto& ctx = static_cast<Context&>(*context);
    if (ctx.fill_needs_kernel(offset + bytes)) {
        cl_kernel k = ctx.fill_kernel();
        std::lock_guard lock(fill_mutex_);
        unsigned char pat[128] = {};
        std::memcpy(pat, pattern, pattern_size);
        const cl_uint size = cl_uint(pattern_size);
        cl_mem m = mem(dst);
        check(clSetKernelArg(k, 0, sizeof m, &m), "clSetKernelArg");
        check(clSetKernelArg(k, 3, sizeof pat, pat), "clSetKernelArg");
        check(clSetKernelArg(k, 4, sizeof size, &size), "clSetKernelArg");
        return in_pieces(bytes, pattern_size, false, true, [&](std::size_t at, std::size_t len, bool, cl_event* e) {
            const cl_ulong off = offset + at, n = len;
            check(clSetKernelArg(k, 1, sizeof off, &off), "clSetKernelArg");
            check(clSetKernelArg(k, 2, sizeof n, &n), "clSetKernelArg");
            const std::size_t global = (len + 255) / 256 * 256, local = 256;
            check(clEnqueueNDRangeKernel(queue(), k, 1, nullptr, &global, &local, 0, nullptr, e),
                  "clEnqueueNDRangeKernel", "xgpu_fill");
        });
    }
    return in_pieces(bytes, pattern_size, false, true, [&](std::size_t at, std::size_t n, bool, cl_event* e) {
        check(clEnqueueFillBuffer(queue(), mem(dst), pattern, pattern_size, offset + at, n, 0, nullptr, e),
              "clEnqueueFillBuffer");
    });
}

void Queue::launch(detail::KernelImpl& kernel, const Grid& grid, std::span<const detail::KernelArg> args) {
    const auto in_gate = gate(context);
    auto& k = static_cast<Kernel&>(kernel);
    k.check_args(args); // before any argument is set
    std::lock_guard lock(k.mutex);
    auto& ctx = static_cast<Context&>(*context);
    // Sets parameter `p` unless the kernel holds the same value there already.
    const auto set = [&](std::size_t p, const detail::KernelArg& a, std::size_t size, const void* value) {
        if (k.last.size() <= p) k.last.resize(p + 1);
        auto& prev = k.last[p];
        const bool cacheable = size <= sizeof prev.bytes;
        if (prev.valid && cacheable && prev.kind == a.kind && prev.size == size &&
            (!value || same(prev.bytes, value, size)))
            return;
        prev.valid = false;
        const cl_int err = clSetKernelArg(k.kernel(), cl_uint(p), size, value);
        if (err != CL_SUCCESS)
            fail(err, "clSetKernelArg",
                 fmt::format("parameter {} of kernel '{}' ({} of {} bytes) does not fit the kernel's parameter", p,
                             k.name,
                             a.kind == detail::KernelArg::Kind::buffer          ? "a buffer"
                             : a.kind == detail::KernelArg::Kind::local         ? "local memory"
                             : a.kind == detail::KernelArg::Kind::scalar        ? "a scalar"
                             : a.kind == detail::KernelArg::Kind::sampled_image ? "a sampled image"
                                                                                : "a writable image",
                             size));
        if (cacheable) {
            prev = {true, a.kind, size, {}};
            if (value) std::memcpy(prev.bytes, value, size);
        }
    };
    std::size_t p = 0;
    for (const auto& a : args) {
        switch (a.kind) {
        case detail::KernelArg::Kind::buffer: {
            const cl_mem m = mem(*a.buffer);
            set(p++, a, sizeof m, &m);
            break;
        }
        case detail::KernelArg::Kind::local: set(p++, a, a.size ? a.size : 1, nullptr); break;
        case detail::KernelArg::Kind::scalar: set(p++, a, a.size, a.data()); break;
        case detail::KernelArg::Kind::sampled_image: {
            const cl_mem m = static_cast<Image&>(*a.image).memory;
            const cl_sampler s = ctx.sampler(unsigned(a.size));
            set(p++, a, sizeof m, &m);
            set(p++, a, sizeof s, &s);
            break;
        }
        case detail::KernelArg::Kind::writable_image: {
            const cl_mem m = static_cast<Image&>(*a.image).memory;
            set(p++, a, sizeof m, &m);
            break;
        }
        }
    }
    const std::size_t* local = grid.local.empty() ? nullptr : grid.local.size.data();
    const cl_int err = clEnqueueNDRangeKernel(queue(), k.kernel(), grid.global.dims, nullptr, grid.global.size.data(),
                                              local, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        fail(err, "clEnqueueNDRangeKernel",
             fmt::format("kernel '{}', global {}, local {}", k.name, grid.global.str(), grid.local.str()));
}

std::shared_ptr<detail::EventImpl> Queue::marker() {
    const auto in_gate = gate(context);
    cl_event e = nullptr;
    check(clEnqueueMarkerWithWaitList(queue(), 0, nullptr, &e), "clEnqueueMarkerWithWaitList");
    return wrap(e);
}

Queue::~Queue() {
    clFinish(queue()); // work still queued runs to its end before the queue goes (a destructor cannot report)
    if (staging_) {
        clEnqueueUnmapMemObject(queue(), staging_, staging_ptr_, 0, nullptr, nullptr);
        clFinish(queue());
        clReleaseMemObject(staging_);
    }
}

void Queue::finish() {
    check(clFinish(queue()), "clFinish");
}

} // namespace xgpu::opencl
