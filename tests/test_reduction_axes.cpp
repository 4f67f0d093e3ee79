// Reductions along any axes on every backend against a host reference on fresh random data:
// sum, prod, min, max, any, all, argmin, argmax (the first extreme's place along the axis), mean,
// var and std (ddof) along every single axis, every pair and all three of 3-D arrays, of
// transposed views and of fused expressions, with keepdims; both kernels (the innermost axis
// reduced, or kept) at sizes that cut the rows into chunks; numpy's result types; refusals.
#include <cmath>
#include <functional>
#include <limits>

#include <xgpu/reduction.hpp>
#include <xgpu/scan.hpp>

#include "support.hpp"

using namespace xgpu;

namespace {

// For each output element (the kept axes in order), the host's fold of the elements along `axes`
// in C order, with each one's place along the reduced axes.
template <class T, class R>
std::vector<R> host_reduce(const std::vector<T>& h, const Shape& shape, const std::vector<std::size_t>& axes, R init,
                           const std::function<R(R, T, std::size_t)>& f) {
    const std::size_t nd = shape.size();
    std::vector<bool> reduced(nd, false);
    for (auto a : axes)
        reduced[a] = true;
    std::size_t outs = 1, m = 1;
    for (std::size_t d = 0; d < nd; ++d)
        (reduced[d] ? m : outs) *= shape[d];
    std::vector<R> out(outs, init);
    std::vector<std::size_t> idx(nd, 0);
    for (std::size_t flat = 0; flat < h.size(); ++flat) {
        std::size_t o = 0, pos = 0;
        for (std::size_t d = 0; d < nd; ++d) {
            if (reduced[d])
                pos = pos * shape[d] + idx[d];
            else
                o = o * shape[d] + idx[d];
        }
        out[o] = f(out[o], h[flat], pos);
        for (std::size_t d = nd; d-- > 0;) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    (void)m;
    return out;
}

Shape kept_shape(const Shape& shape, const std::vector<std::size_t>& axes, bool keepdims) {
    Shape s;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (!r || keepdims) s.push_back(r ? 1 : shape[d]);
    }
    return s;
}

std::vector<std::vector<std::size_t>> axis_sets(std::size_t nd) {
    std::vector<std::vector<std::size_t>> out;
    for (unsigned mask = 1; mask < (1u << nd); ++mask) {
        std::vector<std::size_t> a;
        for (std::size_t d = 0; d < nd; ++d)
            if (mask & (1u << d)) a.push_back(d);
        out.push_back(a);
    }
    return out;
}

Axes to_axes(const std::vector<std::size_t>& a, bool keepdims) {
    Axes x{};
    x.list.clear();
    for (auto d : a)
        x.list.push_back(std::int64_t(d));
    return x.keepdims(keepdims);
}

} // namespace

TEST_CASE("Integer reductions along every set of axes are exact, with keepdims and numpy's types") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const Shape& shape : {Shape{5, 6, 7}, Shape{3, 1, 300}, Shape{2000, 3, 2}}) {
            const auto h = test::random_vector<std::int32_t>(shape_size(shape), -3, 3);
            const auto x = to_device(ctx, h, shape);
            for (const auto& axes : axis_sets(3)) {
                for (const bool keep : {false, true}) {
                    INFO("shape " << to_string(shape) << ", " << axes.size() << " axes from " << axes[0]
                                  << ", keepdims " << keep);
                    const Axes a = to_axes(axes, keep);
                    const Shape want_shape = kept_shape(shape, axes, keep);
                    const auto s = sum(x, a);
                    static_assert(std::is_same_v<decltype(s), const Array<std::int64_t>>);
                    CHECK(s.shape() == want_shape);
                    CHECK(s.get() ==
                          host_reduce<std::int32_t, std::int64_t>(
                              h, shape, axes, 0, [](std::int64_t r, std::int32_t v, std::size_t) { return r + v; }));
                    // Factors of -1 and 1 (the product of a thousand 2s would overflow), and up to
                    // 3^7 along the shortest axes.
                    CHECK(prod(where(x > 0, std::int32_t(-1), std::int32_t(1)), a).get() ==
                          host_reduce<std::int32_t, std::int64_t>(
                              h, shape, axes, 1,
                              [](std::int64_t r, std::int32_t v, std::size_t) { return v > 0 ? -r : r; }));
                    if (shape[0] == 5 && axes.size() == 1)
                        CHECK(
                            prod(x, a).get() ==
                            host_reduce<std::int32_t, std::int64_t>(
                                h, shape, axes, 1, [](std::int64_t r, std::int32_t v, std::size_t) { return r * v; }));
                    CHECK(min(x, a).get() == host_reduce<std::int32_t, std::int32_t>(
                                                 h, shape, axes, 99, [](std::int32_t r, std::int32_t v, std::size_t) {
                                                     return std::min(r, v);
                                                 }));
                    CHECK(max(x * 2, a).get() ==
                          host_reduce<std::int32_t, std::int32_t>(
                              h, shape, axes, -99,
                              [](std::int32_t r, std::int32_t v, std::size_t) { return std::max(r, 2 * v); }));
                    const auto anyh = host_reduce<std::int32_t, std::uint8_t>(
                        h, shape, axes, 0, [](std::uint8_t r, std::int32_t v, std::size_t) { return r || v == 3; });
                    const auto anyd = any(x == 3, a).get();
                    CHECK(std::equal(anyd.begin(), anyd.end(), anyh.begin(), anyh.end()));
                    const auto allh = host_reduce<std::int32_t, std::uint8_t>(
                        h, shape, axes, 1, [](std::uint8_t r, std::int32_t v, std::size_t) { return r && v > -3; });
                    const auto alld = all(x > -3, a).get();
                    CHECK(std::equal(alld.begin(), alld.end(), allh.begin(), allh.end()));
                    if (axes.size() == 1) {
                        // The first extreme's place along the axis.
                        using P = std::pair<std::int32_t, std::int64_t>;
                        const auto am = host_reduce<std::int32_t, P>(h, shape, axes, {99, -1},
                                                                     [](P r, std::int32_t v, std::size_t p) {
                                                                         return v < r.first ? P{v, std::int64_t(p)} : r;
                                                                     });
                        std::vector<std::int64_t> want;
                        for (auto& p : am)
                            want.push_back(p.second);
                        CHECK(argmin(x, a).get() == want);
                        const auto aM = host_reduce<std::int32_t, P>(h, shape, axes, {-99, -1},
                                                                     [](P r, std::int32_t v, std::size_t p) {
                                                                         return v > r.first ? P{v, std::int64_t(p)} : r;
                                                                     });
                        want.clear();
                        for (auto& p : aM)
                            want.push_back(p.second);
                        CHECK(argmax(x, a).get() == want);
                    }
                }
            }
        }
    }
}

TEST_CASE("mean, var and std along axes of arrays, views and expressions, float and integer") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().has_fp64()) continue;
        const Shape shape{6, 40, 9};
        const auto h = test::random_vector<double>(shape_size(shape), -1, 1);
        const auto x = to_device(ctx, h, shape);
        const auto hi = test::random_vector<std::int32_t>(shape_size(shape), -100, 100);
        const auto xi = to_device(ctx, hi, shape);
        for (const auto& axes : axis_sets(3)) {
            const Axes a = to_axes(axes, false);
            std::size_t count = 1;
            for (auto d : axes)
                count *= shape[d];
            const auto sums =
                host_reduce<double, double>(h, shape, axes, 0, [](double r, double v, std::size_t) { return r + v; });
            const auto sq = host_reduce<double, double>(h, shape, axes, 0,
                                                        [](double r, double v, std::size_t) { return r + v * v; });
            const auto mean_d = mean(x, a).get(), var_d = var(x, a, 1).get(), std_d = xgpu::std(x * 3, a).get();
            REQUIRE(mean_d.size() == sums.size());
            for (std::size_t k = 0; k < sums.size(); ++k) {
                const double mu = sums[k] / double(count), v = sq[k] / double(count) - mu * mu;
                CHECK(std::abs(mean_d[k] - mu) < 1e-12);
                CHECK(std::abs(var_d[k] - v * double(count) / double(count - 1)) < 1e-12);
                CHECK(std::abs(std_d[k] - 3 * std::sqrt(v)) < 1e-11);
            }
            // Integers: float64 results.
            const auto mi = mean(xi, a);
            static_assert(std::is_same_v<typename decltype(mi)::value_type, double>);
            const auto isums = host_reduce<std::int32_t, double>(
                hi, shape, axes, 0, [](double r, std::int32_t v, std::size_t) { return r + v; });
            const auto mih = mi.get();
            for (std::size_t k = 0; k < isums.size(); ++k)
                CHECK(std::abs(mih[k] - isums[k] / double(count)) < 1e-9);
        }
        // Over everything, and of a transposed view.
        double total = 0;
        for (double v : h)
            total += v;
        CHECK(std::abs(mean(x).get() - total / double(h.size())) < 1e-12);
        const auto t = x.transpose({2, 0, 1});
        const auto want =
            host_reduce<double, double>(h, shape, {1}, 0, [](double r, double v, std::size_t) { return r + v; });
        const auto got = sum(t, Axes{2}).get(); // t's axis 2 is x's axis 1
        REQUIRE(got.size() == want.size());
        bool ok = true;
        for (std::size_t i = 0; i < 6; ++i)
            for (std::size_t k = 0; k < 9; ++k)
                ok = ok && std::abs(got[k * 6 + i] - want[i * 9 + k]) < 1e-12;
        CHECK(ok);
        CHECK(mean(x, Axes{0, 2}.keepdims()).shape() == Shape{1, 40, 1});
    }
}

TEST_CASE("Columns cut into chunks of rows, float sums the same bits twice") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const Shape shape{20000, 5};
        const auto h = test::random_vector<float>(shape_size(shape), -1, 1);
        const auto x = to_device(ctx, h, shape);
        const auto got = sum(x, Axes{0}).get();
        std::vector<double> want(5), mag(5);
        for (std::size_t i = 0; i < h.size(); ++i) {
            want[i % 5] += h[i];
            mag[i % 5] += std::abs(h[i]);
        }
        for (std::size_t c = 0; c < 5; ++c)
            CHECK(std::abs(got[c] - want[c]) <= 1e-5 * mag[c]);
        CHECK(sum(x, Axes{0}).get() == got);
        CHECK(argmax(x, Axes{0}).get().size() == 5);
    }
}

TEST_CASE("Reductions along axes check their arguments before launching") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto x = zeros<float>(ctx, {3, 4});
        const auto before = ctx.launch_count();
        CHECK_THROWS_AS(sum(x, Axes{2}), ShapeError);
        CHECK_THROWS_AS(sum(x, Axes{0, -2}), ShapeError);
        CHECK_THROWS_AS(argmax(x, Axes{0, 1}), InvalidArgument);
        CHECK_THROWS_AS(max(zeros<float>(ctx, {3, 0}), Axes{1}), InvalidArgument);
        CHECK(ctx.launch_count() == before);
        CHECK(sum(zeros<float>(ctx, {3, 0}), Axes{1}).get() == std::vector<float>(3, 0.0f));
        CHECK(sum(x, Axes{0, 1}.keepdims()).shape() == Shape{1, 1});
        ctx.queue().finish();
    }
}

TEST_CASE("cumsum and cumprod along every axis of 3-D arrays, of views and expressions") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const Shape shape{4, 5, 301};
        const auto h = test::random_vector<std::int32_t>(shape_size(shape), -3, 3);
        const auto x = to_device(ctx, h, shape);
        const std::size_t strides[3] = {5 * 301, 301, 1};
        for (std::size_t axis = 0; axis < 3; ++axis) {
            std::vector<std::int64_t> sums(h.size()), prods(h.size());
            for (std::size_t i = 0; i < h.size(); ++i) {
                const std::size_t pos = i / strides[axis] % shape[axis];
                const std::int64_t f = h[i] > 0 ? -1 : 1;
                sums[i] = pos ? sums[i - strides[axis]] + h[i] : h[i];
                prods[i] = pos ? prods[i - strides[axis]] * f : f;
            }
            CHECK(cumsum(x, std::int64_t(axis)).get() == sums);
            CHECK(cumsum(x, std::int64_t(axis) - 3).shape() == shape);
            CHECK(cumprod(where(x > 0, std::int32_t(-1), std::int32_t(1)), std::int64_t(axis)).get() == prods);
        }
        const auto f = to_device(ctx, std::vector<float>{1, 2, 3, 4});
        CHECK(cumprod(f).get() == std::vector<float>{1, 2, 6, 24});
        CHECK_THROWS_AS(cumsum(x, 3), ShapeError);
        // A transposed view.
        const auto t = x.transpose({2, 0, 1});
        const auto got = cumsum(t, 0).get(); // along x's last axis
        std::int64_t run = 0;
        for (std::size_t k = 0; k < 301; ++k) {
            run += h[k];
            CHECK(got[k * 20] == run);
        }
    }
}
