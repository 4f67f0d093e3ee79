// Array layout: shapes, strides, views by indexing and slicing, reshape and transpose.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "xgpu/array.hpp"

namespace xgpu {

std::string to_string(const Shape& shape) {
    if (shape.size() == 1) return fmt::format("({},)", shape[0]);
    return fmt::format("({})", fmt::join(shape, ", "));
}

namespace {
constexpr std::size_t max_extent = std::size_t(INT64_MAX); // numpy's limit: sizes are intp
[[noreturn]] void too_big(const Shape& shape, const char* what) {
    throw InvalidArgument(
        fmt::format("xgpu: an array of shape {} is too big: its {} do not fit in 63 bits", to_string(shape), what));
}
} // namespace

std::size_t shape_size(const Shape& shape) {
    std::size_t n = 1;
    for (auto s : shape)
        if (__builtin_mul_overflow(n, s, &n) || n > max_extent) too_big(shape, "elements");
    return n;
}

std::size_t shape_bytes(const Shape& shape, std::size_t element_size) {
    std::size_t bytes = 0;
    if (__builtin_mul_overflow(shape_size(shape), element_size, &bytes) || bytes > max_extent) too_big(shape, "bytes");
    return bytes;
}

SliceRange resolve(const Slice& s, std::size_t axis_length) {
    if (s.step == 0) throw InvalidArgument("xgpu: slice step must not be zero");
    // 128 bits: a step of INT64_MIN and bounds at the int64 limits must not overflow.
    using Wide = __int128;
    const Wide n = Wide(std::min(axis_length, max_extent)), step = s.step;
    auto bound = [&](std::optional<std::int64_t> x, Wide missing) -> Wide {
        if (!x) return missing;
        const Wide k = *x < 0 ? Wide(*x) + n : Wide(*x);
        return step > 0 ? std::clamp<Wide>(k, 0, n) : std::clamp<Wide>(k, -1, n - 1);
    };
    const Wide start = bound(s.start, step > 0 ? 0 : n - 1);
    const Wide stop = bound(s.stop, step > 0 ? n : -1);
    const Wide len = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / (-step);
    if (len <= 0) return {0, s.step, 0};
    return {std::int64_t(start), s.step, std::size_t(len)};
}

Strides contiguous_strides(const Shape& shape, Order order) {
    Strides st(shape.size());
    std::int64_t s = 1;
    if (order == Order::C) {
        for (std::size_t d = shape.size(); d-- > 0;) {
            st[d] = s;
            s *= std::int64_t(std::max<std::size_t>(shape[d], 1));
        }
    } else {
        for (std::size_t d = 0; d < shape.size(); ++d) {
            st[d] = s;
            s *= std::int64_t(std::max<std::size_t>(shape[d], 1));
        }
    }
    return st;
}

namespace detail {

namespace {
// Layouts agree on every dimension longer than 1 (numpy's contiguity flags ignore the rest).
bool matches(const ArrayDesc& a, const Strides& want) {
    for (std::size_t d = 0; d < a.shape.size(); ++d)
        if (a.shape[d] > 1 && a.strides[d] != want[d]) return false;
    return true;
}
} // namespace

namespace {
// The bytes [first, last) of the buffer the array's elements can reach.
std::pair<std::int64_t, std::int64_t> byte_extent(const ArrayDesc& a) {
    std::int64_t lo = a.offset, hi = a.offset;
    for (std::size_t d = 0; d < a.shape.size(); ++d) {
        const std::int64_t reach = (std::int64_t(a.shape[d]) - 1) * a.strides[d];
        (reach < 0 ? lo : hi) += reach;
    }
    const auto item = std::int64_t(info(a.dtype).size);
    return {lo * item, (hi + 1) * item};
}
} // namespace

bool may_share_memory(const ArrayDesc& a, const ArrayDesc& b) {
    if (!a.buffer || !(a.buffer == b.buffer) || a.size() == 0 || b.size() == 0) return false;
    const auto [a0, a1] = byte_extent(a);
    const auto [b0, b1] = byte_extent(b);
    return a0 < b1 && b0 < a1;
}

bool ArrayDesc::is_c_contiguous() const {
    return size() == 0 || matches(*this, contiguous_strides(shape, Order::C));
}
bool ArrayDesc::is_f_contiguous() const {
    return size() == 0 || matches(*this, contiguous_strides(shape, Order::F));
}

void dtype_mismatch(DType have, DType want) {
    throw InvalidArgument(fmt::format("xgpu: an array of {} cannot be seen as an Array<{}>", name(have), name(want)));
}

void cannot_store(const char* op, DType result, DType array) {
    throw InvalidArgument(fmt::format("xgpu: {}: the result of type {} cannot be stored in an array of {} "
                                      "(numpy's same_kind rule); assign a converted expression instead",
                                      op, name(result), name(array)));
}

void require_fp64(const Context& ctx, DType dtype) {
    if ((dtype == DType::float64 || dtype == DType::complex128) && !ctx.device().has_fp64())
        throw InvalidArgument(fmt::format("xgpu: {} arrays need double precision, which {} ({}) does not have",
                                          name(dtype), ctx.device().name(), ctx.backend()));
}

ArrayDesc make_array(const Context& ctx, DType dtype, const Shape& shape, Order order) {
    if (!ctx.impl()) throw InvalidArgument("xgpu: array on an empty Context");
    if (order == Order::K) throw InvalidArgument("xgpu: Order::K names a layout only for a copy of an array");
    require_fp64(ctx, dtype);
    ArrayDesc a;
    a.context = ctx;
    a.dtype = dtype;
    a.shape = shape;
    const std::size_t bytes = shape_bytes(shape, info(dtype).size); // before any stride arithmetic
    a.strides = contiguous_strides(shape, order);
    a.buffer = ctx.pool().allocate(bytes);
    return a;
}

ArrayDesc view(const ArrayDesc& a, std::span<const Index> index) {
    if (index.size() > a.shape.size())
        throw InvalidArgument(
            fmt::format("xgpu: too many indices ({}) for an array of shape {}", index.size(), to_string(a.shape)));
    ArrayDesc v = a;
    v.shape.clear();
    v.strides.clear();
    for (std::size_t d = 0; d < a.shape.size(); ++d) {
        const auto n = std::int64_t(a.shape[d]);
        if (d >= index.size()) {
            v.shape.push_back(a.shape[d]);
            v.strides.push_back(a.strides[d]);
        } else if (auto* i = std::get_if<std::int64_t>(&index[d])) {
            const std::int64_t k = *i < 0 ? *i + n : *i;
            if (k < 0 || k >= n)
                throw InvalidArgument(fmt::format("xgpu: index {} is out of range for axis {} of length {}", *i, d, n));
            v.offset += k * a.strides[d];
        } else {
            const SliceRange r = resolve(std::get<Slice>(index[d]), a.shape[d]);
            v.offset += r.start * a.strides[d];
            v.shape.push_back(r.length);
            // With one element or none the stride is never used to address: where stride * step
            // leaves 64 bits (a huge step), keep the axis' own.
            std::int64_t stride = 0;
            v.strides.push_back(__builtin_mul_overflow(a.strides[d], r.step, &stride) ? a.strides[d] : stride);
        }
    }
    return v;
}

namespace {
// The strides that let `shape` view the elements of (old_shape, old_strides) in C order without a
// copy, where there are such (numpy's _attempt_nocopy_reshape): each run of old axes that merges
// or splits into new axes must itself be C-contiguous.
std::optional<Strides> reshape_strides(const Shape& old_shape, const Strides& old_strides, const Shape& shape) {
    Shape od;
    Strides os;
    for (std::size_t k = 0; k < old_shape.size(); ++k)
        if (old_shape[k] != 1) {
            od.push_back(old_shape[k]);
            os.push_back(old_strides[k]);
        }
    Strides ns(shape.size(), 0);
    std::size_t oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < shape.size() && oi < od.size()) {
        std::size_t np = shape[ni], op = od[oi];
        while (np != op) {
            if (np < op) {
                if (nj >= shape.size()) return std::nullopt;
                np *= shape[nj++];
            } else {
                if (oj >= od.size()) return std::nullopt;
                op *= od[oj++];
            }
        }
        for (std::size_t ok = oi; ok + 1 < oj; ++ok)
            if (os[ok] != std::int64_t(od[ok + 1]) * os[ok + 1]) return std::nullopt;
        ns[nj - 1] = os[oj - 1];
        for (std::size_t nk = nj - 1; nk > ni; --nk)
            ns[nk - 1] = ns[nk] * std::int64_t(shape[nk]);
        ni = nj++;
        oi = oj++;
    }
    const std::int64_t last = ni >= 1 ? ns[ni - 1] : 1;
    for (std::size_t nk = ni; nk < shape.size(); ++nk)
        ns[nk] = last;
    return ns;
}
} // namespace

ArrayDesc reshape(const ArrayDesc& a, const Shape& shape) {
    if (shape_size(shape) != a.size())
        throw ShapeError(fmt::format("xgpu: cannot reshape an array of shape {} ({} elements) into shape {}",
                                     to_string(a.shape), a.size(), to_string(shape)));
    if (a.is_c_contiguous() || a.size() == 0) {
        ArrayDesc v = a;
        v.shape = shape;
        v.strides = contiguous_strides(shape, Order::C);
        return v;
    }
    if (auto strides = reshape_strides(a.shape, a.strides, shape)) {
        ArrayDesc v = a;
        v.shape = shape;
        v.strides = std::move(*strides);
        return v;
    }
    // Not expressible as a view: copy to C order first, as numpy does.
    ArrayDesc c = make_array(a.context, a.dtype, a.shape, Order::C);
    assign(c, a);
    c.shape = shape;
    c.strides = contiguous_strides(shape, Order::C);
    return c;
}

ArrayDesc view_as(const ArrayDesc& a, DType type) {
    const std::size_t from = info(a.dtype).size, to = info(type).size;
    ArrayDesc v = a;
    v.dtype = type;
    if (from == to) return v;
    auto refuse = [&](const std::string& why) {
        throw InvalidArgument(fmt::format("xgpu: an array of {} and shape {} cannot be viewed as {}: {}", name(a.dtype),
                                          to_string(a.shape), name(type), why));
    };
    if (a.shape.empty()) refuse("a 0-d array has no axis to change");
    const std::size_t last = a.shape.size() - 1;
    if (a.shape[last] != 1 && a.strides[last] != 1) refuse("the last axis is not contiguous");
    const std::size_t bytes = a.shape[last] * from;
    if (bytes % to) refuse(fmt::format("the last axis ({} bytes) is not a multiple of {} bytes", bytes, to));
    if (std::size_t(a.offset) * from % to) refuse("the view does not start at a multiple of the new element size");
    for (std::size_t d = 0; d < last; ++d)
        if (a.shape[d] > 1 && std::size_t(std::abs(a.strides[d])) * from % to)
            refuse(fmt::format("the stride of axis {} is not a multiple of the new element size", d));
    v.offset = std::int64_t(std::size_t(a.offset) * from / to);
    for (std::size_t d = 0; d < last; ++d)
        v.strides[d] = a.strides[d] * std::int64_t(from) / std::int64_t(to);
    v.shape[last] = bytes / to;
    v.strides[last] = 1;
    return v;
}

ArrayDesc transpose(const ArrayDesc& a, std::span<const std::size_t> axes) {
    const std::size_t nd = a.shape.size();
    std::vector<std::size_t> perm(nd);
    if (axes.empty()) {
        for (std::size_t d = 0; d < nd; ++d)
            perm[d] = nd - 1 - d;
    } else {
        if (axes.size() != nd)
            throw InvalidArgument(fmt::format("xgpu: transpose: {} axes for {} dimensions", axes.size(), nd));
        std::vector<bool> seen(nd, false);
        for (std::size_t d = 0; d < nd; ++d) {
            if (axes[d] >= nd || seen[axes[d]])
                throw InvalidArgument(
                    fmt::format("xgpu: transpose: axes ({}) are not a permutation", fmt::join(axes, ", ")));
            seen[axes[d]] = true;
            perm[d] = axes[d];
        }
    }
    ArrayDesc v = a;
    for (std::size_t d = 0; d < nd; ++d) {
        v.shape[d] = a.shape[perm[d]];
        v.strides[d] = a.strides[perm[d]];
    }
    return v;
}

} // namespace detail
} // namespace xgpu
