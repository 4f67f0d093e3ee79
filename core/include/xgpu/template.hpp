// xgpu::KernelTemplate: one kernel source with named parameters (element types, tile sizes,
// unroll factors), compiled once per set of values: PyCUDA's demo_meta_* idea in C++.
//
//   xgpu::KernelTemplate transpose(ctx, source, "transpose");   // source uses T and TILE
//   auto k = transpose.get({{"T", "float"}, {"TILE", 16}});      // compiled (or cached), a Kernel
//   k.launch(q, xgpu::Grid{{n, m}, {16, 16}}, out, in, n, m);
//
// Values reach the source as #define lines put between the dialect preamble and the source
// (#define T float, #define TILE 16), so the source stays plain dialect code, one text for every
// variant, and a value is a compile-time constant the compiler can unroll and size arrays with.
// Not -D options: those also reach the compiler's own built-in headers, where NVRTC's use T as
// a template parameter. Each variant is cached as any program is (in memory and on disk), and
// get() remembers the variants it made. Names must be identifiers and values names, type names
// (`unsigned int`) or numbers: anything else throws before compiling.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "xgpu/context.hpp"

namespace xgpu {

class KernelTemplate {
public:
    // A value: a type or identifier name, or a number.
    struct Value {
        std::string text;
        Value(const char* s) : text(s) {}
        Value(std::string s) : text(std::move(s)) {}
        template <class N>
        requires(std::is_arithmetic_v<N> && !std::is_same_v<N, bool>) Value(N n) : text(number(n)) {}

    private:
        template <class N> static std::string number(N n) {
            if constexpr (std::is_floating_point_v<N>) {
                char buf[40];
                std::snprintf(buf, sizeof buf, "%.17g", double(n));
                return buf;
            } else {
                return std::to_string(n);
            }
        }
    };
    using Parameters = std::vector<std::pair<std::string, Value>>;

    KernelTemplate(const Context& ctx, std::string source, std::string kernel_name);

    // The kernel for these values (names in any order; each at most once).
    Kernel get(const Parameters& values) const;
    // The #define lines a set of values becomes, sorted by name: what keys a variant.
    static std::vector<std::string> definitions(const Parameters& values);

    const std::string& source() const { return source_; }

private:
    Context ctx_;
    std::string source_, name_;
    struct Made {
        std::mutex mutex;
        std::map<std::vector<std::string>, Kernel> kernels;
    };
    std::shared_ptr<Made> made_ = std::make_shared<Made>();
};

} // namespace xgpu
