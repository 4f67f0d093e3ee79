// Shapes, strides and slices for xgpu arrays (numpy semantics: strides in elements, may be
// negative or zero; slices with start, stop and a step that may be negative).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xgpu {

using Shape = std::vector<std::size_t>;
using Strides = std::vector<std::int64_t>; // in elements

// Row-major (C), column-major (F); K ("keep") only where a copy is made of an existing array.
enum class Order { C, F, K };

// numpy's slice(start, stop, step); an empty start/stop means "from the end" as numpy.
struct Slice {
    std::optional<std::int64_t> start, stop;
    std::int64_t step = 1;
};
inline Slice slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop, std::int64_t step = 1) {
    return Slice{start, stop, step};
}
// The whole axis (numpy's ":"): a(xgpu::_, 3) is column 3.
inline const Slice _{};

std::string to_string(const Shape& shape); // "(3, 4)" as numpy prints shapes
// The number of elements; throws InvalidArgument where it does not fit in 63 bits (numpy's
// "array is too big"), so no size computed from a shape ever wraps.
std::size_t shape_size(const Shape& shape);
// The bytes of `shape` elements of `element_size` bytes each, checked the same way.
std::size_t shape_bytes(const Shape& shape, std::size_t element_size);

// A slice resolved against an axis of `n` elements, exactly as numpy's slice.indices(n): the first
// index, the step and the number of elements (0 <= start < n whenever length > 0). Every range a
// user gives (array views, ElementwiseKernel ranges) goes through this one function.
struct SliceRange {
    std::int64_t start = 0, step = 1;
    std::size_t length = 0;
};
SliceRange resolve(const Slice& s, std::size_t n); // throws InvalidArgument for a zero step
Strides contiguous_strides(const Shape& shape, Order order = Order::C);
} // namespace xgpu
