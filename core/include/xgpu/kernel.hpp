// xgpu programs and kernels: source compiled at run time, kernels looked up by name and launched
// with buffers, typed scalars and local-memory sizes.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "xgpu/buffer.hpp"
#include "xgpu/grid.hpp"

namespace xgpu {

class Queue;
struct SampledImage;  // xgpu/image.hpp
struct WritableImage; // xgpu/image.hpp
namespace detail {
class KernelImpl;
class ProgramImpl;
class BufferImpl;
class ImageImpl;

// One kernel argument as the backends see it. A scalar of up to 16 bytes travels by value, so a
// caller keeps nothing alive for it; a larger one points at the caller's value, which must outlive
// the launch call (the backends copy argument values before returning). An image argument
// (xgpu/image.hpp) is `image` read through the sampler whose Sampler::key() is `size`
// (sampled_image), or written (writable_image); the caller keeps the image alive.
struct KernelArg {
    enum class Kind : unsigned char { buffer, scalar, local, sampled_image, writable_image };
    static constexpr std::size_t inline_bytes = 16;
    Kind kind;
    std::size_t size;                                // scalar size, local-memory bytes, or sampler key
    const void* value = nullptr;                     // a scalar larger than inline_bytes
    BufferImpl* buffer = nullptr;                    // buffer argument
    alignas(16) unsigned char bytes[inline_bytes]{}; // a scalar of up to inline_bytes
    ImageImpl* image = nullptr;                      // image argument

    // The scalar's bytes.
    const void* data() const { return value ? value : bytes; }
    // A scalar of `n` bytes at `p`, copied when it fits.
    static KernelArg scalar(const void* p, std::size_t n) {
        KernelArg a{Kind::scalar, n};
        if (n <= inline_bytes)
            std::memcpy(a.bytes, p, n);
        else
            a.value = p;
        return a;
    }
};

inline KernelArg make_arg(const Buffer& b) {
    return {KernelArg::Kind::buffer, sizeof(void*), nullptr, b.impl().get()};
}
inline KernelArg make_arg(const Local& l) {
    return {KernelArg::Kind::local, l.bytes, nullptr, nullptr};
}
KernelArg make_arg(const SampledImage& s); // core/src/image.cpp
KernelArg make_arg(const WritableImage& w);
template <class T> KernelArg make_arg(const T& v) {
    static_assert(!std::is_pointer_v<T>, "a host pointer cannot be a kernel argument: pass an xgpu::Buffer");
    static_assert(!std::is_same_v<T, bool>, "bool kernel arguments differ between backends: pass an int");
    static_assert(std::is_trivially_copyable_v<T>, "kernel scalars must be trivially copyable");
    return KernelArg::scalar(&v, sizeof(T));
}

// A launch argument that stands for several kernel parameters (an Array: its buffer and its
// offset) declares how many and writes them:
//   static constexpr std::size_t kernel_params = N;
//   void kernel_args(KernelArg* out) const;
template <class T>
concept MultiParam = requires(const T& v, KernelArg* out) {
    { T::kernel_params } -> std::convertible_to<std::size_t>;
    v.kernel_args(out);
};
template <class T> constexpr std::size_t param_count() {
    if constexpr (MultiParam<T>)
        return T::kernel_params;
    else
        return 1;
}
template <class T> KernelArg* put_arg(KernelArg* out, const T& v) {
    if constexpr (MultiParam<T>) {
        v.kernel_args(out);
        return out + T::kernel_params;
    } else {
        *out = make_arg(v);
        return out + 1;
    }
}
} // namespace detail

class Kernel {
public:
    Kernel() = default;
    explicit Kernel(std::shared_ptr<detail::KernelImpl> impl) : impl_(std::move(impl)) {}

    const std::string& name() const;
    // Number of parameters the kernel declares, or -1 where the backend cannot tell.
    int num_args() const;
    // The most work-items a work-group of this kernel may hold on its device: the device's limit
    // lowered by what the compiled kernel needs (registers, local memory), as CUDA's max threads
    // per block and OpenCL's CL_KERNEL_WORK_GROUP_SIZE report it (PyCUDA's
    // Function.max_threads_per_block, PyOpenCL's get_work_group_info(WORK_GROUP_SIZE)); launches
    // with larger work-groups throw InvalidArgument before anything is enqueued. 0 where the
    // driver cannot tell.
    std::size_t max_group_size() const;

    // Enqueues the kernel over `grid` with the given arguments (Buffer, Local, scalars, images:
    // Image::sampled, Image::writable; an Array<T> fills two parameters, its buffer and its offset
    // in elements as a 64-bit integer: `global T* p, long p_offset` in OpenCL C, `T* p, long long
    // p_offset` in CUDA). Arguments are checked (count, buffer context, geometry) before anything
    // is enqueued.
    template <class... Args> void launch(const Queue& queue, const Grid& grid, const Args&... args) const {
        std::array<detail::KernelArg, (detail::param_count<Args>() + ... + 0)> packed{};
        [[maybe_unused]] detail::KernelArg* out = packed.data();
        ((out = detail::put_arg(out, args)), ...);
        launch_args(queue, grid, packed);
    }
    void launch_args(const Queue& queue, const Grid& grid, std::span<const detail::KernelArg> args) const;

    const std::shared_ptr<detail::KernelImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::KernelImpl> impl_;
};

// Where a Program came from: a fresh compile, the on-disk cache, or the context's memory cache.
enum class ProgramOrigin { compiled, disk_cache, memory_cache };

class Program {
public:
    Program() = default;
    Program(std::shared_ptr<detail::ProgramImpl> impl, ProgramOrigin origin)
        : impl_(std::move(impl)), origin_(origin) {}

    // Looks a kernel up by name (cached: a second lookup returns the same kernel object).
    // An unknown name throws InvalidArgument listing the kernels the program has.
    Kernel kernel(std::string_view name) const;
    std::vector<std::string> kernel_names() const;
    ProgramOrigin origin() const { return origin_; }
    // The compiler's log from the build (empty when loaded from a cache).
    const std::string& build_log() const;

    const std::shared_ptr<detail::ProgramImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::ProgramImpl> impl_;
    ProgramOrigin origin_ = ProgramOrigin::compiled;
};

} // namespace xgpu
