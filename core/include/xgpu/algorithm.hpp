// xgpu array algorithms built on sort and scan, with numpy's and PyOpenCL's names: searchsorted,
// unique, bincount, histogram; nonzero, flatnonzero, argwhere; remove_if and partition (copy_if is
// in xgpu/scan.hpp); boolean masks (numpy's a[mask] and a[mask] = v); concatenate and stack.
//
//   auto at = xgpu::searchsorted(sorted, v);            // int64 places, numpy's side="left"
//   auto u = xgpu::unique(x, {.counts = true});         // u.values, u.counts
//   auto h = xgpu::histogram(x, 256, 0.0, 1.0);         // h.counts (int64), h.edges
//   auto idx = xgpu::flatnonzero(x > 0);                // int64 flat indices where it holds
//   auto picked = xgpu::masked(x, x > 0);               // numpy's x[x > 0]
//   xgpu::assign_masked(x, x < 0, 0.0);                 // numpy's x[x < 0] = 0
//   auto c = xgpu::concatenate<double>({a, b}, 0);
//
// Results whose size depends on the data (unique, nonzero, masks, partition) read that size back
// to the host before returning. Bad input (shapes, axes, types, decreasing edges, negative counts)
// throws before anything is enqueued, except where only the data can tell: bincount's negative
// values and a masked assignment's count of values, checked by a reduction read back first.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "xgpu/array.hpp"
#include "xgpu/reduction.hpp"
#include "xgpu/scan.hpp"

namespace xgpu {

enum class Side { left, right };

namespace detail {
ArrayDesc searchsorted(const ArrayDesc& a, const ArrayDesc& v, Side side);
struct UniqueDesc {
    ArrayDesc values, index, inverse, counts;
};
UniqueDesc unique(const ArrayDesc& a, bool index, bool inverse, bool counts);
ArrayDesc bincount(const ArrayDesc& x, const ArrayDesc* weights, std::size_t minlength);
// edges: the bins' edges (explicit), or null for `bins` equal bins over [lo, hi] (given), or over
// [min, max] of the values (lo and hi not given).
std::pair<ArrayDesc, ArrayDesc> histogram(const ArrayDesc& a, const ArrayDesc* edges, std::size_t bins,
                                          std::optional<std::pair<double, double>> range, const ArrayDesc* weights);
ArrayDesc flatnonzero(const Node& a);
std::vector<ArrayDesc> nonzero(const Node& a);
ArrayDesc argwhere(const Node& a);
std::pair<ArrayDesc, ArrayDesc> partition(const ArrayDesc& x, const Node& pred);
ArrayDesc masked(const ArrayDesc& a, const Node& mask);
void assign_masked(const ArrayDesc& a, const Node& mask, const ArrayDesc& values);
ArrayDesc concatenate(std::span<const ArrayDesc> arrays, std::int64_t axis);
ArrayDesc stack(std::span<const ArrayDesc> arrays, std::int64_t axis);
} // namespace detail

// numpy.searchsorted: for each element of v (any shape), where it goes in the sorted 1-D array a
// so that a stays sorted: before the elements equal to it (Side::left) or after them. The keys
// are compared in their promoted type, in numpy's order (NaNs last). int64, of v's shape.
template <Element T, ArrayLike V>
Array<std::int64_t> searchsorted(const Array<T>& a, const V& v, Side side = Side::left) {
    using U = typename V::value_type;
    return Array<std::int64_t>(detail::searchsorted(a.desc(), Array<U>(v).desc(), side));
}

// numpy.unique: the sorted distinct values of a (flattened; the NaNs one value, -0.0 and 0.0 one),
// and what is asked for: the index of each value's first occurrence, each element's value
// (inverse: a == values[inverse]), each value's count.
struct UniqueWant {
    bool index = false, inverse = false, counts = false;
};
template <Element T> struct UniqueResult {
    Array<T> values;
    Array<std::int64_t> index, inverse, counts; // empty unless asked for
};
template <Element T> UniqueResult<T> unique(const Array<T>& a, UniqueWant want = {}) {
    detail::UniqueDesc u = detail::unique(a.desc(), want.index, want.inverse, want.counts);
    UniqueResult<T> r{Array<T>(u.values), {}, {}, {}};
    if (want.index) r.index = Array<std::int64_t>(u.index);
    if (want.inverse) r.inverse = Array<std::int64_t>(u.inverse);
    if (want.counts) r.counts = Array<std::int64_t>(u.counts);
    return r;
}

// numpy.bincount of non-negative integers: how often each value occurs, at least minlength bins
// (int64); with weights (a's size), the sum of the weights of each value (float64), summed in a
// fixed order: the same bits on every run.
template <Element T> Array<std::int64_t> bincount(const Array<T>& x, std::size_t minlength = 0) {
    return Array<std::int64_t>(detail::bincount(x.desc(), nullptr, minlength));
}
template <Element T, Element W>
Array<double> bincount(const Array<T>& x, const Array<W>& weights, std::size_t minlength = 0) {
    return Array<double>(detail::bincount(x.desc(), &weights.desc(), minlength));
}

// numpy.histogram: counts (int64) and edges (a's floating type, float64 for integers); `bins`
// equal bins over [lo, hi] (the last bin includes hi), or over [min(a), max(a)] without a range;
// or explicit increasing edges. Values outside the range, and NaNs, are not counted.
template <Element E> struct Histogram {
    Array<std::int64_t> counts;
    Array<E> edges;
};
template <Element T> auto histogram(const Array<T>& a, std::size_t bins = 10) {
    using E = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    auto [c, e] = detail::histogram(a.desc(), nullptr, bins, std::nullopt, nullptr);
    return Histogram<E>{Array<std::int64_t>(c), Array<E>(e)};
}
template <Element T> auto histogram(const Array<T>& a, std::size_t bins, double lo, double hi) {
    using E = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    auto [c, e] = detail::histogram(a.desc(), nullptr, bins, std::pair{lo, hi}, nullptr);
    return Histogram<E>{Array<std::int64_t>(c), Array<E>(e)};
}
template <Element T, Element E> Histogram<E> histogram(const Array<T>& a, const Array<E>& edges) {
    auto [c, e] = detail::histogram(a.desc(), &edges.desc(), 0, std::nullopt, nullptr);
    return Histogram<E>{Array<std::int64_t>(c), Array<E>(e)};
}

// numpy.flatnonzero, numpy.nonzero (one int64 index array per dimension) and numpy.argwhere
// ((count, ndim) int64) of an array or expression.
template <ArrayLike E> Array<std::int64_t> flatnonzero(const E& a) {
    return Array<std::int64_t>(detail::flatnonzero(*detail::expr_node(a)));
}
template <ArrayLike E> std::vector<Array<std::int64_t>> nonzero(const E& a) {
    std::vector<Array<std::int64_t>> out;
    for (auto& d : detail::nonzero(*detail::expr_node(a)))
        out.emplace_back(std::move(d));
    return out;
}
template <ArrayLike E> Array<std::int64_t> argwhere(const E& a) {
    return Array<std::int64_t>(detail::argwhere(*detail::expr_node(a)));
}

// PyOpenCL's remove_if: the elements where pred does not hold, in order (1-D).
template <Element T, ArrayLike P> Array<T> remove_if(const Array<T>& x, const P& pred) {
    return copy_if(x, !pred);
}
// PyOpenCL's partition: the elements where pred holds and those where it does not, each in order.
template <Element T, ArrayLike P> std::pair<Array<T>, Array<T>> partition(const Array<T>& x, const P& pred) {
    auto [yes, no] = detail::partition(x.desc(), *detail::expr_node(pred));
    return {Array<T>(yes), Array<T>(no)};
}

// numpy's a[mask] for a bool (or numeric: nonzero) mask of a's shape: the elements where it holds,
// in C order, 1-D.
template <Element T, ArrayLike M> Array<T> masked(const Array<T>& a, const M& mask) {
    return Array<T>(detail::masked(a.desc(), *detail::expr_node(mask)));
}
// numpy's a[mask] = value, and a[mask] = values (1-D, one value per element where the mask holds).
template <Element T, ArrayLike M> void assign_masked(const Array<T>& a, const M& mask, T value) {
    Array<T> v = full<T>(a.context(), {1}, value);
    detail::assign_masked(a.desc(), *detail::expr_node(mask), v.desc());
}
template <Element T, ArrayLike M> void assign_masked(const Array<T>& a, const M& mask, const Array<T>& values) {
    detail::assign_masked(a.desc(), *detail::expr_node(mask), values.desc());
}

// numpy.concatenate along an existing axis, and numpy.stack along a new one.
namespace detail {
template <Element T> std::vector<ArrayDesc> descs_of(std::span<const Array<T>> arrays) {
    std::vector<ArrayDesc> d;
    for (const auto& a : arrays)
        d.push_back(a.desc());
    return d;
}
} // namespace detail
template <Element T> Array<T> concatenate(std::span<const Array<T>> arrays, std::int64_t axis = 0) {
    return Array<T>(detail::concatenate(detail::descs_of(arrays), axis));
}
template <Element T> Array<T> concatenate(std::initializer_list<Array<T>> arrays, std::int64_t axis = 0) {
    return concatenate(std::span<const Array<T>>(arrays.begin(), arrays.size()), axis);
}
template <Element T> Array<T> stack(std::span<const Array<T>> arrays, std::int64_t axis = 0) {
    return Array<T>(detail::stack(detail::descs_of(arrays), axis));
}
template <Element T> Array<T> stack(std::initializer_list<Array<T>> arrays, std::int64_t axis = 0) {
    return stack(std::span<const Array<T>>(arrays.begin(), arrays.size()), axis);
}

} // namespace xgpu
