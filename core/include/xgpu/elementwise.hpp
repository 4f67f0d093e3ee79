// xgpu::ElementwiseKernel, as PyCUDA's: argument declarations, an operation on index `i`, an
// optional preamble. Array arguments are passed at their offset (contiguous arrays and views);
// scalars by value.
//
//   xgpu::ElementwiseKernel lin(ctx, "float a, float* x, float b, const float* y, float* z",
//                               "z[i] = a * x[i] + b * y[i]", "linear_combination");
//   lin(2.0f, x, 3.0f, y, z);                    // over the size of the first array argument
//   lin(xgpu::slice(0, 100, 2), 2.0f, x, ...);   // over i = 0, 2, ..., 98
//
// Images are arguments too: "image1d src", "image2d src", "image3d src" declare a sampled image
// (pass Image::sampled(sampler); read it with XGPU_SAMPLE*/XGPU_FETCH* on `src`), "wimage2d dst"
// a writable one (pass Image::writable(); XGPU_WRITE2D_*).
#pragma once

#include <string>
#include <vector>

#include "xgpu/array.hpp"
#include "xgpu/codegen.hpp"
#include "xgpu/image.hpp"

namespace xgpu {

namespace detail {
// One argument of a user kernel (ElementwiseKernel, ReductionKernel): an array, a scalar or an
// image (`scalar` then holds the image's kernel argument).
struct BoundArg {
    const ArrayDesc* array = nullptr;
    KernelArg scalar{};
    DType dtype{};
};
inline BoundArg bind_arg(const SampledImage& s) {
    return BoundArg{nullptr, make_arg(s), {}};
}
inline BoundArg bind_arg(const WritableImage& w) {
    return BoundArg{nullptr, make_arg(w), {}};
}
template <Element T> BoundArg bind_arg(const Array<T>& a) {
    return BoundArg{&a.desc(), {}, dtype_v<T>};
}
template <class S>
requires Scalar<S> BoundArg bind_arg(const S& s) {
    return BoundArg{nullptr, make_arg(s), dtype_v<std::conditional_t<std::is_same_v<S, long long>, std::int64_t, S>>};
}

// The parsed argument declarations of a user kernel, and what goes with them.
class UserArguments {
public:
    // Refuses an argument named `i` (the index the operation reads), xgpu_... or XGPU_..., and
    // any of `reserved`: the names the kernel's skeleton declares beside the arguments.
    UserArguments(const std::string& declarations, const std::string& kernel_name,
                  const std::vector<std::string>& reserved = {});
    // Kernel parameters (arrays become a base pointer and an element offset), each followed by ", ".
    std::string params() const;
    // Statements that bind each array's name at its offset.
    std::string rebind() const;
    // Checks `args` against the declarations (count, array or scalar, element type, context,
    // contiguity) and appends the kernel arguments; returns the first array's size, or -1.
    std::int64_t pack(const Context& ctx, const std::vector<BoundArg>& args, std::vector<KernelArg>& out) const;
    // Notes which array arguments `code` (the operation, or a reduction's map) reads or writes
    // at index i itself (`x[i]`); check_reach refuses those shorter than `end`, the largest index
    // the kernel runs plus one. An array read otherwise (a gather, x[index[i]]) is not checked.
    void note_indexing(const std::string& code);
    void check_reach(const std::vector<BoundArg>& args, std::uint64_t end) const;

private:
    struct Param {
        std::string declaration, name, type; // "const float* x", "x", "float"
        bool pointer;
        DType dtype;
        unsigned image = 0; // an image's dimensions ("image2d src"), 0 for arrays and scalars
        bool writable = false;
        bool indexed_by_i = false; // note_indexing
    };
    std::vector<Param> params_;
    std::string kernel_;
};
} // namespace detail

class ElementwiseKernel {
public:
    ElementwiseKernel(const Context& ctx, const std::string& arguments, const std::string& operation,
                      const std::string& name = "elementwise_kernel", const std::string& preamble = "");

    template <class... Args> void operator()(const Args&... args) const {
        launch(nullptr, {detail::bind_arg(args)...});
    }
    template <class... Args> void operator()(const Slice& range, const Args&... args) const {
        launch(&range, {detail::bind_arg(args)...});
    }

    const std::string& source() const { return source_; }

    // The same with the arguments already bound (over `range` where it is not null): for callers
    // that hold their arguments at run time, as the Python module does.
    void launch(const Slice* range, const std::vector<detail::BoundArg>& args) const;

private:
    Context ctx_;
    std::string name_, source_;
    detail::UserArguments args_;
    Kernel kernel_;
    LaunchShape shape_; // chosen at construction
};

} // namespace xgpu
