// xgpu indexing: numpy's take, and reductions over a subset of elements without a copy
// (PyCUDA's subset_dot, subset_min, subset_max; PyOpenCL's subset_dot).
//
//   auto picked = xgpu::take(x, idx);                  // x.ravel()[idx], shaped like idx
//   auto s = xgpu::subset_sum(idx, x);                 // sum(x[idx]) in one pass, no copy
//   auto d = xgpu::subset_dot(idx, x, y);              // dot(x[idx], y[idx])
//
// Indices are checked before anything is enqueued (their min and max are reduced on the device
// and read: one round trip), so an index out of range throws as numpy's IndexError, never reads
// outside the array. take's TakeMode::clip and TakeMode::wrap (numpy's mode=) skip that check.
#pragma once

#include <limits>
#include <string>

#include "xgpu/array.hpp"
#include "xgpu/reduction.hpp"

namespace xgpu {

enum class TakeMode { raise, clip, wrap };

namespace detail {
ArrayDesc take(const ArrayDesc& a, const ArrayDesc& indices, TakeMode mode);
// Throws unless every index lies in [-n, n) (negative counting from the end, as numpy) or, with
// `negative` false, in [0, n).
template <std::signed_integral I> void check_indices(const Array<I>& idx, std::size_t n, bool negative) {
    if (idx.size() == 0) return;
    auto lo = min(idx), hi = max(idx);
    const std::int64_t l = lo.get(), h = hi.get(), size = std::int64_t(n);
    if (l < (negative ? -size : 0) || h >= size)
        throw InvalidArgument("xgpu: index " + std::to_string(l < (negative ? -size : 0) ? l : h) +
                              " is out of bounds for " + std::to_string(n) + " elements");
}
template <class R, class T, std::signed_integral I>
DeviceScalar<R> subset_reduce(const char* name, const std::string& neutral, const std::string& reduce,
                              const std::string& map, const Array<I>& idx, const Array<T>& x, const Array<T>* y) {
    if (!idx.is_contiguous() || !x.is_contiguous() || (y && !y->is_contiguous()))
        throw InvalidArgument(std::string("xgpu: ") + name + ": pass contiguous arrays (e.g. .copy())");
    if (y && y->size() != x.size()) throw ShapeError(std::string("xgpu: ") + name + ": x and y differ in size");
    check_indices(idx, x.size(), false);
    const std::string args = std::string("const ") + info(dtype_v<I>).device_name + "* idx, const " +
                             info(dtype_v<T>).device_name + "* x" +
                             (y ? std::string(", const ") + info(dtype_v<T>).device_name + "* y" : "");
    ReductionKernel<R> k(x.context(), neutral, reduce, map, args, std::string("xgpu_") + name);
    return y ? k.over(idx.size(), idx, x, *y) : k.over(idx.size(), idx, x);
}
template <class T, std::signed_integral I>
DeviceScalar<T> subset_extreme(const Array<I>& idx, const Array<T>& x, bool largest) {
    const char* name = largest ? "subset_max" : "subset_min";
    if (idx.size() == 0)
        throw InvalidArgument(std::string("xgpu: ") + name + " of no elements: the operation has no identity");
    const std::string pick = std::string("(a ") + (largest ? ">" : "<") + " b ? a : b)";
    return subset_reduce<T>(name, extreme_value(dtype_v<T>, !largest),
                            std::is_floating_point_v<T> ? "(a != a) ? a : ((b != b) ? b : " + pick + ")" : pick,
                            "x[idx[i]]", idx, x, static_cast<const Array<T>*>(nullptr));
}
template <class T>
concept SubsetValue = Element<T> && !std::is_same_v<T, bool> && (std::is_arithmetic_v<T>);
} // namespace detail

// numpy.take(a, indices): the elements of a (in C order) at the indices, in the indices' shape.
template <Element T, std::signed_integral I>
Array<T> take(const Array<T>& a, const Array<I>& indices, TakeMode mode = TakeMode::raise) {
    if (mode == TakeMode::raise) detail::check_indices(indices, a.size(), true);
    return Array<T>(detail::take(a.desc(), indices.desc(), mode));
}

// sum(x[idx]), in sum()'s type (integers widen to 64 bits).
template <detail::SubsetValue T, std::signed_integral I> auto subset_sum(const Array<I>& idx, const Array<T>& x) {
    using R = type_of_t<detail::sum_type(dtype_v<T>)>;
    const std::string r = info(dtype_v<R>).device_name;
    return detail::subset_reduce<R>("subset_sum", "(" + r + ")0", "a + b", "(" + r + ")x[idx[i]]", idx, x,
                                    static_cast<const Array<T>*>(nullptr));
}
// dot(x[idx], y[idx]) for floating-point x and y.
template <std::floating_point T, std::signed_integral I>
DeviceScalar<T> subset_dot(const Array<I>& idx, const Array<T>& x, const Array<T>& y) {
    return detail::subset_reduce<T>("subset_dot", "0", "a + b", "x[idx[i]] * y[idx[i]]", idx, x, &y);
}
// min(x[idx]) and max(x[idx]); NaN propagates as in min() and max(); an empty idx throws.
template <detail::SubsetValue T, std::signed_integral I>
DeviceScalar<T> subset_min(const Array<I>& idx, const Array<T>& x) {
    return detail::subset_extreme(idx, x, false);
}
template <detail::SubsetValue T, std::signed_integral I>
DeviceScalar<T> subset_max(const Array<I>& idx, const Array<T>& x) {
    return detail::subset_extreme(idx, x, true);
}

} // namespace xgpu
