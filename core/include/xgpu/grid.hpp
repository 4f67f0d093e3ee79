// xgpu launch geometry, OpenCL-style: the global number of work-items per dimension and the
// work-group (block) size. The CUDA backend converts it to grid and block dimensions.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>

namespace xgpu {

// A 1-, 2- or 3-dimensional size. Range() (all zero) means "not given".
struct Range {
    std::array<std::size_t, 3> size{0, 0, 0};
    unsigned dims = 0;

    Range() = default;
    Range(std::size_t x) : size{x, 1, 1}, dims(1) {}
    Range(std::size_t x, std::size_t y) : size{x, y, 1}, dims(2) {}
    Range(std::size_t x, std::size_t y, std::size_t z) : size{x, y, z}, dims(3) {}

    std::size_t operator[](unsigned d) const { return size[d]; }
    std::size_t total() const { return size[0] * size[1] * size[2]; }
    bool empty() const { return dims == 0; }
    std::string str() const;
};

struct Grid {
    Range global; // total work-items per dimension
    Range local;  // work-group size; empty: the backend chooses

    Grid(Range g, Range l = {}) : global(g), local(l) {}
};

// A local-memory (CUDA: dynamic shared memory) kernel argument of `bytes` bytes.
struct Local {
    std::size_t bytes;
};

} // namespace xgpu
