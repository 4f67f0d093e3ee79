// The elementwise family: an array expression assigned to an array, as one generated kernel from
// kernels/elementwise.kernel, launched in the family's launch shape.
#pragma once

#include <vector>

#include "xgpu/codegen.hpp"
#include "xgpu/expr.hpp"
#include "xgpu/kernel.hpp"

namespace xgpu::codegen {

// dst = expr, over dst's shape (expr broadcasts to it). The caller has checked contexts, shapes,
// types, and that no input overlaps dst in another layout.
void assign(const detail::Node& expr, const detail::ArrayDesc& dst);

// The kernel text of `dst = expr` in `shape` (what assign compiles on a miss), for tests and docs.
std::string elementwise_source(const Context& ctx, const detail::Node& expr, const detail::ArrayDesc& dst,
                               const LaunchShape& shape);

// A kernel that runs `body` for each index `index` (a uint64_t) of a range, from
// kernels/stream.kernel: `params` are its parameter declarations, each followed by ", ".
struct StreamKernel {
    std::string name;
    std::string preamble; // text before the kernel (array.h, the user's preamble, ...)
    std::string params;
    std::string index = "i";
    std::string body; // statements, indented by 8
};
std::string stream_source(const StreamKernel& k, const LaunchShape& shape);

// The shape of streaming kernels on `ctx`: the elementwise family's, with one index per
// work-item (their bodies store as they go, so items would not have their loads in flight
// together) unless a LaunchShapeScope sets the items.
LaunchShape stream_shape(const Context& ctx, DType type);

// Launches a streaming kernel over `count` elements in `shape`: `args`, then the base, count and
// guard arguments that kernels/elementwise.kernel's signature ends with.
void launch_stream(const Context& ctx, const Kernel& k, std::vector<detail::KernelArg> args, std::uint64_t count,
                   const LaunchShape& shape);

} // namespace xgpu::codegen
