// xgpu sorting: numpy.sort and numpy.argsort along any axis, Array::sort in place, and Thrust's
// sort_by_key, for every integer and floating type, on the device.
//
//   auto s = xgpu::sort(x);             // a sorted copy, along the last axis
//   auto i = xgpu::argsort(x, 0);       // int64 indices along axis 0: x's column j at i[:, j] is sorted
//   x.sort();                           // in place (views too)
//   xgpu::sort_by_key(keys, values);    // both 1-D, sorted together by the keys, in place
//
// Sorts are stable (equal keys keep their order; argsort's indices are numpy's kind="stable")
// and in numpy's order: -0.0 equal to 0.0, NaNs last (whatever their sign). The same
// input gives the same output and the same permutation on every run and device. Complex keys
// are refused (InvalidArgument). Rows of up to 2048 keys are sorted in one launch, each inside a
// work-group (many short rows together); longer ones by an LSD radix sort of 8 bits a pass
// (kernels/sort.kernel).
#pragma once

#include <cstdint>

#include "xgpu/array.hpp"
#include "xgpu/reduction.hpp"

namespace xgpu {

namespace detail {
// A sorted copy of `a` along `axis` (negative counts from the end), C-contiguous.
ArrayDesc sort(const ArrayDesc& a, std::int64_t axis);
// The int64 indices that sort `a` along `axis`, stably.
ArrayDesc argsort(const ArrayDesc& a, std::int64_t axis);
// Sorts the 1-D `keys` and reorders the 1-D `values` (any type, the same size) with them.
void sort_by_key(const ArrayDesc& keys, const ArrayDesc& values);
} // namespace detail

// numpy.sort: a sorted copy along `axis` (default: the last). `a` may be a view or an expression.
template <ArrayLike E> auto sort(const E& a, std::int64_t axis = -1) {
    using T = typename E::value_type;
    return Array<T>(detail::sort(Array<T>(a).desc(), axis));
}
// numpy.argsort(kind="stable"): int64 indices along `axis` such that taking them sorts `a`.
template <ArrayLike E> Array<std::int64_t> argsort(const E& a, std::int64_t axis = -1) {
    using T = typename E::value_type;
    return Array<std::int64_t>(detail::argsort(Array<T>(a).desc(), axis));
}
// Thrust's sort_by_key: sorts `keys` (1-D) in place and applies the same permutation to `values`
// (1-D, any element type, the same size); stable.
template <Element K, Element V> void sort_by_key(const Array<K>& keys, const Array<V>& values) {
    detail::sort_by_key(keys.desc(), values.desc());
}

} // namespace xgpu
