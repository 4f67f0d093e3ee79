// Sorting on every backend against a host stable sort in numpy's order (NaNs last, -0.0 equal to
// 0.0) on fresh random data: every key type at awkward sizes, the keys compared bit for bit and
// argsort's permutation exactly (which checks stability); special floats and the top bits of
// 64-bit keys; sorted, reversed, all-equal and few-distinct inputs; every axis of 2-D and 3-D
// arrays and of views; many short rows in one launch; sort_by_key with values of every size;
// other launch shapes (the portable ranking, tiles of a few keys); refusals before any launch.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numeric>

#include <xgpu/sort.hpp>

#include "support.hpp"

using namespace xgpu;
using test::numpy_less;

namespace {

template <class T> std::vector<std::int64_t> host_argsort(const std::vector<T>& x) {
    std::vector<std::int64_t> idx(x.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) { return numpy_less(x[a], x[b]); });
    return idx;
}

template <class T> std::vector<T> take(const std::vector<T>& x, const std::vector<std::int64_t>& idx) {
    std::vector<T> out(idx.size());
    for (std::size_t i = 0; i < idx.size(); ++i)
        out[i] = x[std::size_t(idx[i])];
    return out;
}

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    if constexpr (std::is_same_v<T, bool>)
        return a == b;
    else
        return a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Random keys over the whole range of T, with floats' specials mixed in.
template <class T> std::vector<T> random_keys(std::size_t n) {
    std::vector<T> v(n);
    auto& g = test::rng();
    if constexpr (std::is_same_v<T, bool>) {
        for (std::size_t i = 0; i < n; ++i)
            v[i] = (g() & 1) != 0;
    } else if constexpr (std::is_integral_v<T>) {
        for (auto& x : v)
            x = T(g());
    } else {
        std::uniform_real_distribution<T> d(-1000, 1000);
        const T special[] = {std::numeric_limits<T>::quiet_NaN(),
                             -std::numeric_limits<T>::quiet_NaN(),
                             std::numeric_limits<T>::infinity(),
                             -std::numeric_limits<T>::infinity(),
                             T(0),
                             -T(0),
                             std::numeric_limits<T>::denorm_min(),
                             -std::numeric_limits<T>::denorm_min(),
                             std::numeric_limits<T>::min() / 4,
                             std::numeric_limits<T>::max(),
                             std::numeric_limits<T>::lowest()};
        for (auto& x : v)
            x = g() % 16 == 0 ? special[g() % std::size(special)] : d(g);
    }
    return v;
}

// sort and argsort of x against the host, 1-D.
template <class T> void check_sort(const Context& ctx, const std::vector<T>& h) {
    INFO(name(dtype_v<T>) << ", n = " << h.size());
    const auto x = to_device(ctx, h);
    const auto idx = host_argsort(h);
    CHECK(same_bits(sort(x).get(), take(h, idx)));
    CHECK(argsort(x).get() == idx);
    CHECK(same_bits(x.get(), h)); // the input is untouched
}

template <class T> void check_every_size(const Context& ctx) {
    for (const std::size_t n : {0, 1, 2, 33, 2047, 2049, 40003})
        check_sort(ctx, random_keys<T>(n));
}

// The host's stable sort of each line of `h` (shape) along `axis`, and the indices along it.
template <class T>
std::pair<std::vector<T>, std::vector<std::int64_t>> host_sort_axis(const std::vector<T>& h, const Shape& shape,
                                                                    std::size_t axis) {
    std::size_t inner = 1;
    for (std::size_t d = axis + 1; d < shape.size(); ++d)
        inner *= shape[d];
    const std::size_t len = shape[axis], outer = h.size() / std::max<std::size_t>(len * inner, 1);
    std::vector<T> out(h.size());
    std::vector<std::int64_t> ids(h.size());
    for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t i = 0; i < inner; ++i) {
            std::vector<T> line(len);
            for (std::size_t j = 0; j < len; ++j)
                line[j] = h[(o * len + j) * inner + i];
            const auto idx = host_argsort(line);
            for (std::size_t j = 0; j < len; ++j) {
                out[(o * len + j) * inner + i] = line[std::size_t(idx[j])];
                ids[(o * len + j) * inner + i] = idx[j];
            }
        }
    return {out, ids};
}

} // namespace

TEST_CASE("sort and argsort agree with a host stable sort for every key type at awkward sizes") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        check_every_size<bool>(ctx);
        check_every_size<std::int8_t>(ctx);
        check_every_size<std::uint8_t>(ctx);
        check_every_size<std::int16_t>(ctx);
        check_every_size<std::uint16_t>(ctx);
        check_every_size<std::int32_t>(ctx);
        check_every_size<std::uint32_t>(ctx);
        check_every_size<std::int64_t>(ctx);
        check_every_size<std::uint64_t>(ctx);
        check_every_size<float>(ctx);
        if (ctx.device().has_fp64()) check_every_size<double>(ctx);
    }
}

TEST_CASE("Sorted, reversed, all-equal and few-distinct inputs, and the top bits of 64-bit keys") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const std::size_t n : {std::size_t(1500), std::size_t(30001)}) {
            auto h = random_keys<std::int32_t>(n);
            std::sort(h.begin(), h.end());
            check_sort(ctx, h);
            std::reverse(h.begin(), h.end());
            check_sort(ctx, h);
            check_sort(ctx, std::vector<std::int32_t>(n, -7));
            auto few = test::random_vector<std::int32_t>(n, -2, 2);
            check_sort(ctx, few);
            // Keys that differ only in their top bits, and in their lowest.
            std::vector<std::uint64_t> top(n);
            std::vector<std::int64_t> stop(n);
            for (std::size_t i = 0; i < n; ++i) {
                top[i] = (test::rng()() & 0xc000000000000001ull);
                stop[i] = std::int64_t(top[i]);
            }
            check_sort(ctx, top);
            check_sort(ctx, stop);
            std::vector<float> zeros(n);
            for (std::size_t i = 0; i < n; ++i)
                zeros[i] = test::rng()() % 2 ? 0.0f : -0.0f;
            check_sort(ctx, zeros); // all equal: the signs stay in their order
        }
    }
}

TEST_CASE("sort and argsort along every axis of 2-D and 3-D arrays and of views; Array::sort in place") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const Shape& shape : {Shape{7, 300}, Shape{3, 5, 2100}, Shape{2500, 3}, Shape{4, 1, 6}}) {
            const auto h = test::random_vector<std::int32_t>(shape_size(shape), -50, 50); // many ties
            const auto x = to_device(ctx, h, shape);
            for (std::size_t axis = 0; axis < shape.size(); ++axis) {
                INFO("shape " << to_string(shape) << ", axis " << axis);
                const auto [want, ids] = host_sort_axis(h, shape, axis);
                CHECK(sort(x, std::int64_t(axis)).get() == want);
                CHECK(argsort(x, std::int64_t(axis) - std::int64_t(shape.size())).get() == ids);
                CHECK(sort(x, std::int64_t(axis)).shape() == shape);
            }
        }
        // A strided, transposed view.
        const auto h = random_keys<float>(40 * 90);
        const auto base = to_device(ctx, h, {40, 90});
        const auto v = base(slice(1, 40, 3), slice(0, 90, 2)).transpose(); // (45, 13)
        std::vector<float> hv;
        for (std::size_t j = 0; j < 90; j += 2)
            for (std::size_t i = 1; i < 40; i += 3)
                hv.push_back(h[i * 90 + j]);
        for (std::size_t axis = 0; axis < 2; ++axis) {
            const auto [want, ids] = host_sort_axis(hv, v.shape(), axis);
            CHECK(same_bits(sort(v, std::int64_t(axis)).get(), want));
            CHECK(argsort(v, std::int64_t(axis)).get() == ids);
        }
        // In place on the view: the rest of the base array is untouched.
        v.sort(0);
        const auto [want, ids] = host_sort_axis(hv, v.shape(), 0);
        CHECK(same_bits(v.get(), want));
        auto rest = base.get();
        for (std::size_t j = 0; j < 90; j += 2)
            for (std::size_t i = 1; i < 40; i += 3)
                rest[i * 90 + j] = h[i * 90 + j];
        CHECK(same_bits(rest, h));
    }
}

TEST_CASE("Many short rows are sorted in one launch, a small input too") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t rows = 5000, len = 32;
        const auto h = random_keys<float>(rows * len);
        const auto x = to_device(ctx, h, {rows, len});
        auto y = sort(x); // compiles
        const auto before = ctx.launch_count();
        y = sort(x);
        CHECK(ctx.launch_count() - before == 1);
        CHECK(same_bits(y.get(), host_sort_axis(h, {rows, len}, 1).first));
        const auto small = to_device(ctx, random_keys<std::uint32_t>(1000));
        (void)argsort(small);
        const auto before_small = ctx.launch_count();
        (void)argsort(small);
        CHECK(ctx.launch_count() - before_small == 1);
        ctx.queue().finish();
    }
}

TEST_CASE("sort_by_key carries values of every size, stably, and sorts the keys in place") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(20001)}) {
            INFO("n = " << n);
            const auto hk = test::random_vector<std::int32_t>(n, 0, 9); // duplicates: stability shows
            const auto idx = host_argsort(hk);
            auto k = to_device(ctx, hk);
            auto v = arange<std::int64_t>(ctx, double(n));
            sort_by_key(k, v);
            CHECK(k.get() == take(hk, idx));
            CHECK(v.get() == idx);
            // Values of 1, 2, 4 and 16 bytes, keys of 1 and 8.
            const auto hb = random_keys<std::uint8_t>(n);
            const auto h16 = random_keys<std::int16_t>(n);
            const auto hf = random_keys<float>(n);
            std::vector<std::complex<double>> hc(n);
            for (std::size_t i = 0; i < n; ++i)
                hc[i] = {double(i), -double(i)};
            const auto kb = to_device(ctx, hb);
            const auto v16 = to_device(ctx, h16);
            sort_by_key(kb, v16);
            const auto ib = host_argsort(hb);
            CHECK(kb.get() == take(hb, ib));
            CHECK(v16.get() == take(h16, ib));
            if (ctx.device().has_fp64()) {
                const auto hd = random_keys<double>(n);
                const auto kd = to_device(ctx, hd);
                const auto vf = to_device(ctx, hf);
                const auto vc = to_device(ctx, hc);
                auto kd2 = to_device(ctx, hd);
                sort_by_key(kd, vf);
                sort_by_key(kd2, vc);
                const auto id = host_argsort(hd);
                CHECK(same_bits(kd.get(), take(hd, id)));
                CHECK(same_bits(vf.get(), take(hf, id)));
                CHECK(vc.get() == take(hc, id));
            }
        }
    }
}

TEST_CASE("Other launch shapes: the portable ranking between work-items, and tiles of a few keys") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::vector<LaunchShape> shapes{{24, 5}, {64, 4}, {32, 2}, {4, 3}, {256, 16}, {256, 8}};
        for (const LaunchShape& s : shapes) {
            INFO("shape " << s.key());
            LaunchShapeScope scope(KernelFamily::sort, s);
            try {
                (void)launch_shape(ctx, KernelFamily::sort, DType::uint32);
            } catch (const InvalidArgument&) {
                continue; // more than this device allows
            }
            for (const std::size_t n : {std::size_t(11), std::size_t(5001)}) {
                check_sort(ctx, random_keys<std::uint32_t>(n));
                check_sort(ctx, test::random_vector<std::int16_t>(n, -3, 3));
                if (ctx.device().has_fp64()) check_sort(ctx, random_keys<double>(n));
            }
            // Rows that span several tiles, and short ones.
            const Shape shape{9, 700};
            const auto h = test::random_vector<std::int64_t>(shape_size(shape), -20, 20);
            const auto x = to_device(ctx, h, shape);
            CHECK(argsort(x).get() == host_sort_axis(h, shape, 1).second);
            CHECK(argsort(x, 0).get() == host_sort_axis(h, shape, 0).second);
        }
    }
}

TEST_CASE("Sorts check their arguments before launching") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto x = arange<float>(ctx, 10);
        const auto c = zeros<std::complex<float>>(ctx, {10});
        const auto m = zeros<std::int32_t>(ctx, {2, 5});
        const auto short_values = zeros<std::int32_t>(ctx, {9});
        const auto before = ctx.launch_count();
        CHECK_THROWS_AS(sort(c), InvalidArgument);
        CHECK_THROWS_WITH(argsort(c), Catch::Matchers::Contains("complex64"));
        CHECK_THROWS_AS(sort(m, 2), ShapeError);
        CHECK_THROWS_AS(sort(m, -3), ShapeError);
        CHECK_THROWS_WITH(argsort(m, 5), Catch::Matchers::Contains("axis 5"));
        CHECK_THROWS_AS(sort_by_key(x, short_values), ShapeError);
        CHECK_THROWS_AS(sort_by_key(m, m.ravel()), ShapeError);
        CHECK_THROWS_AS(sort_by_key(x, x), InvalidArgument);
        CHECK_THROWS_AS(m.sort(1 << 20), ShapeError);
        CHECK(ctx.launch_count() == before);
        // 0-, 1- and 2-element inputs, and an empty axis.
        CHECK(sort(zeros<std::int32_t>(ctx, {0})).size() == 0);
        CHECK(argsort(zeros<std::int32_t>(ctx, {3, 0}), 0).shape() == Shape{3, 0});
        CHECK(sort(full<float>(ctx, {1}, 2.5f)).get() == std::vector<float>{2.5f});
        CHECK(argsort(to_device(ctx, std::vector<float>{2, 1})).get() == std::vector<std::int64_t>{1, 0});
        ctx.queue().finish();
    }
}
