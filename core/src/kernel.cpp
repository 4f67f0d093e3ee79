// Programs and kernels: lookup by name (cached) and launch with checked arguments.
#include "xgpu/kernel.hpp"

#include <fmt/format.h>

#include "profile.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"
#include "xgpu/queue.hpp"

namespace xgpu {

Kernel Program::kernel(std::string_view name) const {
    if (!impl_) throw InvalidArgument("xgpu: kernel lookup on an empty Program");
    std::lock_guard lock(impl_->mutex);
    const std::string key(name);
    if (auto it = impl_->kernels.find(key); it != impl_->kernels.end()) return Kernel(it->second);
    auto k = impl_->create_kernel(key);
    if (!k) {
        std::string names;
        for (const auto& n : impl_->kernel_names())
            names += (names.empty() ? "" : ", ") + n;
        throw InvalidArgument(fmt::format("xgpu: the program has no kernel named '{}'; it has: {}", name,
                                          names.empty() ? "(none)" : names),
                              {impl_->context ? impl_->context->device().backend() : "", "kernel lookup", 0, ""});
    }
    k->context = impl_->context.get();
    impl_->kernels.emplace(key, k);
    return Kernel(std::move(k));
}

std::vector<std::string> Program::kernel_names() const {
    return impl_ ? impl_->kernel_names() : std::vector<std::string>{};
}

const std::string& Program::build_log() const {
    static const std::string none;
    return impl_ ? impl_->build_log : none;
}

const std::string& Kernel::name() const {
    static const std::string none;
    return impl_ ? impl_->name : none;
}

int Kernel::num_args() const {
    return impl_ ? impl_->num_args() : -1;
}

std::size_t Kernel::max_group_size() const {
    return impl_ ? impl_->max_group_size() : 0;
}

namespace {

void check_grid(const std::string& kernel, const Grid& grid, const DeviceInfo& dev) {
    const Range& g = grid.global;
    const Range& l = grid.local;
    if (g.dims < 1 || g.dims > 3)
        throw InvalidArgument(fmt::format("xgpu: launch of '{}': the global range is empty", kernel));
    std::size_t total = 1;
    for (unsigned d = 0; d < g.dims; ++d)
        if (__builtin_mul_overflow(total, g[d], &total))
            throw InvalidArgument(fmt::format(
                "xgpu: launch of '{}': the global range {} has more work-items than 64 bits count", kernel, g.str()));
    if (l.empty()) return;
    if (l.dims != g.dims)
        throw InvalidArgument(fmt::format(
            "xgpu: launch of '{}': local range {} and global range {} differ in dimensions", kernel, l.str(), g.str()));
    for (unsigned d = 0; d < g.dims; ++d)
        if (l[d] == 0 || g[d] % l[d] != 0)
            throw InvalidArgument(
                fmt::format("xgpu: launch of '{}': the global range {} is not a multiple of the work-group size {}",
                            kernel, g.str(), l.str()));
    if (dev.max_work_group_size && l.total() > dev.max_work_group_size)
        throw InvalidArgument(
            fmt::format("xgpu: launch of '{}': work-group size {} ({} work-items) exceeds the device's "
                        "maximum of {}",
                        kernel, l.str(), l.total(), dev.max_work_group_size));
}

} // namespace

void Kernel::launch_args(const Queue& queue, const Grid& grid, std::span<const detail::KernelArg> args) const {
    if (!impl_) throw InvalidArgument("xgpu: launch of an empty Kernel");
    if (!queue.impl()) throw InvalidArgument(fmt::format("xgpu: launch of '{}' on an empty Queue", impl_->name));
    auto& q = *queue.impl();
    const auto& dev = q.context->device().info();
    if (impl_->context && impl_->context != q.context.get())
        throw InvalidArgument(
            fmt::format("xgpu: kernel '{}' was built for another context than the queue's", impl_->name));
    const int expected = impl_->num_args();
    // A sampled image fills two parameters on OpenCL (image and sampler).
    const unsigned per_image = q.context->sampled_image_params();
    std::size_t params = 0, images = 0, written = 0;
    for (const auto& a : args) {
        const bool sampled = a.kind == detail::KernelArg::Kind::sampled_image;
        params += sampled ? per_image : 1;
        images += sampled;
        written += a.kind == detail::KernelArg::Kind::writable_image;
    }
    // OpenCL's per-kernel limits (CUDA sets none: 0).
    const auto& lim = dev.images;
    if ((lim.max_read_images && images > lim.max_read_images) || (lim.max_samplers && images > lim.max_samplers) ||
        (lim.max_write_images && written > lim.max_write_images))
        throw InvalidArgument(fmt::format("xgpu: launch of '{}': {} sampled and {} writable images; the device takes "
                                          "at most {} read images, {} samplers and {} written images per kernel",
                                          impl_->name, images, written, lim.max_read_images, lim.max_samplers,
                                          lim.max_write_images),
                              {dev.backend, "launch", 0, ""});
    if (expected >= 0 && std::size_t(expected) != params)
        throw InvalidArgument(
            images && per_image != 1
                ? fmt::format("xgpu: kernel '{}' declares {} parameters, but {} arguments fill {} (each of the {} "
                              "sampled images fills {}: XGPU_IMAGE*D_PARAM declares image and sampler)",
                              impl_->name, expected, args.size(), params, images, per_image)
                : fmt::format("xgpu: kernel '{}' takes {} argument{}, but {} were given", impl_->name, expected,
                              expected == 1 ? "" : "s", args.size()),
            {dev.backend, "launch", 0, ""});
    std::size_t local_bytes = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        if (a.kind == detail::KernelArg::Kind::sampled_image || a.kind == detail::KernelArg::Kind::writable_image) {
            if (!a.image)
                throw InvalidArgument(
                    fmt::format("xgpu: launch of '{}': argument {} is an empty Image", impl_->name, i));
            if (a.image->context != q.context)
                throw InvalidArgument(
                    fmt::format("xgpu: launch of '{}': argument {} is an image of another context", impl_->name, i));
        } else if (a.kind == detail::KernelArg::Kind::buffer) {
            if (!a.buffer)
                throw InvalidArgument(
                    fmt::format("xgpu: launch of '{}': argument {} is an empty Buffer", impl_->name, i));
            if (a.buffer->context != q.context)
                throw InvalidArgument(
                    fmt::format("xgpu: launch of '{}': argument {} is a buffer of another context", impl_->name, i));
        } else if (a.kind == detail::KernelArg::Kind::local) {
            local_bytes += (a.size + 15) / 16 * 16;
        }
    }
    if (dev.local_memory && local_bytes > dev.local_memory)
        throw InvalidArgument(fmt::format("xgpu: launch of '{}': {} bytes of local memory requested, the device has {}",
                                          impl_->name, local_bytes, dev.local_memory));
    check_grid(impl_->name, grid, dev);
    if (const std::size_t most = impl_->max_group_size(); most && !grid.local.empty() && grid.local.total() > most)
        throw InvalidArgument(
            fmt::format("xgpu: launch of '{}': work-group size {} ({} work-items) exceeds this kernel's maximum of {} "
                        "on {} (the device allows {}; the compiled kernel's registers or local memory lower it)",
                        impl_->name, grid.local.str(), grid.local.total(), most, q.context->device().name(),
                        dev.max_work_group_size),
            {dev.backend, "launch", 0, ""});
    if (grid.global.total() == 0) return; // nothing to run
    for (const auto& a : args) {
        if (a.kind == detail::KernelArg::Kind::buffer) detail::record_use(*a.buffer, queue.impl());
        if (a.kind == detail::KernelArg::Kind::sampled_image && a.image->viewed)
            detail::record_use(*a.image->viewed, queue.impl());
    }
    if (detail::profiling()) {
        auto before = q.marker();
        q.launch(*impl_, grid, args);
        detail::profile_launch(impl_->name, queue.impl(), std::move(before), q.marker());
    } else {
        q.launch(*impl_, grid, args);
    }
    q.context->launches.fetch_add(1, std::memory_order_relaxed);
}

} // namespace xgpu
