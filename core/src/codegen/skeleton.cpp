#include "skeleton.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu::codegen {

std::string_view kernel_file(std::string_view file) {
    return detail::embedded_kernel(file);
}

std::string fill(std::string_view file, std::span<const Hook> hooks) {
    const std::string_view text = kernel_file(file);
    std::vector<bool> used(hooks.size(), false);
    std::string out;
    out.reserve(text.size() + 1024);
    std::size_t at = 0;
    while (true) {
        const std::size_t open = text.find("${", at);
        if (open == std::string_view::npos) break;
        const std::size_t close = text.find('}', open);
        if (close == std::string_view::npos)
            throw Error(fmt::format("xgpu: kernels/{}: an unterminated hook at offset {}", file, open));
        const std::string_view name = text.substr(open + 2, close - open - 2);
        const auto it = std::find_if(hooks.begin(), hooks.end(), [&](const Hook& h) { return h.name == name; });
        if (it == hooks.end()) throw Error(fmt::format("xgpu: kernels/{}: hook '{}' is not filled", file, name));
        used[std::size_t(it - hooks.begin())] = true;
        out.append(text.substr(at, open - at));
        out.append(it->text);
        at = close + 1;
    }
    out.append(text.substr(at));
    for (std::size_t k = 0; k < hooks.size(); ++k)
        if (!used[k]) throw Error(fmt::format("xgpu: kernels/{}: has no hook '{}'", file, hooks[k].name));
    return out;
}

} // namespace xgpu::codegen
