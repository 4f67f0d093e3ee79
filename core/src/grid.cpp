#include "xgpu/grid.hpp"

#include <fmt/format.h>

namespace xgpu {

std::string Range::str() const {
    switch (dims) {
    case 0: return "()";
    case 1: return fmt::format("({})", size[0]);
    case 2: return fmt::format("({}, {})", size[0], size[1]);
    default: return fmt::format("({}, {}, {})", size[0], size[1], size[2]);
    }
}

} // namespace xgpu
