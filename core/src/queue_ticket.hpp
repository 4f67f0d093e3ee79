// The queue's group-ticket counter (kernels/reduction.kernel, DeviceInfo::group_ticket): one
// unsigned int, zero between launches, made on first use and kept with the queue.
#pragma once

#include "xgpu/buffer.hpp"
#include "xgpu/queue.hpp"

namespace xgpu::detail {
Buffer group_ticket(const Queue& queue);
} // namespace xgpu::detail
