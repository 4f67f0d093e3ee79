// Array expressions lowered for a kernel: the operand protocol. One pass over the tree gives, for
// each node, its key fragment, its parameter declarations, its kernel arguments and its code, so
// the four cannot drift apart; an array repeated in the tree (the same view of the same memory) is
// one operand: one parameter, one argument, one load.
#pragma once

#include <string>
#include <vector>

#include "xgpu/expr.hpp"
#include "xgpu/kernel.hpp"

namespace xgpu::codegen {

// How much of the lowering a caller needs: on a warm kernel, the key and the arguments only.
enum class Want : bool { key_and_arguments, everything };

struct Lowered {
    std::string key;                     // structure, types, operand layouts, which occurrences share
    std::vector<detail::KernelArg> args; // the values of `params`, in order
    std::size_t loaded_bytes = 0;        // per element, from inputs that stream (each counted once)
    // With Want::everything:
    std::string params; // parameter declarations, each followed by ", "
    std::string body;   // statements computing the value at `i` (a uint64_t in scope), indented
    std::string value;  // the variable holding it
    std::string at;     // with a destination: the element's index in it (beyond its offset o0)
    DType type{};       // the value's type
};

// Lowers `expr` over `shape` (the broadcast shape `i` counts over, C order; every array of the
// tree broadcasts to it). With a destination `dst` (an assignment), its pointer p0 and offset o0
// come first. The body is indented for a loop inside a kernel (8 spaces).
Lowered lower(const detail::Node& expr, const Shape& shape, const detail::ArrayDesc* dst, Want want);

} // namespace xgpu::codegen
