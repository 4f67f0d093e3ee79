// Expression nodes for callers that know their operands' types only at run time (the Python
// module): the result type comes from the table of operations, as the expression templates of
// xgpu/expr.hpp compute it at compile time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xgpu/expr.hpp"

namespace xgpu::detail {

// `fn` ("add", "sin", "where", ...) of one, two or three operands; throws InvalidArgument for an
// unknown name or a wrong number of operands.
NodePtr op_node_auto(std::string_view fn, NodePtr a, NodePtr b = nullptr, NodePtr c = nullptr);

// The parameters of a user kernel's argument declarations ("float a, const double* x", as
// ElementwiseKernel and ReductionKernel take them): each one's name, whether it is an array, and
// its element or scalar type (none for an image). Throws InvalidArgument as those kernels do.
struct DeclaredArgument {
    std::string name;
    bool array = false;
    std::optional<DType> dtype;
};
std::vector<DeclaredArgument> declared_arguments(const std::string& declarations);

// A buffer over device memory another library allocated on `ctx`'s device (DLPack's import):
// `bytes` at `address`, kept alive by `owner` (released from whichever thread drops the last
// handle) and never freed by xgpu; `owner` must not be empty. The device's work enqueued so far
// completes first, and again before the owner is released. Throws InvalidArgument where the
// backend's buffers have no addresses (OpenCL).
Buffer adopt_device_memory(const Context& ctx, std::uint64_t address, std::size_t bytes, std::shared_ptr<void> owner);

} // namespace xgpu::detail
