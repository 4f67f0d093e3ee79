// Kernel skeletons: the fixed text of a kernel family, kept as a file in kernels/, with named
// hooks `${name}` where the family's generated code goes. Every kernel the library generates is
// a skeleton with its hooks filled; no kernel text lives in .cpp string literals beyond the
// generated fragments.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace xgpu::codegen {

// A hook's name and the text that replaces `${name}`.
struct Hook {
    std::string_view name;
    std::string_view text;
};

// The text of kernels/<file>, embedded in the library at build time (array.h, scan.h, ...).
std::string_view kernel_file(std::string_view file);

// kernels/<file> with every `${name}` replaced by its hook's text. Throws xgpu::Error naming the
// file and the hook when the skeleton has a hook that `hooks` does not fill, or `hooks` fills
// one that the skeleton does not have: a skeleton and its family cannot drift apart silently.
std::string fill(std::string_view file, std::span<const Hook> hooks);
inline std::string fill(std::string_view file, std::initializer_list<Hook> hooks) {
    return fill(file, std::span<const Hook>(hooks.begin(), hooks.size()));
}

} // namespace xgpu::codegen
