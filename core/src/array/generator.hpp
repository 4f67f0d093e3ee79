// The code generator of array expressions, for the kernels built on it (elementwise assignment
// in expression.cpp, reductions): the value of an expression at element `i` of a shape.
#pragma once

#include <string>
#include <vector>

#include "../codegen/operations.hpp"
#include "xgpu/array.hpp"
#include "xgpu/kernel.hpp"

namespace xgpu::detail {

// The type's name in kernel code (the complex ones are the xgpu_cfloat/xgpu_cdouble structs).
inline const char* dev(DType t) {
    return codegen::device_type(t);
}

struct MapCode {
    std::string key;    // structural key (types, operations, operand layouts)
    std::string params; // kernel parameter declarations for the operands, comma separated
    std::string body;   // statements computing the value from `i` (uint64_t, C order over the shape)
    std::string result; // the variable that holds the value
    DType type;
};

// `shape` is the (broadcast) shape over which `i` counts; arrays in `expr` broadcast to it.
// map_key is the key alone, cheap enough for every launch; map_code makes the code too.
std::string map_key(const Node& expr, const Context& ctx, const Shape& shape);
MapCode map_code(const Node& expr, const Context& ctx, const Shape& shape);
// The kernel arguments for map_code's parameters, in order.
void map_arguments(const Node& expr, const Context& ctx, const Shape& shape, std::vector<KernelArg>& args);
// `value` of type `from` as type `to`, in kernel code.
std::string convert_code(const std::string& value, DType from, DType to);

} // namespace xgpu::detail
