// Algorithms built on sort and scan on every backend against host references on fresh random
// data: searchsorted (both sides, NaNs, promoted keys), unique with every output, bincount and
// histogram (uniform bins, explicit edges, weights, values on the edges, out of range, NaN),
// nonzero and its forms, remove_if and partition, boolean masks read and written, concatenate
// and stack along every axis; refusals before any launch.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include <xgpu/algorithm.hpp>
#include <xgpu/sort.hpp>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::numpy_less;

namespace {

template <class T> std::vector<T> host_sorted(std::vector<T> v) {
    std::stable_sort(v.begin(), v.end(), numpy_less<T>);
    return v;
}

template <class T> std::int64_t host_search(const std::vector<T>& a, T v, bool right) {
    const auto it = right ? std::upper_bound(a.begin(), a.end(), v, numpy_less<T>)
                          : std::lower_bound(a.begin(), a.end(), v, numpy_less<T>);
    return it - a.begin();
}

} // namespace

TEST_CASE("searchsorted finds numpy's places on both sides, NaNs last, keys promoted") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(70001)}) {
            auto h = host_sorted(test::random_vector<std::int32_t>(n, -500, 500));
            const auto q = test::random_vector<std::int32_t>(3003, -600, 600);
            const auto a = to_device(ctx, h), v = to_device(ctx, q, {3, 1000 + 1});
            for (const bool right : {false, true}) {
                std::vector<std::int64_t> want(q.size());
                for (std::size_t i = 0; i < q.size(); ++i)
                    want[i] = host_search(h, q[i], right);
                const auto got = searchsorted(a, v, right ? Side::right : Side::left);
                CHECK(got.shape() == Shape{3, 1001});
                CHECK(got.get() == want);
            }
        }
        // Floats with NaNs (sorted last) and -0.0 == 0.0; float32 keys searched with int32 ones
        // (compared as float64, numpy's promotion).
        if (ctx.device().has_fp64()) {
            std::vector<double> h{-1.5, -0.0, 0.0, 2.0, 2.0, 7.25, NAN, NAN};
            const auto a = to_device(ctx, h);
            const std::vector<double> q{NAN, 0.0, -0.0, 2.0, 8.0, -9.0};
            for (const bool right : {false, true}) {
                std::vector<std::int64_t> want;
                for (double x : q)
                    want.push_back(host_search(h, x, right));
                CHECK(searchsorted(a, to_device(ctx, q), right ? Side::right : Side::left).get() == want);
            }
            const auto fa = to_device(ctx, std::vector<float>{0.5f, 1.5f, 2.5f});
            CHECK(searchsorted(fa, to_device(ctx, std::vector<std::int32_t>{0, 1, 2, 3})).get() ==
                  std::vector<std::int64_t>{0, 1, 2, 3});
        }
    }
}

TEST_CASE("unique gives the sorted distinct values, first indices, the inverse and the counts") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(2047), std::size_t(50001)}) {
            INFO("n = " << n);
            const auto h = test::random_vector<std::int64_t>(n, -(std::int64_t(n) / 7), std::int64_t(n) / 7);
            std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> ref; // value -> (first, count)
            for (std::size_t i = 0; i < n; ++i) {
                auto [it, added] = ref.try_emplace(h[i], std::int64_t(i), 0);
                it->second.second++;
            }
            std::vector<std::int64_t> values, first, counts;
            for (const auto& [v, fc] : ref) {
                values.push_back(v);
                first.push_back(fc.first);
                counts.push_back(fc.second);
            }
            const auto x = to_device(ctx, h, {1, n});
            const auto u = unique(x, {.index = true, .inverse = true, .counts = true});
            CHECK(u.values.get() == values);
            CHECK(u.index.get() == first);
            CHECK(u.counts.get() == counts);
            const auto inv = u.inverse.get();
            REQUIRE(inv.size() == n);
            bool inverse_ok = true;
            for (std::size_t i = 0; i < n; ++i)
                inverse_ok = inverse_ok && values[std::size_t(inv[i])] == h[i];
            CHECK(inverse_ok);
            CHECK(unique(x).values.get() == values);
            CHECK(unique(x, {.counts = true}).counts.get() == counts);
        }
        // Floats: the NaNs are one value, and so are the zeros.
        const auto f = unique(to_device(ctx, std::vector<float>{NAN, 1.0f, -0.0f, NAN, 0.0f, 1.0f}), {.counts = true});
        const auto fv = f.values.get();
        REQUIRE(fv.size() == 3);
        CHECK(fv[0] == 0.0f);
        CHECK(fv[1] == 1.0f);
        CHECK(std::isnan(fv[2]));
        CHECK(f.counts.get() == std::vector<std::int64_t>{2, 2, 2});
        CHECK(unique(zeros<std::int32_t>(ctx, {0}), {.counts = true}).counts.size() == 0);
    }
}

TEST_CASE("bincount counts each value, with minlength, and sums weights in a fixed order") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(200003)}) {
            for (const std::int32_t hi : {3, 300, 20000}) { // local-memory bins and global ones
                INFO("n = " << n << ", values below " << hi);
                const auto h = test::random_vector<std::int32_t>(n, 0, hi - 1);
                const std::int32_t top = *std::max_element(h.begin(), h.end());
                std::vector<std::int64_t> want(std::size_t(std::max(top + 1, 5)));
                for (auto v : h)
                    want[std::size_t(v)]++;
                const auto x = to_device(ctx, h);
                CHECK(bincount(x, 5).get() == want);
                if (!ctx.device().has_fp64()) continue;
                const auto w = test::random_vector<double>(n, -1, 1);
                std::vector<double> ws(want.size()), mag(want.size());
                for (std::size_t i = 0; i < n; ++i) {
                    ws[std::size_t(h[i])] += w[i];
                    mag[std::size_t(h[i])] += std::abs(w[i]);
                }
                const auto dw = to_device(ctx, w);
                const auto got = bincount(x, dw, 5).get();
                REQUIRE(got.size() == ws.size());
                for (std::size_t b = 0; b < ws.size(); ++b)
                    CHECK(std::abs(got[b] - ws[b]) <= 1e-12 * (mag[b] + 1));
                CHECK(bincount(x, dw, 5).get() == got); // the same bits again
            }
        }
        CHECK(bincount(zeros<std::uint8_t>(ctx, {0}), 4).get() == std::vector<std::int64_t>(4, 0));
    }
}

TEST_CASE("histogram: numpy's uniform bins (values on the edges, outside, NaN), explicit edges, weights") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = 100003, bins = 37;
        auto h = test::random_vector<float>(n, -2.0f, 3.0f);
        h[0] = NAN;
        h[1] = 3.0f;  // the last edge: in the last bin
        h[2] = -2.0f; // the first
        h[3] = 7.0f;  // outside
        const auto x = to_device(ctx, h);
        const auto r = histogram(x, bins, -2.0, 3.0);
        const auto edges = r.edges.get();
        REQUIRE(edges.size() == bins + 1);
        CHECK(edges[0] == -2.0f);
        CHECK(edges[bins] == 3.0f);
        std::vector<std::int64_t> want(bins);
        for (float v : h) {
            if (!(v >= -2.0f && v <= 3.0f)) continue;
            // The bin whose edges hold v, the last one closed.
            std::size_t b = std::size_t(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin()) - 1;
            want[std::min(b, bins - 1)]++;
        }
        CHECK(r.counts.get() == want);
        // Values exactly on every edge.
        const auto on = histogram(to_device(ctx, edges), bins, -2.0, 3.0).counts.get();
        std::vector<std::int64_t> one(bins, 1);
        one[bins - 1] = 2;
        CHECK(on == one);
        // Without a range: [min, max] of the finite values (h has a NaN: numpy refuses, so do we).
        CHECK_THROWS_AS(histogram(x, 10), InvalidArgument);
        const auto ints = test::random_vector<std::int32_t>(5000, -50, 49);
        const auto xi = to_device(ctx, ints);
        if (ctx.device().has_fp64()) {
            const auto ri = histogram(xi, 10);
            const auto ei = ri.edges.get();
            CHECK(ei.front() == *std::min_element(ints.begin(), ints.end()));
            CHECK(ei.back() == *std::max_element(ints.begin(), ints.end()));
            const auto ci = ri.counts.get();
            CHECK(std::accumulate(ci.begin(), ci.end(), std::int64_t(0)) == 5000);
            // Explicit, uneven edges.
            const std::vector<double> e{-60, -10, -9.5, 0, 0.5, 20, 49};
            std::vector<std::int64_t> we(e.size() - 1);
            for (auto v : ints) {
                if (v < e.front() || v > e.back()) continue;
                std::size_t b = std::size_t(std::upper_bound(e.begin(), e.end(), double(v)) - e.begin()) - 1;
                we[std::min(b, e.size() - 2)]++;
            }
            CHECK(histogram(xi, to_device(ctx, e)).counts.get() == we);
            CHECK_THROWS_WITH(histogram(xi, to_device(ctx, std::vector<double>{0, 2, 1})),
                              Contains("increase monotonically"));
        }
    }
}

TEST_CASE("nonzero, flatnonzero and argwhere of arrays and expressions") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const Shape shape{7, 11, 13};
        const auto h = test::random_vector<std::int32_t>(shape_size(shape), -3, 3);
        const auto x = to_device(ctx, h, shape);
        std::vector<std::int64_t> flat, i0, i1, i2;
        for (std::size_t i = 0; i < h.size(); ++i)
            if (h[i] > 0) {
                flat.push_back(std::int64_t(i));
                i0.push_back(std::int64_t(i / (11 * 13)));
                i1.push_back(std::int64_t(i / 13 % 11));
                i2.push_back(std::int64_t(i % 13));
            }
        CHECK(flatnonzero(x > 0).get() == flat);
        const auto nz = nonzero(x > 0);
        REQUIRE(nz.size() == 3);
        CHECK(nz[0].get() == i0);
        CHECK(nz[1].get() == i1);
        CHECK(nz[2].get() == i2);
        const auto aw = argwhere(x > 0);
        REQUIRE(aw.shape() == Shape{flat.size(), 3});
        const auto awh = aw.get();
        bool same = true;
        for (std::size_t k = 0; k < flat.size(); ++k)
            same = same && awh[3 * k] == i0[k] && awh[3 * k + 1] == i1[k] && awh[3 * k + 2] == i2[k];
        CHECK(same);
        CHECK(flatnonzero(zeros<float>(ctx, {0})).size() == 0);
        CHECK(flatnonzero(zeros<float>(ctx, {100})).size() == 0);
    }
}

TEST_CASE("remove_if and partition keep the order; masks read and write numpy's elements") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const std::size_t n : {std::size_t(1), std::size_t(4097), std::size_t(100001)}) {
            const auto h = test::random_vector<float>(n, -1, 1);
            const auto x = to_device(ctx, h);
            std::vector<float> pos, rest;
            for (float v : h)
                (v > 0.25f ? pos : rest).push_back(v);
            CHECK(remove_if(x, x > 0.25f).get() == rest);
            const auto [yes, no] = partition(x, x > 0.25f);
            CHECK(yes.get() == pos);
            CHECK(no.get() == rest);
            CHECK(masked(x, x > 0.25f).get() == pos);
            // a[mask] = value and a[mask] = values.
            auto y = to_device(ctx, h);
            assign_masked(y, y > 0.25f, -5.0f);
            auto want = h;
            for (auto& v : want)
                if (v > 0.25f) v = -5.0f;
            CHECK(y.get() == want);
            auto z = to_device(ctx, h);
            std::vector<float> vals(pos.size());
            std::iota(vals.begin(), vals.end(), 100.0f);
            assign_masked(z, z > 0.25f, to_device(ctx, vals));
            auto want2 = h;
            for (std::size_t i = 0, k = 0; i < n; ++i)
                if (h[i] > 0.25f) want2[i] = vals[k++];
            CHECK(z.get() == want2);
        }
        // On a strided view of a 2-D array: the rest untouched.
        const auto h = test::random_vector<std::int32_t>(30 * 40, -9, 9);
        const auto base = to_device(ctx, h, {30, 40});
        const auto v = base(slice(0, 30, 2), slice(1, 40, 3));
        assign_masked(v, v < 0, std::int32_t(0));
        auto want = h;
        for (std::size_t i = 0; i < 30; i += 2)
            for (std::size_t j = 1; j < 40; j += 3)
                want[i * 40 + j] = std::max(want[i * 40 + j], 0);
        CHECK(base.get() == want);
    }
}

TEST_CASE("concatenate and stack along every axis, with numpy's promotion") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto ha = test::random_vector<std::int32_t>(2 * 3 * 4, -9, 9);
        const auto hb = test::random_vector<std::int32_t>(2 * 3 * 4, -9, 9);
        const auto a = to_device(ctx, ha, {2, 3, 4}), b = to_device(ctx, hb, {2, 3, 4});
        const auto at = [](const std::vector<std::int32_t>& h, std::size_t i, std::size_t j, std::size_t k) {
            return h[(i * 3 + j) * 4 + k];
        };
        for (std::int64_t axis = -3; axis < 3; ++axis) {
            const std::size_t ax = std::size_t((axis + 3) % 3);
            const auto c = concatenate({a, b, a}, axis);
            Shape s{2, 3, 4};
            s[ax] *= 3;
            REQUIRE(c.shape() == s);
            const auto hc = c.get();
            bool ok = true;
            std::size_t p = 0;
            for (std::size_t i = 0; i < s[0]; ++i)
                for (std::size_t j = 0; j < s[1]; ++j)
                    for (std::size_t k = 0; k < s[2]; ++k, ++p) {
                        std::size_t idx[3] = {i, j, k};
                        const std::size_t part = idx[ax] / (ax == 0 ? 2 : ax == 1 ? 3 : 4);
                        idx[ax] %= (ax == 0 ? 2 : ax == 1 ? 3 : 4);
                        ok = ok && hc[p] == at(part == 1 ? hb : ha, idx[0], idx[1], idx[2]);
                    }
            CHECK(ok);
        }
        for (std::int64_t axis = -4; axis < 4; ++axis) {
            const std::size_t ax = std::size_t((axis + 4) % 4);
            const auto st = stack({a, b}, axis);
            Shape s{2, 3, 4};
            s.insert(s.begin() + std::ptrdiff_t(ax), 2);
            REQUIRE(st.shape() == s);
            CHECK(st(slice({}, {}), slice({}, {}), slice({}, {}), slice({}, {})).get().size() == 48);
        }
        CHECK(stack({a, b}, 0).get() == [&] {
            auto v = ha;
            v.insert(v.end(), hb.begin(), hb.end());
            return v;
        }());
        // Mixed types promote: int32 and float32 to float64.
        const std::vector<detail::ArrayDesc> mixed{a.desc(), zeros<float>(ctx, {2, 3, 1}).desc()};
        if (ctx.device().has_fp64()) CHECK(detail::concatenate(mixed, -1).dtype == DType::float64);
    }
}

TEST_CASE("The algorithms check their arguments before launching") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto x = arange<float>(ctx, 10);
        const auto m = zeros<std::int32_t>(ctx, {2, 5});
        const auto c = zeros<std::complex<float>>(ctx, {4});
        const auto before = ctx.launch_count();
        CHECK_THROWS_AS(searchsorted(m, x), ShapeError);
        CHECK_THROWS_AS(searchsorted(c, c), InvalidArgument);
        CHECK_THROWS_AS(unique(c), InvalidArgument);
        CHECK_THROWS_AS(bincount(x), InvalidArgument);
        CHECK_THROWS_AS(bincount(m), ShapeError);
        CHECK_THROWS_AS(histogram(x, 0, 0.0, 1.0), InvalidArgument);
        CHECK_THROWS_WITH(histogram(x, 4, 1.0, 0.0), Contains("larger than its min"));
        CHECK_THROWS_AS(histogram(x, 4, 0.0, INFINITY), InvalidArgument);
        CHECK_THROWS_AS(masked(x, m > 0), ShapeError);
        CHECK_THROWS_AS(assign_masked(x, m > 0, 1.0f), ShapeError);
        CHECK_THROWS_AS(concatenate({m, m.reshape({5, 2})}), ShapeError);
        CHECK_THROWS_AS(concatenate({m, m}, 2), ShapeError);
        CHECK_THROWS_AS(stack({m, m.reshape({5, 2})}), ShapeError);
        CHECK_THROWS_AS(stack({m, m}, 3), ShapeError);
        CHECK_THROWS_AS(concatenate({full<float>(ctx, {}, 1.0f)}), ShapeError);
        CHECK_THROWS_AS(nonzero(full<float>(ctx, {}, 1.0f)), ShapeError);
        CHECK(ctx.launch_count() == before);
        // Refusals that need the data: checked by a reduction, nothing written.
        auto neg = to_device(ctx, std::vector<std::int32_t>{1, -2, 3});
        CHECK_THROWS_WITH(bincount(neg), Contains("negative"));
        auto y = arange<float>(ctx, 10);
        CHECK_THROWS_WITH(assign_masked(y, y > 4.5f, arange<float>(ctx, 3)), Contains("3 values"));
        CHECK(y.get() == arange<float>(ctx, 10).get());
        ctx.queue().finish();
    }
}
