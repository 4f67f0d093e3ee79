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

enum class Order { C, F };

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
std::size_t shape_size(const Shape& shape);
Strides contiguous_strides(const Shape& shape, Order order = Order::C);
} // namespace xgpu
