// The CUDA backend: transfers, fills, markers and kernel launches on a stream.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "cuda.hpp"

namespace xgpu::cuda {
namespace {

using Dims = std::array<std::size_t, 3>;
using Arg = detail::KernelArg;

CUdeviceptr at(detail::BufferImpl& b, std::size_t offset) {
    return static_cast<Buffer&>(b).pointer + offset;
}

void check_copy(CUresult r, const char* call, std::size_t bytes) {
    if (r != CUDA_SUCCESS) fail(r, call, fmt::format("{} bytes", bytes));
}

// The shortest power-of-two period of a fill pattern: a zero double fills with cuMemsetD8.
std::size_t period(const unsigned char* pattern, std::size_t size) {
    while (size > 1 && std::memcmp(pattern, pattern + size / 2, size / 2) == 0)
        size /= 2;
    return size;
}

// The largest divisor of n no larger than `limit`, a multiple of `warp` where one exists.
std::size_t best_divisor(std::size_t n, std::size_t limit, std::size_t warp) {
    limit = std::min(limit, n);
    for (std::size_t b = limit / warp * warp; b >= warp; b -= warp)
        if (n % b == 0) return b;
    for (std::size_t b = limit; b > 1; --b)
        if (n % b == 0) return b;
    return 1;
}

// A block for a launch that gave no work-group size: up to 256 threads (fewer if the kernel's
// registers allow fewer), whole warps along x where the global size allows, then y, then z.
Dims choose_block(const Range& global, const Kernel& k, const Context& c) {
    std::size_t budget = std::min<std::size_t>(256, k.max_threads);
    Dims block{1, 1, 1};
    for (unsigned d = 0; d < global.dims; ++d) {
        block[d] = best_divisor(global[d], std::min(budget, c.max_block[d]), d == 0 ? 32 : 1);
        budget /= block[d];
    }
    return block;
}

std::string str(const Dims& d) {
    return fmt::format("{}x{}x{}", d[0], d[1], d[2]);
}

[[noreturn]] void bad_launch(const Kernel& k, const std::string& why) {
    throw InvalidArgument(fmt::format("xgpu[cuda]: launch of '{}': {}", k.name, why), {"cuda", "launch", 0, ""});
}

// The bytes the kernel's parameter receives for an argument: a device pointer, a scalar's value,
// or the 4-byte offset that XGPU_LOCAL_PARAM turns back into a pointer.
std::size_t passed_size(const Arg& a) {
    switch (a.kind) {
    case Arg::Kind::buffer: return sizeof(CUdeviceptr);
    case Arg::Kind::local: return sizeof(std::uint32_t);
    case Arg::Kind::sampled_image:
    case Arg::Kind::writable_image: return sizeof(ImageParam);
    default: return a.size;
    }
}

const char* describe(const Arg& a) {
    switch (a.kind) {
    case Arg::Kind::buffer: return "a buffer (a device pointer)";
    case Arg::Kind::local: return "local memory (an offset for XGPU_LOCAL_PARAM)";
    case Arg::Kind::sampled_image: return "a sampled image (struct xgpu_image, XGPU_IMAGE*D_PARAM)";
    case Arg::Kind::writable_image: return "a writable image (struct xgpu_image, XGPU_WIMAGE2D_PARAM)";
    default: return "a scalar";
    }
}

struct Geometry {
    Dims blocks, block;
};

// The CUDA grid for an OpenCL-style launch, checked against the device's and the kernel's limits.
Geometry geometry(const Grid& grid, const Kernel& k, const Context& c) {
    const Dims block = grid.local.empty() ? choose_block(grid.global, k, c) : grid.local.size;
    const Dims blocks{grid.global[0] / block[0], grid.global[1] / block[1], grid.global[2] / block[2]};
    for (unsigned d = 0; d < 3; ++d) {
        if (block[d] > c.max_block[d])
            bad_launch(k, fmt::format("the work-group size {} exceeds the device's largest block {} in dimension {}",
                                      str(block), str(c.max_block), d));
        if (blocks[d] > c.max_grid[d])
            bad_launch(k, fmt::format("{} work-groups of {} exceed the device's largest grid {} in dimension {}; use "
                                      "larger work-groups",
                                      str(blocks), str(block), str(c.max_grid), d));
    }
    if (block[0] * block[1] * block[2] > k.max_threads)
        bad_launch(k, fmt::format("the work-group size {} exceeds the {} threads per block this kernel can run with",
                                  str(block), k.max_threads));
    return {blocks, block};
}

} // namespace

Queue::Queue(std::shared_ptr<Context> ctx) : QueueImpl(ctx), owner(*ctx) {
    ctx->make_current();
    // Non-blocking: the stream does not wait for work on the legacy default stream of other code.
    check(api::cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

Queue::~Queue() {
    if (!owner.try_make_current()) return;
    api::cuStreamSynchronize(stream); // work still queued runs to its end first (a destructor cannot report)
    api::cuStreamDestroy(stream);
    if (staging_) api::cuMemFreeHost(staging_);
}

std::shared_ptr<detail::EventImpl> Queue::finish_op(bool blocking, bool want_event) {
    auto e = want_event ? std::make_shared<Event>(owner.self(), stream) : nullptr;
    if (blocking) check(api::cuStreamSynchronize(stream), "cuStreamSynchronize");
    return e;
}

// Transfers are always the Async calls on the queue's stream, so that they stay in order with the
// launches around them; a blocking one then waits for the stream.
std::shared_ptr<detail::EventImpl> Queue::write(detail::BufferImpl& dst, std::size_t offset, const void* src,
                                                std::size_t bytes, bool blocking, bool want_event) {
    owner.make_current();
    check_copy(api::cuMemcpyHtoDAsync(at(dst, offset), src, bytes, stream), "cuMemcpyHtoDAsync", bytes);
    return finish_op(blocking, want_event);
}

std::shared_ptr<detail::EventImpl> Queue::read(detail::BufferImpl& src, std::size_t offset, void* dst,
                                               std::size_t bytes, bool blocking, bool want_event) {
    owner.make_current();
    if (blocking && !want_event && bytes <= staging_bytes) {
        const std::lock_guard lock(staging_mutex_);
        if (!staging_) check(api::cuMemHostAlloc(&staging_, staging_bytes, 0), "cuMemHostAlloc");
        check_copy(api::cuMemcpyDtoHAsync(staging_, at(src, offset), bytes, stream), "cuMemcpyDtoHAsync", bytes);
        check(api::cuStreamSynchronize(stream), "cuStreamSynchronize");
        std::memcpy(dst, staging_, bytes);
        return nullptr;
    }
    check_copy(api::cuMemcpyDtoHAsync(dst, at(src, offset), bytes, stream), "cuMemcpyDtoHAsync", bytes);
    return finish_op(blocking, want_event);
}

std::shared_ptr<detail::EventImpl> Queue::copy(detail::BufferImpl& src, std::size_t src_offset, detail::BufferImpl& dst,
                                               std::size_t dst_offset, std::size_t bytes, bool want_event) {
    owner.make_current();
    check_copy(api::cuMemcpyDtoDAsync(at(dst, dst_offset), at(src, src_offset), bytes, stream), "cuMemcpyDtoDAsync",
               bytes);
    return finish_op(false, want_event);
}

std::shared_ptr<detail::EventImpl> Queue::fill(detail::BufferImpl& dst, std::size_t offset, const void* pattern,
                                               std::size_t pattern_size, std::size_t bytes) {
    owner.make_current();
    const auto* p = static_cast<const unsigned char*>(pattern);
    const std::size_t n = period(p, pattern_size);
    const CUdeviceptr d = at(dst, offset);
    std::uint16_t u16 = 0;
    std::uint32_t u32 = 0;
    switch (n) {
    case 1: check_copy(api::cuMemsetD8Async(d, p[0], bytes, stream), "cuMemsetD8Async", bytes); break;
    case 2:
        std::memcpy(&u16, p, 2);
        check_copy(api::cuMemsetD16Async(d, u16, bytes / 2, stream), "cuMemsetD16Async", bytes);
        break;
    case 4:
        std::memcpy(&u32, p, 4);
        check_copy(api::cuMemsetD32Async(d, u32, bytes / 4, stream), "cuMemsetD32Async", bytes);
        break;
    default:
        // 8 to 128 bytes: one strided 2-D memset per 32-bit word of the pattern, each writing its
        // word into every repetition (pitch = pattern size, one element per row).
        for (std::size_t w = 0; w < n / 4; ++w) {
            std::memcpy(&u32, p + 4 * w, 4);
            check_copy(api::cuMemsetD2D32Async(d + 4 * w, n, u32, 1, bytes / n, stream), "cuMemsetD2D32Async", bytes);
        }
    }
    return finish_op(false, true);
}

void Queue::launch(detail::KernelImpl& kernel, const Grid& grid, std::span<const Arg> args) {
    auto& k = static_cast<Kernel&>(kernel);
    const Geometry g = geometry(grid, k, owner);

    // Parameters point at their values: no heap allocation for up to 32 arguments.
    constexpr std::size_t inline_args = 32;
    std::array<void*, inline_args> inline_params;
    std::array<std::uint32_t, inline_args> inline_offsets;
    std::vector<void*> heap_params;
    std::vector<std::uint32_t> heap_offsets;
    void** params = inline_params.data();
    std::uint32_t* offsets = inline_offsets.data();
    if (args.size() > inline_args) {
        heap_params.resize(args.size());
        heap_offsets.resize(args.size());
        params = heap_params.data();
        offsets = heap_offsets.data();
    }
    std::size_t shared = 0;         // local-memory arguments share the one dynamic shared-memory block
    std::vector<ImageParam> images; // reserved once: parameters point into it
    for (std::size_t i = 0; i < args.size(); ++i) {
        const Arg& a = args[i];
        if (i < k.param_sizes.size() && passed_size(a) != k.param_sizes[i])
            throw DTypeError(fmt::format("xgpu[cuda]: launch of '{}': argument {} is {} of {} bytes, but the kernel's "
                                         "parameter {} has {} bytes",
                                         k.name, i, describe(a), passed_size(a), i, k.param_sizes[i]),
                             {"cuda", "launch", 0, ""});
        switch (a.kind) {
        case Arg::Kind::buffer: params[i] = &static_cast<Buffer*>(a.buffer)->pointer; break;
        case Arg::Kind::scalar: params[i] = const_cast<void*>(a.data()); break; // the driver only reads it
        case Arg::Kind::local:
            offsets[i] = std::uint32_t(shared);
            shared += (a.size + 15) / 16 * 16; // each parameter 16-byte aligned, like the block itself
            params[i] = &offsets[i];
            break;
        case Arg::Kind::sampled_image:
        case Arg::Kind::writable_image: {
            if (images.empty()) images.reserve(args.size());
            auto& im = static_cast<Image&>(*a.image);
            const bool sampled = a.kind == Arg::Kind::sampled_image;
            const Sampler s = Sampler::from_key(unsigned(a.size));
            ImageParam& p = images.emplace_back();
            p.texture = sampled ? im.texture(unsigned(a.size)) : 0;
            p.surface = sampled ? 0 : im.surface();
            p.width = int(im.extent[0]);
            p.height = int(im.extent[1]);
            p.depth = int(im.extent[2]);
            p.format = unsigned(im.format.type) | im.format.channels << 4 | unsigned(im.format.normalized) << 8 |
                       unsigned(sampled && s.normalized_coords()) << 9;
            params[i] = &p;
            break;
        }
        }
    }
    owner.make_current();
    k.allow_shared_memory(shared);
    const CUresult r = api::cuLaunchKernel(k.function, unsigned(g.blocks[0]), unsigned(g.blocks[1]),
                                           unsigned(g.blocks[2]), unsigned(g.block[0]), unsigned(g.block[1]),
                                           unsigned(g.block[2]), unsigned(shared), stream, params, nullptr);
    if (r != CUDA_SUCCESS)
        fail(r, "cuLaunchKernel",
             fmt::format("kernel '{}', {} blocks of {} threads, {} bytes of local memory", k.name, str(g.blocks),
                         str(g.block), shared),
             Kind::launch);
}

std::shared_ptr<detail::EventImpl> Queue::marker() {
    return std::make_shared<Event>(owner.self(), stream);
}

void Queue::finish() {
    owner.make_current();
    check(api::cuStreamSynchronize(stream), "cuStreamSynchronize");
}

} // namespace xgpu::cuda
