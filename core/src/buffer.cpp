#include "xgpu/buffer.hpp"

#include "xgpu/context.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/detail/dynamic.hpp"
#include "xgpu/error.hpp"

namespace xgpu {

std::size_t Buffer::size() const {
    return impl_ ? impl_->size : 0;
}

std::uint64_t Buffer::device_address() const {
    return impl_ ? impl_->device_address() : 0;
}

namespace detail {

Buffer adopt_device_memory(const Context& ctx, std::uint64_t address, std::size_t bytes, std::shared_ptr<void> owner) {
    if (!ctx.impl()) throw InvalidArgument("xgpu: adopt_device_memory: an empty context");
    if (!owner)
        throw InvalidArgument("xgpu: adopt_device_memory: no owner: the memory stays with whoever the owner's "
                              "release hands it back to, so an owner is required");
    if (bytes && !address)
        throw InvalidArgument("xgpu: adopt_device_memory: a null address for " + std::to_string(bytes) + " bytes");
    auto impl = ctx.impl()->adopt(address, bytes, std::move(owner));
    if (!impl)
        throw InvalidArgument("xgpu: " + ctx.backend() +
                              " buffers have no device addresses: memory another library allocated can be "
                              "taken on the CUDA backend only");
    return Buffer(std::move(impl));
}

} // namespace detail

} // namespace xgpu
