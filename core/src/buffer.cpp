#include "xgpu/buffer.hpp"

#include "xgpu/detail/backend.hpp"

namespace xgpu {

std::size_t Buffer::size() const {
    return impl_ ? impl_->size : 0;
}

std::uint64_t Buffer::device_address() const {
    return impl_ ? impl_->device_address() : 0;
}

} // namespace xgpu
