// XGPU_PROFILE=1: every launch is bracketed by markers; at exit a table of kernels (launches,
// total and mean device time) goes to stderr. Off by default, and then free.
#pragma once

#include <memory>
#include <string>

#include "xgpu/detail/backend.hpp"

namespace xgpu::detail {

bool profiling();
// Records one launch of `kernel` on `queue` between the markers before and after it.
void profile_launch(const std::string& kernel, std::shared_ptr<QueueImpl> queue, std::shared_ptr<EventImpl> before,
                    std::shared_ptr<EventImpl> after);

} // namespace xgpu::detail
