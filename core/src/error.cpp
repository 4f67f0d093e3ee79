#include "xgpu/error.hpp"

namespace xgpu {

Error::Error(const std::string& what, Origin origin) : std::runtime_error(what), origin_(std::move(origin)) {}

CompileError::CompileError(const std::string& what, Origin origin, std::string log, std::vector<std::string> options,
                           std::string source)
    : Error(what, std::move(origin)), log_(std::move(log)), options_(std::move(options)), source_(std::move(source)) {}

} // namespace xgpu
