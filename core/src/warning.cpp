#include "xgpu/warning.hpp"

#include <cstdio>
#include <mutex>

namespace xgpu {
namespace {
std::mutex handler_mutex;
WarningHandler handler;
} // namespace

WarningHandler set_warning_handler(WarningHandler h) {
    std::lock_guard lock(handler_mutex);
    std::swap(handler, h);
    return h;
}

namespace detail {
void warn(const std::string& message) {
    std::lock_guard lock(handler_mutex);
    if (handler)
        handler(message);
    else
        std::fprintf(stderr, "xgpu: warning: %s\n", message.c_str());
}
} // namespace detail

} // namespace xgpu
