// Array expressions as maps, for the kernel families built on them (reductions, scans): the
// value of an expression at element `i` of a shape, through the operand protocol of codegen/.
#pragma once

#include <string>
#include <vector>

#include "../codegen/expression.hpp"
#include "../codegen/operations.hpp"
#include "xgpu/array.hpp"
#include "xgpu/kernel.hpp"

namespace xgpu::detail {

// The type's name in kernel code (the complex ones are the xgpu_cfloat/xgpu_cdouble structs).
inline const char* dev(DType t) {
    return codegen::device_type(t);
}

// Lowers a map: `expr` over `shape` (the broadcast shape `i` counts over; its arrays broadcast
// to it), without a destination. With Want::everything the device is checked to support the
// expression's types first.
codegen::Lowered lower_map(const Node& expr, const Context& ctx, const Shape& shape, codegen::Want want);
// The map's statements, then `const <type> <var> = <value>;`: the element code kernels use.
std::string element_code(const codegen::Lowered& map, const char* var = "v");
// `value` of type `from` as type `to`, in kernel code.
std::string convert_code(const std::string& value, DType from, DType to);

} // namespace xgpu::detail
