// What docs/errors.md promises: sizes, ranges, types and arguments checked before work is
// enqueued, numpy's answers at the integer limits, and exact intervals. One section per case of
// the hardening issue; each failed (or corrupted memory) before its fix.
#include <climits>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include <xgpu/array.hpp>
#include <xgpu/detail/dynamic.hpp>
#include <xgpu/elementwise.hpp>
#include <xgpu/indexing.hpp>
#include <xgpu/random.hpp>
#include <xgpu/reduction.hpp>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

namespace {

// numpy.dot of two small-integer vectors: accumulated exactly, then wrapped to T.
template <class T> void check_small_integer_dot(const Context& ctx) {
    const std::size_t n = 1000 + test::rng()() % 5000;
    const auto a = random_vector<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    const auto b = random_vector<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    std::int64_t exact = 0;
    for (std::size_t i = 0; i < n; ++i)
        exact += std::int64_t(T(std::int64_t(a[i]) * std::int64_t(b[i]))); // the product wrapped to T, as x * y is
    auto d = dot(to_device(ctx, a), to_device(ctx, b));
    static_assert(std::is_same_v<typename decltype(d)::value_type, T>);
    CHECK(d.get() == T(exact));
}

} // namespace

TEST_CASE("1: dot of small integers and bool returns its own type (no overflow of the host value)") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        check_small_integer_dot<std::int8_t>(ctx);
        check_small_integer_dot<std::int16_t>(ctx);
        check_small_integer_dot<std::int32_t>(ctx);
        check_small_integer_dot<std::uint8_t>(ctx);
        auto x = to_device<std::int8_t>(ctx, std::vector<std::int8_t>{1, 2, 3});
        CHECK(dot(x, x).get() == 14);
        std::vector<bool> p(100, false), q(100, false);
        auto bp = to_device(ctx, p), bq = to_device(ctx, q);
        CHECK(dot(bp, bq).get() == false);
        p[37] = q[37] = true;
        CHECK(dot(to_device(ctx, p), to_device(ctx, q)).get() == true);
        // An Array<T> never adopts memory of another type.
        CHECK_THROWS_AS(Array<std::int8_t>(sum(x).desc()), InvalidArgument);
    }
}

TEST_CASE("2: sizes never wrap: huge shapes, arange counts and reshapes are refused") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        CHECK_THROWS_WITH(empty<double>(ctx, {1ull << 61}), Contains("too big"));
        CHECK_THROWS_WITH(empty<double>(ctx, {2400000000000000000ull}), Contains("too big"));
        CHECK_THROWS_WITH(empty<std::uint8_t>(ctx, {1ull << 32, 1ull << 32}), Contains("too big"));
        CHECK_THROWS_WITH(arange<float>(ctx, INFINITY), Contains("not finite or too big"));
        CHECK_THROWS_WITH(arange<float>(ctx, 1e30), Contains("not finite or too big"));
        CHECK_THROWS_WITH(arange<float>(ctx, 0.0, NAN), Contains("not finite or too big"));
        CHECK_THROWS_AS(arange<float>(ctx, 0.0, 1.0, 0.0), InvalidArgument);
        auto e = empty<float>(ctx, {0});
        CHECK_THROWS_AS(e.reshape({1ull << 32, 1ull << 32}), InvalidArgument);
        CHECK(e.reshape({0, 1ull << 40}).size() == 0);
        // A request the device can never satisfy names the true byte count.
        CHECK_THROWS_WITH(empty<double>(ctx, {1ull << 59}), Contains("4611686018427387904 bytes"));
    }
}

TEST_CASE("3: kernel declarations of types xgpu cannot check are refused; long is int64") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto x32 = zeros<std::int32_t>(ctx, {1000});
        ElementwiseKernel neg(ctx, "long* x", "x[i] = -1", "neg_long");
        CHECK_THROWS_WITH(neg(x32), Contains("declares int64") && Contains("int32 was given"));
        CHECK(x32.get() == std::vector<std::int32_t>(1000, 0));
        auto x64 = zeros<std::int64_t>(ctx, {1000});
        neg(x64);
        CHECK(x64.get() == std::vector<std::int64_t>(1000, -1));
        for (const char* decl : {"size_t* x", "float4* x", "my_struct* x", "half* x", "size_t n, float* x"})
            CHECK_THROWS_WITH(ElementwiseKernel(ctx, decl, "x[i] = 0", "bad_type"),
                              Contains("is not one xgpu can check"));
        CHECK_THROWS_AS(ReductionKernel<float>(ctx, "0", "a + b", "x[i]", "size_t* x"), InvalidArgument);
    }
}

TEST_CASE("4 and 10: ElementwiseKernel ranges follow numpy's slice rules and stay inside the array") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ElementwiseKernel set7(ctx, "float* z", "z[i] = 7.0f", "set7");
        auto count = [](const std::vector<float>& v, std::size_t lo, std::size_t hi) {
            std::size_t n = 0;
            for (std::size_t i = lo; i < hi; ++i)
                n += v[i] == 7.0f;
            return n;
        };
        auto z = zeros<float>(ctx, {50000});
        set7(slice(1000, -1), z);
        auto h = z.get();
        CHECK(count(h, 0, 50000) == 48999);
        CHECK(h[999] == 0.0f);
        CHECK(h[1000] == 7.0f);
        CHECK(h[49999] == 0.0f);
        z.fill(0.0f);
        set7(slice(-10, {}), z);
        h = z.get();
        CHECK(count(h, 0, 50000) == 10);
        CHECK(count(h, 49990, 50000) == 10);

        // A 100-element view in the middle of 300 zeros: nothing outside it may change.
        auto whole = zeros<float>(ctx, {300});
        auto v = whole(slice(100, 200));
        struct Case {
            Slice range;
            std::size_t first, count; // in view indices
        };
        for (const Case& c : {Case{slice(90, 200), 90, 10}, Case{slice(0, 200), 0, 100}, Case{slice(-5, 10), 0, 0},
                              Case{slice(0, std::int64_t(1) << 28), 0, 100}, Case{slice(-5, -200, -1), 0, 96},
                              Case{slice({}, {}, INT64_MIN), 99, 1}, Case{slice(INT64_MIN, INT64_MAX), 0, 100},
                              Case{slice(INT64_MAX, INT64_MIN, -1), 0, 100}}) {
            whole.fill(0.0f);
            set7(c.range, v);
            h = whole.get();
            INFO("range " << (c.range.start ? *c.range.start : 0) << ":" << (c.range.stop ? *c.range.stop : 0) << ":"
                          << c.range.step);
            CHECK(count(h, 0, 100) == 0);
            CHECK(count(h, 200, 300) == 0);
            CHECK(count(h, 100 + c.first, 100 + c.first + c.count) == c.count);
            CHECK(count(h, 100, 200) == c.count);
        }
        CHECK_THROWS_AS(set7(slice(0, 10, 0), v), InvalidArgument);

        // ReductionKernel::over may not run past its first array.
        ReductionKernel<float> total(ctx, "0", "a + b", "x[i]", "const float* x");
        auto x10 = full<float>(ctx, {10}, 1.0f);
        CHECK(total.over(10, x10).get() == 10.0f);
        CHECK(total.over(4, x10).get() == 4.0f);
        CHECK_THROWS_WITH(total.over(1000, x10), Contains("past the end"));
        CHECK_THROWS_WITH(total.over(std::size_t(1) << 30, x10), Contains("past the end"));
        CHECK_THROWS_AS(total.over(~std::size_t(0), x10), InvalidArgument);
    }
}

TEST_CASE("4 and 7: array slices at the int64 limits") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = random_vector<std::int32_t>(100, -1000, 1000);
        auto a = to_device(ctx, h);
        auto last = a(slice({}, {}, INT64_MIN));
        REQUIRE(last.size() == 1);
        CHECK(last.get()[0] == h[99]);
        CHECK(a(slice(INT64_MIN, INT64_MAX)).get() == h);
        auto rev = a(slice(INT64_MAX, INT64_MIN, -1)).get();
        CHECK(std::vector<std::int32_t>(rev.rbegin(), rev.rend()) == h);
        CHECK(a(slice(INT64_MAX, {}, INT64_MAX)).size() == 0);
        CHECK(a(slice(3, {}, INT64_MAX)).get() == std::vector<std::int32_t>{h[3]});
        CHECK_THROWS_AS(a[INT64_MIN], InvalidArgument);
        CHECK_THROWS_AS(a[INT64_MAX], InvalidArgument);
    }
}

TEST_CASE("6: launch arguments are checked against the parameters the backend reports") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto k = ctx.compile(R"(
            XGPU_KERNEL void put(XGPU_GLOBAL uint64_t* out, const uint64_t v) { out[XGPU_GLOBAL_ID(0)] = v; })")
                     .kernel("put");
        auto buf = ctx.alloc(64 * 8);
        ctx.queue().fill(buf, std::uint64_t(5));
        // An int32 where the kernel takes a uint64_t: both backends report the size.
        // DTypeError, an InvalidArgument.
        CHECK_THROWS_AS(k.launch(ctx.queue(), Grid{64}, buf, std::int32_t(1)), DTypeError);
        // A scalar where the kernel takes a pointer: OpenCL reports the parameter's address space;
        // CUDA reports sizes only, and a pointer and a uint64_t have the same (docs/runtime.md).
        if (ctx.backend() == "opencl")
            CHECK_THROWS_WITH(k.launch(ctx.queue(), Grid{64}, std::uint64_t(12345), std::uint64_t(1)),
                              Contains("argument 0") && Contains("buffer"));
        if (ctx.backend() == "opencl")
            CHECK_THROWS_AS(k.launch(ctx.queue(), Grid{64}, std::uint64_t(12345), std::uint64_t(1)), DTypeError);
        std::vector<std::uint64_t> out(64);
        ctx.queue().read(buf, out.data(), 64 * 8);
        CHECK(out == std::vector<std::uint64_t>(64, 5));
        k.launch(ctx.queue(), Grid{64}, buf, std::uint64_t(9));
        ctx.queue().read(buf, out.data(), 64 * 8);
        CHECK(out == std::vector<std::uint64_t>(64, 9));
    }
}

TEST_CASE("7: integer limits as numpy: MIN % -1, powers, empty arrays, grids") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto i32 = to_device<std::int32_t>(ctx, std::vector<std::int32_t>{INT_MIN, INT_MIN, 7, -7, INT_MAX});
        auto m1 = full<std::int32_t>(ctx, {5}, -1);
        Array<std::int32_t> r = i32 % m1;
        CHECK(r.get() == std::vector<std::int32_t>(5, 0));
        auto i64 = to_device<std::int64_t>(ctx, std::vector<std::int64_t>{INT64_MIN, 5, -5});
        Array<std::int64_t> r64 = i64 % full<std::int64_t>(ctx, {3}, -1);
        CHECK(r64.get() == std::vector<std::int64_t>(3, 0));
        Array<std::int64_t> r64s = i64 % std::int64_t(-1);
        CHECK(r64s.get() == std::vector<std::int64_t>(3, 0));

        // Integer powers: a negative scalar exponent is refused as numpy refuses it; negative
        // elements of an exponent array give 0 (or +-1 for a base of +-1), documented.
        auto base = to_device<std::int32_t>(ctx, std::vector<std::int32_t>{2, -1, 1, 3, -1});
        CHECK_THROWS_WITH(pow(base, std::int32_t(-1)), Contains("negative integer powers"));
        auto e = to_device<std::int32_t>(ctx, std::vector<std::int32_t>{-1, -3, -2, 4, 2});
        Array<std::int32_t> p = pow(base, e);
        CHECK(p.get() == std::vector<std::int32_t>{0, -1, 1, 81, 1});
        Array<std::int64_t> wrap = pow(full<std::int64_t>(ctx, {1}, 3), std::int64_t(41)); // wraps as numpy
        std::uint64_t want = 1;
        for (int j = 0; j < 41; ++j)
            want *= 3;
        CHECK(wrap.get()[0] == std::int64_t(want));

        // An empty Array passed to a kernel is named as such.
        ElementwiseKernel k(ctx, "float* x", "x[i] = 1", "one");
        Array<float> nothing;
        CHECK_THROWS_WITH(k(slice(0, 10), nothing), Contains("empty Array"));

        // A grid whose total does not fit in 64 bits is refused, not skipped.
        auto kk = ctx.compile("XGPU_KERNEL void nop(const int x) { (void)x; }").kernel("nop");
        const std::size_t big = std::size_t(1) << 32;
        CHECK_THROWS_WITH(kk.launch(ctx.queue(), Grid{Range(big, big, big)}, 1), Contains("64 bits"));
    }
}

TEST_CASE("13: uniform floats lie in [lo, hi), exactly") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        // At seed 99, block 6228008 gives u = 1 - 2^-24, and fma(3, u, 4) rounds to 7.0f.
        Philox gen(ctx, 99, 6228008);
        const auto got = gen.uniform<float>({4}, 4.0f, 7.0f).get();
        const auto host = Philox::host_uniform<float>(99, 6228008, 4, 4.0f, 7.0f);
        CHECK(got == host);
        for (float v : got) {
            CHECK(v >= 4.0f);
            CHECK(v < 7.0f);
        }
        CHECK(*std::max_element(got.begin(), got.end()) == std::nextafter(7.0f, 0.0f));
        // And over many draws, for both types.
        Philox g2(ctx, test::rng()());
        CHECK(max(g2.uniform<float>({1 << 20}, 1.0f, 2.0f)).get() < 2.0f);
        if (ctx.device().has_fp64()) CHECK(max(g2.uniform<double>({1 << 20}, -1.0, 0.0)).get() < 0.0);
    }
}

TEST_CASE("14: in-place operators follow numpy's same_kind rule") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = random_vector<std::int32_t>(1000, 1, 1000);
        auto a = to_device(ctx, h), b = to_device(ctx, h);
        CHECK_THROWS_WITH(a /= b, Contains("same_kind"));
        CHECK_THROWS_AS(a *= 2.5, InvalidArgument);
        CHECK(a.get() == h); // untouched
        auto u = to_device(ctx, random_vector<std::uint8_t>(100, 0, 100));
        CHECK_THROWS_AS(u += to_device(ctx, random_vector<std::int8_t>(100, -5, 5)), InvalidArgument);
        a += to_device(ctx, std::vector<std::int64_t>(1000, 1)); // int64 into int32: same kind
        auto ha = a.get();
        for (std::size_t i = 0; i < 1000; ++i)
            CHECK(ha[i] == h[i] + 1);
        auto f = to_device(ctx, random_vector<float>(100, 0.0f, 1.0f));
        const auto hf = f.get();
        f *= 2.0;
        auto got = f.get();
        for (std::size_t i = 0; i < 100; ++i)
            CHECK(got[i] == hf[i] * 2.0f);
    }
}

TEST_CASE("gaps: a.view<U>() reinterprets memory as numpy's a.view(dtype)") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = random_vector<float>(8 * 16, -1.0f, 1.0f);
        auto a = to_device(ctx, h, {8, 16});
        auto c = a.view<std::complex<float>>();
        CHECK(c.shape() == Shape{8, 8});
        const auto hc = c.get();
        for (std::size_t i = 0; i < 64; ++i)
            REQUIRE(hc[i] == std::complex<float>(h[2 * i], h[2 * i + 1]));
        // The same memory: writing through the view changes the original.
        c(2, 3).fill(std::complex<float>(5.0f, -6.0f));
        const auto back = a.get();
        CHECK(back[2 * 16 + 6] == 5.0f);
        CHECK(back[2 * 16 + 7] == -6.0f);
        CHECK(a.view<std::int32_t>().get()[0] == [&] {
            std::int32_t bits;
            std::memcpy(&bits, &h[0], 4);
            return bits;
        }());
        // And back from wider to narrower: rows of an (8, 8) uint64 seen as (8, 64) uint8.
        auto u = to_device(ctx, random_vector<std::uint64_t>(64, 0, ~0ull), {8, 8});
        auto bytes = u.view<std::uint8_t>();
        CHECK(bytes.shape() == Shape{8, 64});
        const auto hu = u.get();
        const auto hb = bytes.get();
        CHECK(std::memcmp(hu.data(), hb.data(), 512) == 0);
        CHECK_THROWS_WITH(a.transpose().view<double>(), Contains("last axis is not contiguous"));
        CHECK_THROWS_WITH(to_device(ctx, h, {16, 8})(_, slice(0, 3)).view<double>(), Contains("not a multiple"));
        CHECK_THROWS_AS(a(_, slice(1, {})).view<double>(), InvalidArgument); // starts mid-element
    }
}

TEST_CASE("gaps: take and subset reductions, indices checked before any work") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = 5000;
        const auto hx = random_vector<double>(n, -10.0, 10.0), hy = random_vector<double>(n, -1.0, 1.0);
        const auto hi = random_vector<std::int64_t>(2000, 0, std::int64_t(n) - 1);
        auto x = to_device(ctx, hx), y = to_device(ctx, hy);
        auto idx = to_device(ctx, hi);
        const auto got = take(x, idx).get();
        double s = 0, d = 0, s_abs = 0, d_abs = 0, mn = INFINITY, mx = -INFINITY;
        for (std::size_t k = 0; k < hi.size(); ++k) {
            REQUIRE(got[k] == hx[std::size_t(hi[k])]);
            s += hx[std::size_t(hi[k])];
            d += hx[std::size_t(hi[k])] * hy[std::size_t(hi[k])];
            s_abs += std::abs(hx[std::size_t(hi[k])]);
            d_abs += std::abs(hx[std::size_t(hi[k])] * hy[std::size_t(hi[k])]);
            mn = std::min(mn, hx[std::size_t(hi[k])]);
            mx = std::max(mx, hx[std::size_t(hi[k])]);
        }
        // Margins from the sums of magnitudes: sums of random signs may cancel to near zero.
        CHECK(subset_sum(idx, x).get() == Approx(s).epsilon(1e-12).margin(1e-13 * s_abs));
        CHECK(subset_dot(idx, x, y).get() == Approx(d).epsilon(1e-12).margin(1e-13 * d_abs));
        CHECK(subset_min(idx, x).get() == mn);
        CHECK(subset_max(idx, x).get() == mx);
        const auto small = random_vector<std::int16_t>(n, -300, 300);
        auto xs = to_device(ctx, small);
        std::int64_t ss = 0;
        for (auto k : hi)
            ss += small[std::size_t(k)];
        CHECK(subset_sum(idx, xs).get() == ss);
        std::int16_t smin = 300, smax = -300;
        for (auto k : hi) {
            smin = std::min(smin, small[std::size_t(k)]);
            smax = std::max(smax, small[std::size_t(k)]);
        }
        CHECK(subset_min(idx, xs).get() == smin);
        CHECK(subset_max(idx, xs).get() == smax);
        auto with_nan = to_device(ctx, std::vector<double>{1.0, NAN, -2.0});
        auto pick = to_device<std::int64_t>(ctx, std::vector<std::int64_t>{0, 2, 1});
        CHECK(std::isnan(subset_max(pick, with_nan).get()));
        CHECK(std::isnan(subset_min(pick, with_nan).get()));
        CHECK_THROWS_AS(subset_min(to_device(ctx, std::vector<std::int64_t>{}), x), InvalidArgument);

        // Negative indices count from the end (raise); clip and wrap as numpy.
        auto special = to_device<std::int32_t>(ctx, std::vector<std::int32_t>{-1, 0, 7, -5000}, {2, 2});
        auto t = take(x, special);
        CHECK(t.shape() == Shape{2, 2});
        CHECK(t.get() == std::vector<double>{hx[n - 1], hx[0], hx[7], hx[0]});
        auto wild = to_device<std::int32_t>(ctx, std::vector<std::int32_t>{-3, 5001, 2});
        CHECK(take(x, wild, TakeMode::clip).get() == std::vector<double>{hx[0], hx[n - 1], hx[2]});
        CHECK(take(x, wild, TakeMode::wrap).get() == std::vector<double>{hx[n - 3], hx[1], hx[2]});
        CHECK_THROWS_WITH(take(x, wild), Contains("5001 is out of bounds"));
        auto bad = to_device<std::int64_t>(ctx, std::vector<std::int64_t>{0, -1});
        CHECK_THROWS_WITH(subset_sum(bad, x), Contains("-1 is out of bounds"));
        CHECK_THROWS_AS(subset_dot(idx, x, to_device(ctx, hy)(slice(0, 10))), InvalidArgument);
        // Views and strided sources take in C order.
        auto m = to_device(ctx, hx, {50, 100}).transpose();
        auto first = to_device<std::int64_t>(ctx, std::vector<std::int64_t>{0, 1, 50});
        CHECK(take(m, first).get() == std::vector<double>{hx[0], hx[100], hx[1]});
    }
}

TEST_CASE("gaps: copy keeps F order when asked (numpy's order='K')") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = random_vector<float>(6 * 7, -1.0f, 1.0f);
        auto f = to_device(ctx, h, {6, 7}).transpose(); // F-contiguous (7, 6)
        auto k = f.copy(Order::K);
        CHECK(k.strides() == Strides{1, 7});
        CHECK(f.copy().strides() == Strides{6, 1});
        CHECK(f.copy(Order::F).strides() == Strides{1, 7});
        CHECK(k.get() == f.get());
        auto c = to_device(ctx, h, {6, 7});
        CHECK(c.copy(Order::K).strides() == Strides{7, 1});
        CHECK_THROWS_AS(empty<float>(ctx, {3}, Order::K), InvalidArgument);
    }
}

TEST_CASE("memory of another library is adopted with an owner, on the CUDA backend only") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        CHECK_THROWS_WITH(detail::adopt_device_memory(ctx, 4096, 64, nullptr), Contains("an owner is required"));
        CHECK_THROWS_WITH(detail::adopt_device_memory(ctx, 0, 64, std::make_shared<int>(1)),
                          Contains("a null address"));
        if (ctx.backend() != "cuda") {
            CHECK_THROWS_WITH(detail::adopt_device_memory(ctx, 4096, 64, std::make_shared<int>(1)),
                              Contains("have no device addresses"));
            continue;
        }
        // On CUDA: xgpu's own allocation, adopted a second time, with an owner that keeps it.
        auto a = arange<float>(ctx, 16);
        const auto keep = std::make_shared<Array<float>>(a);
        auto b = detail::adopt_device_memory(ctx, a.buffer().device_address(), 64, keep);
        CHECK(b.device_address() == a.buffer().device_address());
    }
}
