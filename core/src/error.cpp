#include "xgpu/error.hpp"

#include <fmt/format.h>

#include "xgpu/detail/backend.hpp"

namespace xgpu {

Error::Error(const std::string& what, Origin origin) : std::runtime_error(what), origin_(std::move(origin)) {}

CompileError::CompileError(const std::string& what, Origin origin, std::string log, std::vector<std::string> options,
                           std::string source)
    : Error(what, std::move(origin)), log_(std::move(log)), options_(std::move(options)), source_(std::move(source)) {}

namespace detail {

std::string join_options(const std::vector<std::string>& options) {
    std::string s;
    for (const auto& o : options)
        s += (s.empty() ? "" : " ") + o;
    return s;
}

void throw_compile_error(const std::string& backend, const std::string& what, const char* call, long long code,
                         const std::string& code_name, const std::string& log, const std::vector<std::string>& used,
                         const std::vector<std::string>& options, const std::string& source) {
    throw CompileError(fmt::format("xgpu[{}]: {} failed: {} ({})\noptions: {}{}{}", backend, what, code_name, code,
                                   join_options(used), log.empty() ? "" : "\n", log),
                       {backend, call, code, code_name}, log, options, source);
}

} // namespace detail
} // namespace xgpu
