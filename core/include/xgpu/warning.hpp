// xgpu warnings: conditions that cost something but are not errors (an unwritable compile
// cache, say). By default they go to stderr once each; a program may route them elsewhere.
#pragma once

#include <functional>
#include <string>

namespace xgpu {

using WarningHandler = std::function<void(const std::string&)>;

// Replaces the warning handler and returns the previous one. An empty handler restores stderr.
WarningHandler set_warning_handler(WarningHandler handler);

namespace detail {
void warn(const std::string& message);
}

} // namespace xgpu
