// Scans on every backend against host references on fresh random data: inclusive and exclusive
// sums exact for integers at every awkward size, other operators (one that does not commute),
// floats within a tolerance and repeatable to the bit, segmented scans, cumsum's types,
// stream compaction, views, aliasing, deep recursion over small tiles, and errors.
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <xgpu/scan.hpp>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

namespace {

const std::vector<std::size_t>& sizes() {
    static const std::vector<std::size_t> s = [] {
        std::vector<std::size_t> v{0, 1, 10, 255, 256, 257};
        for (std::size_t n = 1019; n <= 1029; ++n)
            v.push_back(n);
        v.push_back((std::size_t(1) << 20) + 1);
        return v;
    }();
    return s;
}

// Host scans: inclusive or exclusive, restarting where flags[i] is set (flags may be empty).
template <class T, class Op>
std::vector<T> host_scan(const std::vector<T>& x, Op op, T neutral, bool inclusive,
                         const std::vector<std::uint8_t>& flags = {}) {
    std::vector<T> out(x.size());
    T acc = neutral;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (i == 0 || (!flags.empty() && flags[i])) acc = neutral;
        if (inclusive) {
            acc = op(acc, x[i]);
            out[i] = acc;
        } else {
            out[i] = acc;
            acc = op(acc, x[i]);
        }
    }
    return out;
}

// Wrapping addition, as the device computes it (signed overflow is not tested, only unsigned).
template <class T> T wrap_add(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return T(U(a) + U(b));
}

template <class T> std::vector<T> random_ints(std::size_t n) {
    if constexpr (std::is_same_v<T, std::int32_t>)
        return random_vector<T>(n, -1000, 1000); // no overflow at 2^20
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return random_vector<T>(n, -(1ll << 40), 1ll << 40);
    else {
        std::vector<T> v(n); // the whole range: sums wrap modulo 2^32
        for (auto& x : v)
            x = T(test::rng()());
        return v;
    }
}

std::vector<std::uint8_t> random_flags(std::size_t n, double density) {
    std::vector<std::uint8_t> f(n);
    std::bernoulli_distribution d(density);
    for (auto& x : f)
        x = d(test::rng()) ? 1 : 0;
    return f;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
    std::string name, old;
    bool had;
    ScopedEnv(const char* n, const char* value) : name(n), had(std::getenv(n) != nullptr) {
        if (had) old = std::getenv(n);
        ::setenv(n, value, 1);
    }
    ~ScopedEnv() { had ? ::setenv(name.c_str(), old.c_str(), 1) : ::unsetenv(name.c_str()); }
};

template <class T> void check_sums(const Context& ctx) {
    ScanKernel<T> scan(ctx, "a + b", "0");
    for (const std::size_t n : sizes()) {
        INFO("n = " << n);
        const auto h = random_ints<T>(n);
        const auto x = to_device(ctx, h);
        auto y = empty<T>(ctx, {n});
        scan.inclusive(x, y);
        REQUIRE(y.get() == host_scan<T>(h, wrap_add<T>, 0, true));
        scan.exclusive(x, y);
        REQUIRE(y.get() == host_scan<T>(h, wrap_add<T>, 0, false));
    }
}

} // namespace

TEST_CASE("Inclusive and exclusive sums are exact for int32, int64 and uint32 at every size") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        check_sums<std::int32_t>(ctx);
        check_sums<std::int64_t>(ctx);
        check_sums<std::uint32_t>(ctx);
    }
}

TEST_CASE("Scans with other operators: max, a product modulo a prime, bitwise or, and one that does not commute") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ScanKernel<std::int32_t> max(ctx, "a > b ? a : b", "-2147483647 - 1");
        ScanKernel<std::int64_t> mulmod(ctx, "(a * b) % 1000003", "1");
        ScanKernel<std::uint32_t> bitor_(ctx, "a | b", "0u");
        // Composition of affine maps x -> m x + c (mod 2^32), packed as m << 32 | c: apply a, then b.
        ScanKernel<std::uint64_t> affine(ctx, "compose(a, b)", "(uint64_t)1 << 32",
                                         "XGPU_DEVICE_FN uint64_t compose(uint64_t a, uint64_t b) {\n"
                                         "    const uint32_t ma = (uint32_t)(a >> 32), ca = (uint32_t)a;\n"
                                         "    const uint32_t mb = (uint32_t)(b >> 32), cb = (uint32_t)b;\n"
                                         "    return ((uint64_t)(mb * ma) << 32) | (uint32_t)(mb * ca + cb);\n"
                                         "}\n");
        auto compose = [](std::uint64_t a, std::uint64_t b) {
            const auto ma = std::uint32_t(a >> 32), ca = std::uint32_t(a), mb = std::uint32_t(b >> 32),
                       cb = std::uint32_t(b);
            return (std::uint64_t(std::uint32_t(mb * ma)) << 32) | std::uint32_t(mb * ca + cb);
        };
        for (const std::size_t n : {std::size_t(1), std::size_t(257), std::size_t(1023), std::size_t(100003)}) {
            INFO("n = " << n);
            const auto hm = random_vector<std::int32_t>(n, -2000000000, 2000000000);
            auto m = to_device(ctx, hm);
            auto out = max.inclusive(m);
            REQUIRE(out.get() == host_scan<std::int32_t>(
                                     hm, [](auto a, auto b) { return std::max(a, b); },
                                     std::numeric_limits<std::int32_t>::min(), true));
            max.exclusive(m, out);
            REQUIRE(out.get() == host_scan<std::int32_t>(
                                     hm, [](auto a, auto b) { return std::max(a, b); },
                                     std::numeric_limits<std::int32_t>::min(), false));

            const auto hp = random_vector<std::int64_t>(n, 1, 1000002);
            REQUIRE(mulmod.inclusive(to_device(ctx, hp)).get() ==
                    host_scan<std::int64_t>(
                        hp, [](auto a, auto b) { return a * b % 1000003; }, 1, true));

            std::vector<std::uint32_t> hb(n);
            for (auto& v : hb)
                v = std::uint32_t(1) << (test::rng()() % 32) | std::uint32_t(1) << (test::rng()() % 32);
            REQUIRE(bitor_.exclusive(to_device(ctx, hb)).get() ==
                    host_scan<std::uint32_t>(
                        hb, [](auto a, auto b) { return a | b; }, 0, false));

            std::vector<std::uint64_t> ha(n);
            for (auto& v : ha)
                v = test::rng()() | (std::uint64_t(1) << 32); // odd multipliers
            REQUIRE(affine.inclusive(to_device(ctx, ha)).get() ==
                    host_scan<std::uint64_t>(ha, compose, std::uint64_t(1) << 32, true));
            REQUIRE(affine.exclusive(to_device(ctx, ha)).get() ==
                    host_scan<std::uint64_t>(ha, compose, std::uint64_t(1) << 32, false));
        }
    }
}

TEST_CASE("Scans of bool (logical or) and of complex numbers (a product)") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = 3001;
        std::vector<bool> hb(n, false);
        hb[1234] = true;
        ScanKernel<bool> any(ctx, "a || b", "0");
        auto seen = any.inclusive(to_device(ctx, hb)).get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(seen[i] == (i >= 1234));
        // Unit complex numbers i^k: the product of the first k is i^(sum of k), exact.
        std::vector<std::complex<float>> hc(n);
        std::vector<int> turns(n);
        const std::complex<float> units[4] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
        for (std::size_t i = 0; i < n; ++i)
            hc[i] = units[turns[i] = int(test::rng()() % 4)];
        ScanKernel<std::complex<float>> prod(ctx, "xgpu_cfloat_mul(a, b)", "xgpu_cfloat_make(1.0f, 0.0f)");
        auto got = prod.exclusive(to_device(ctx, hc)).get();
        int sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            REQUIRE(got[i] == units[sum % 4]);
            sum += turns[i];
        }
    }
}

TEST_CASE("Float sums are within a tolerance of the sequential sum, and the same bits on a second run") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto check = [&]<class T>(T, double tol) {
            ScanKernel<T> scan(ctx, "a + b", "0");
            for (const std::size_t n : sizes()) {
                INFO("n = " << n << ", " << name(dtype_v<T>));
                const auto h = random_vector<T>(n, -1, 1);
                const auto x = to_device(ctx, h);
                for (const bool inclusive : {true, false}) {
                    auto y = empty<T>(ctx, {n});
                    inclusive ? scan.inclusive(x, y) : scan.exclusive(x, y);
                    const auto got = y.get();
                    double ref = 0, mag = 0;
                    for (std::size_t i = 0; i < n; ++i) {
                        if (inclusive) ref += h[i], mag += std::abs(h[i]);
                        if (std::abs(got[i] - ref) > tol * (mag + 1))
                            FAIL("element " << i << ": " << got[i] << " vs " << ref);
                        if (!inclusive) ref += h[i], mag += std::abs(h[i]);
                    }
                    auto again = empty<T>(ctx, {n});
                    inclusive ? scan.inclusive(x, again) : scan.exclusive(x, again);
                    const auto got2 = again.get();
                    REQUIRE((n == 0 || std::memcmp(got.data(), got2.data(), n * sizeof(T)) == 0));
                }
            }
        };
        check(float{}, 1e-5);
        // The neutral element 0.0 is applied to no value: a sum of -0.0s stays -0.0, as numpy's.
        const auto zeros = cumsum(full<float>(ctx, {100003}, -0.0f)).get();
        for (const float z : zeros)
            REQUIRE(std::signbit(z));
        if (ctx.device().has_fp64()) check(double{}, 1e-13);
    }
}

TEST_CASE("Segmented scans: random flags, a flag on the first element, on every element, on none") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ScanKernel<std::int64_t> sum(ctx, "a + b", "0");
        ScanKernel<std::int32_t> max(ctx, "max(a, b)", "-2147483647 - 1");
        for (const std::size_t n : sizes()) {
            if (n == 0) continue;
            const auto h = random_ints<std::int64_t>(n);
            const auto hm = random_vector<std::int32_t>(n, -1000000, 1000000);
            const auto x = to_device(ctx, h);
            const auto xm = to_device(ctx, hm);
            for (const int pattern : {0, 1, 2, 3, 4}) {
                std::vector<std::uint8_t> hf = pattern == 0   ? random_flags(n, 0.01)
                                               : pattern == 1 ? random_flags(n, 0.5)
                                               : pattern == 2 ? std::vector<std::uint8_t>(n, 1)
                                                              : std::vector<std::uint8_t>(n, 0);
                if (pattern == 3) hf[0] = 1;
                INFO("n = " << n << ", flag pattern " << pattern);
                const auto flags = to_device(ctx, hf);
                auto y = empty<std::int64_t>(ctx, {n});
                sum.inclusive(x, y, flags);
                REQUIRE(y.get() == host_scan<std::int64_t>(h, wrap_add<std::int64_t>, 0, true, hf));
                sum.exclusive(x, y, flags);
                REQUIRE(y.get() == host_scan<std::int64_t>(h, wrap_add<std::int64_t>, 0, false, hf));
                // bool flags, and a second operator
                std::vector<bool> hb(hf.begin(), hf.end());
                auto ym = empty<std::int32_t>(ctx, {n});
                max.inclusive(xm, ym, to_device(ctx, hb));
                REQUIRE(ym.get() == host_scan<std::int32_t>(
                                        hm, [](auto a, auto b) { return std::max(a, b); },
                                        std::numeric_limits<std::int32_t>::min(), true, hf));
            }
        }
    }
}

TEST_CASE("cumsum has numpy's result types, flattens in C order, and takes views and expressions") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = 5000;
        const auto h8 = random_vector<std::int8_t>(n, -128, 127);
        auto c8 = cumsum(to_device(ctx, h8));
        static_assert(std::is_same_v<decltype(c8), Array<std::int64_t>>);
        std::vector<std::int64_t> want(n);
        std::int64_t acc = 0;
        for (std::size_t i = 0; i < n; ++i)
            want[i] = acc += h8[i];
        CHECK(c8.get() == want);

        const auto hu = random_vector<std::uint16_t>(n, 0, 65535);
        auto cu = cumsum(to_device(ctx, hu));
        static_assert(std::is_same_v<decltype(cu), Array<std::uint64_t>>);
        std::uint64_t uacc = 0;
        auto gu = cu.get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(gu[i] == (uacc += hu[i]));

        std::vector<bool> hb(n);
        for (std::size_t i = 0; i < n; ++i)
            hb[i] = test::rng()() & 1;
        auto cb = cumsum(to_device(ctx, hb));
        static_assert(std::is_same_v<decltype(cb), Array<std::int64_t>>);
        acc = 0;
        auto gb = cb.get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(gb[i] == (acc += hb[i]));

        const auto hf = random_vector<float>(n, -1, 1);
        auto cf = cumsum(to_device(ctx, hf));
        static_assert(std::is_same_v<decltype(cf), Array<float>>);
        double facc = 0;
        auto gf = cf.get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(gf[i] == Approx(facc += hf[i]).margin(1e-4));

        // 2-D, a strided view, an expression: flattened in C order, as numpy.cumsum(a).
        const auto h32 = random_vector<std::int32_t>(60 * 70, -100, 100);
        auto a = to_device(ctx, h32, {60, 70});
        auto c2 = cumsum(a);
        CHECK(c2.shape() == Shape{4200});
        std::vector<std::int64_t> w2(h32.size());
        acc = 0;
        for (std::size_t i = 0; i < h32.size(); ++i)
            w2[i] = acc += h32[i];
        CHECK(c2.get() == w2);
        auto view = a(slice(1, {}, 3), slice({}, {}, -2)); // rows 1, 4, ..., columns reversed, every other
        auto cv = cumsum(view);
        std::vector<std::int64_t> wv;
        acc = 0;
        for (std::size_t r = 1; r < 60; r += 3)
            for (std::int64_t c = 69; c >= 0; c -= 2)
                wv.push_back(acc += h32[r * 70 + std::size_t(c)]);
        CHECK(cv.get() == wv);
        auto ce = cumsum(a * 2 + 1);
        static_assert(std::is_same_v<decltype(ce), Array<std::int64_t>>);
        acc = 0;
        auto ge = ce.get();
        for (std::size_t i = 0; i < h32.size(); ++i)
            REQUIRE(ge[i] == (acc += 2 * h32[i] + 1));

        CHECK(cumsum(empty<std::int16_t>(ctx, {0})).size() == 0);

        // complex64 stays complex64.
        std::vector<std::complex<float>> hc(n);
        for (auto& v : hc)
            v = {float(test::rng()() % 201) - 100, float(test::rng()() % 201) - 100};
        auto cc = cumsum(to_device(ctx, hc));
        static_assert(std::is_same_v<decltype(cc), Array<std::complex<float>>>);
        std::complex<float> cacc = 0;
        auto gc = cc.get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(gc[i] == (cacc += hc[i])); // small integers: exact
    }
}

TEST_CASE("copy_if keeps the elements where the predicate holds, in order") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1027), (std::size_t(1) << 20) + 1}) {
            const auto h = random_vector<double>(n, 0, 1);
            const auto hi = random_vector<std::int32_t>(n, -1000000, 1000000);
            if (!ctx.device().has_fp64()) break;
            const auto x = to_device(ctx, h);
            const auto xi = to_device(ctx, hi);
            for (const double density : {0.0, 0.01, 0.5, 1.0}) {
                INFO("n = " << n << ", density " << density);
                // An expression: the elements below the threshold.
                auto kept = copy_if(x, x < density);
                std::vector<double> want;
                for (auto v : h)
                    if (v < density) want.push_back(v);
                REQUIRE(kept.size() == want.size());
                REQUIRE(kept.get() == want);
                // A bool array of another array's values.
                const auto hf = random_flags(n, density);
                std::vector<bool> hb(hf.begin(), hf.end());
                auto kept_i = copy_if(xi, to_device(ctx, hb));
                std::vector<std::int32_t> want_i;
                for (std::size_t i = 0; i < n; ++i)
                    if (hf[i]) want_i.push_back(hi[i]);
                REQUIRE(kept_i.get() == want_i);
                // Into a given array, with the count on the device.
                auto out = full<std::int32_t>(ctx, {n + 2}, -7);
                auto count = copy_if(xi, to_device(ctx, hf), out);
                REQUIRE(count.get() == std::int64_t(want_i.size()));
                auto got = out.get();
                for (std::size_t i = 0; i < want_i.size(); ++i)
                    REQUIRE(got[i] == want_i[i]);
                for (std::size_t i = want_i.size(); i < n + 2; ++i)
                    REQUIRE(got[i] == -7);
            }
        }
    }
}

TEST_CASE("Scans of views, in place, and over overlapping views") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ScanKernel<std::int64_t> sum(ctx, "a + b", "0");
        const std::size_t n = 50011; // several tiles on every device
        const auto h = random_ints<std::int64_t>(n);
        // In place.
        auto x = to_device(ctx, h);
        sum.inclusive(x, x);
        CHECK(x.get() == host_scan<std::int64_t>(h, wrap_add<std::int64_t>, 0, true));
        x = to_device(ctx, h);
        sum.exclusive(x, x);
        CHECK(x.get() == host_scan<std::int64_t>(h, wrap_add<std::int64_t>, 0, false));
        // Strided input and output views.
        x = to_device(ctx, h);
        auto y = zeros<std::int64_t>(ctx, {2 * n});
        sum.exclusive(x(slice({}, {}, -1)), y(slice(1, {}, 2)));
        std::vector<std::int64_t> rev(h.rbegin(), h.rend());
        const auto want = host_scan<std::int64_t>(rev, wrap_add<std::int64_t>, 0, false);
        const auto gy = y.get();
        for (std::size_t i = 0; i < n; ++i) {
            REQUIRE(gy[2 * i] == 0);
            REQUIRE(gy[2 * i + 1] == want[i]);
        }
        // Output one element after the input, in the same buffer.
        x = to_device(ctx, h);
        sum.inclusive(x(slice(0, n - 1)), x(slice(1, {})));
        std::vector<std::int64_t> first(h.begin(), h.end() - 1);
        auto shifted = host_scan<std::int64_t>(first, wrap_add<std::int64_t>, 0, true);
        shifted.insert(shifted.begin(), h[0]);
        CHECK(x.get() == shifted);
        // Segment flags in a strided view.
        auto hf = random_flags(2 * n, 0.02);
        auto flags = to_device(ctx, hf);
        x = to_device(ctx, h);
        sum.inclusive(x, y(slice(0, n)), flags(slice({}, {}, 2)));
        std::vector<std::uint8_t> every_other(n);
        for (std::size_t i = 0; i < n; ++i)
            every_other[i] = hf[2 * i];
        auto gy2 = y.get();
        CHECK(std::vector<std::int64_t>(gy2.begin(), gy2.begin() + std::ptrdiff_t(n)) ==
              host_scan<std::int64_t>(h, wrap_add<std::int64_t>, 0, true, every_other));
    }
}

// XGPU_SCAN_TILE=<wg>x<k>[s|d] picks the tile and its kind: staged through local memory (what GPUs
// get) or direct (CPUs), so that both run on every device.
TEST_CASE("Both kinds of tile, and many levels of tile totals (tiny tiles), segmented and not") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        // Direct runs of 4 (2x1024d), 2 (4x6d) and 1 (1x3d) sub-runs; 1x2s at 140001: more than
        // 2^16 work-groups, launched in rows.
        for (const char* tile : {"256x8s", "2x1024d", "4x2s", "4x6d", "1x3d", "1x2s", "64x5s"}) {
            ScopedEnv env("XGPU_SCAN_TILE", tile);
            ScanKernel<std::int64_t> sum(ctx, "a + b", "0");
            for (const std::size_t n : {std::size_t(1), std::size_t(9), std::size_t(4097), std::size_t(140001)}) {
                INFO("tile " << tile << ", n = " << n);
                const auto h = random_ints<std::int64_t>(n);
                const auto hf = random_flags(n, 0.001);
                const auto x = to_device(ctx, h);
                auto y = empty<std::int64_t>(ctx, {n});
                sum.inclusive(x, y);
                REQUIRE(y.get() == host_scan<std::int64_t>(h, wrap_add<std::int64_t>, 0, true));
                sum.exclusive(x, y, to_device(ctx, hf));
                REQUIRE(y.get() == host_scan<std::int64_t>(h, wrap_add<std::int64_t>, 0, false, hf));
            }
        }
    }
}

TEST_CASE("Scans check their arguments before launching") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ScanKernel<float> sum(ctx, "a + b", "0");
        auto x = arange<float>(ctx, 10), y = empty<float>(ctx, {11});
        auto flags = zeros<std::uint8_t>(ctx, {9});
        const auto before = ctx.launch_count();
        CHECK_THROWS_AS(sum.inclusive(x, y), ShapeError);
        CHECK_THROWS_WITH(sum.exclusive(x, y), Contains("(10,)") && Contains("(11,)"));
        CHECK_THROWS_AS(sum.inclusive(x, x, flags), ShapeError);
        CHECK_THROWS_AS(copy_if(x, y > 0), ShapeError);
        CHECK_THROWS_AS(ScanKernel<float>(ctx, "a +* b", "0").inclusive(x, x), CompileError);
        CHECK(ctx.launch_count() == before);
        CHECK_THROWS_WITH(copy_if(x, x > 0, y(slice({}, {}, 2))), Contains("non-contiguous"));
        // Nothing left running at exit: PoCL 3.1 may still be compiling the fills' kernels in its
        // worker thread while LLVM is torn down, and crash.
        ctx.queue().finish();
    }
}
