// xgpu buffers: a block of device memory owned by one context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace xgpu {

namespace detail {
class BufferImpl;
}

class Buffer {
public:
    Buffer() = default;
    explicit Buffer(std::shared_ptr<detail::BufferImpl> impl) : impl_(std::move(impl)) {}

    // Size in bytes (0 for an empty handle).
    std::size_t size() const;
    // The memory's address in the device's address space where the backend has one (CUDA's
    // CUdeviceptr), else 0 (OpenCL buffers are opaque objects, as is an empty handle): what a
    // library that takes device pointers, such as a CUDA-aware MPI, is handed.
    std::uint64_t device_address() const;

    explicit operator bool() const { return impl_ != nullptr; }
    friend bool operator==(const Buffer& a, const Buffer& b) { return a.impl_ == b.impl_; }
    const std::shared_ptr<detail::BufferImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::BufferImpl> impl_;
};

// Page-locked host memory: copies from and to it run truly asynchronously.
class HostBuffer {
public:
    HostBuffer() = default;
    HostBuffer(std::shared_ptr<void> memory, std::size_t bytes) : mem_(std::move(memory)), bytes_(bytes) {}

    void* data() const { return mem_.get(); }
    std::size_t size() const { return bytes_; }
    template <class T> T* as() const { return static_cast<T*>(mem_.get()); }

private:
    std::shared_ptr<void> mem_;
    std::size_t bytes_ = 0;
};

} // namespace xgpu
