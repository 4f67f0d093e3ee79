// xgpu::ElementwiseKernel, as PyCUDA's: argument declarations, an operation on index `i`, an
// optional preamble. Array arguments are passed at their offset (contiguous arrays and views);
// scalars by value.
//
//   xgpu::ElementwiseKernel lin(ctx, "float a, float* x, float b, const float* y, float* z",
//                               "z[i] = a * x[i] + b * y[i]", "linear_combination");
//   lin(2.0f, x, 3.0f, y, z);                    // over the size of the first array argument
//   lin(xgpu::slice(0, 100, 2), 2.0f, x, ...);   // over i = 0, 2, ..., 98
#pragma once

#include <string>
#include <vector>

#include "xgpu/array.hpp"

namespace xgpu {

class ElementwiseKernel {
public:
    ElementwiseKernel(const Context& ctx, const std::string& arguments, const std::string& operation,
                      const std::string& name = "elementwise_kernel", const std::string& preamble = "");

    template <class... Args>
    void operator()(const Args&... args) const {
        std::vector<Bound> bound{bind(args)...};
        launch(nullptr, bound);
    }
    template <class... Args>
    void operator()(const Slice& range, const Args&... args) const {
        std::vector<Bound> bound{bind(args)...};
        launch(&range, bound);
    }

    const std::string& source() const { return source_; }

    struct Param {
        std::string declaration, name, type; // "const float* x", "x", "float"
        bool pointer;
    };
    struct Bound {
        const detail::ArrayDesc* array = nullptr;
        detail::KernelArg scalar{};
        DType dtype{};
    };

private:
    template <Element T> static Bound bind(const Array<T>& a) { return Bound{&a.desc(), {}, dtype_v<T>}; }
    template <class S>
        requires Scalar<S>
    static Bound bind(const S& s) {
        return Bound{nullptr, detail::make_arg(s), dtype_v<std::conditional_t<std::is_same_v<S, long long>, std::int64_t, S>>};
    }
    void launch(const Slice* range, const std::vector<Bound>& args) const;

    Context ctx_;
    std::string name_, source_;
    std::vector<Param> params_;
    Kernel kernel_;
};

} // namespace xgpu
