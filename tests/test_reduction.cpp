// Reductions on every backend against host references: sums and dots of many sizes for every
// numeric type, exact min/max/argmin/argmax with NaN as numpy, any/all, norms, views, fused
// expressions, axes, device scalars feeding later expressions, determinism, ReductionKernel.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>

#include <xgpu/codegen.hpp>
#include <xgpu/elementwise.hpp>
#include <xgpu/reduction.hpp>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

namespace {

const std::vector<std::size_t> sizes = {0,   1,   2,   3,   4,   5,   6,    7,    31,   32,    33,
                                        127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 15391, (1u << 20) + 5};

template <class T> constexpr bool is_complex_v = !std::is_arithmetic_v<T>;

template <class T> std::vector<T> values(std::size_t n) {
    std::vector<T> v(n);
    auto& g = test::rng();
    for (auto&& x : v) {
        if constexpr (std::is_same_v<T, bool>)
            x = g() & 1;
        else if constexpr (is_complex_v<T>) {
            std::uniform_real_distribution<typename T::value_type> d(-1, 1);
            x = T(d(g), d(g));
        } else if constexpr (std::is_floating_point_v<T>) {
            std::uniform_real_distribution<T> d(-1, 1);
            x = d(g);
        } else {
            std::uniform_int_distribution<long long> d(std::is_signed_v<T> ? -100 : 0, 100);
            x = T(d(g));
        }
    }
    return v;
}

template <class R, class T> R host_sum(const std::vector<T>& v) {
    if constexpr (is_complex_v<R>) {
        std::complex<long double> s = 0;
        for (const auto& x : v)
            s += std::complex<long double>(x.real(), x.imag());
        return R(typename R::value_type(s.real()), typename R::value_type(s.imag()));
    } else if constexpr (std::is_floating_point_v<R>) {
        long double s = 0;
        for (const auto& x : v)
            s += x;
        return R(s);
    } else {
        R s = 0;
        for (const auto& x : v)
            s = R(s + R(x));
        return s;
    }
}

template <class T> double magnitude(const T& x) {
    if constexpr (is_complex_v<T>)
        return std::abs(std::complex<double>(x.real(), x.imag()));
    else
        return std::fabs(double(x));
}

template <class R> void check_close(const R& got, const R& want, double scale, std::size_t n) {
    if constexpr (is_complex_v<R> || std::is_floating_point_v<R>) {
        const double eps = sizeof(R) == 4 || sizeof(R) == 8 && is_complex_v<R> ? 1.2e-7 : 2.3e-16;
        REQUIRE(magnitude(got - want) <= (16 + std::log2(double(n) + 1)) * eps * std::max(1.0, scale));
    } else {
        REQUIRE(got == want);
    }
}

template <class T> void sums_and_dots(const Context& ctx) {
    using S = typename decltype(sum(std::declval<Array<T>>()))::value_type;
    if (!ctx.device().has_fp64() && (std::is_same_v<S, double> || std::is_same_v<S, std::complex<double>>)) return;
    INFO("type " << name(dtype_v<T>));
    for (std::size_t n : sizes) {
        INFO("n = " << n);
        const auto h = values<T>(n), h2 = values<T>(n);
        auto x = to_device(ctx, h), y = to_device(ctx, h2);
        double scale = 0;
        for (const auto& v : h)
            scale += magnitude(v);
        check_close<S>(sum(x).get(), host_sum<S>(h), scale, n);
        // Norms of the types with a path of their own on CPUs (8-bit squares as integers, complex
        // parts as vectors) and of one general integer and one float type: a program each, and
        // PoCL compiles each for seconds.
        constexpr bool norm_checked = std::is_same_v<T, bool> || std::is_same_v<T, std::int8_t> ||
                                      std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int16_t> ||
                                      std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>;
        if (norm_checked && (ctx.device().has_fp64() || sizeof(T) == 4 && !std::is_integral_v<T>)) {
            long double squares = 0;
            for (const auto& v : h)
                squares += (long double)magnitude(v) * (long double)magnitude(v);
            const double want = std::sqrt(double(squares));
            const double tol = sizeof(decltype(norm(x).get())) == 4 ? 1e-5 : 1e-13;
            CHECK(double(norm(x).get()) == Approx(want).epsilon(tol).margin(1e-300));
        }
        if constexpr (!std::is_same_v<T, bool>) {
            using D = typename decltype(dot(x, y))::value_type;
            std::vector<D> prod(n);
            double pscale = 0;
            for (std::size_t i = 0; i < n; ++i) {
                prod[i] = D(h[i]) * D(h2[i]);
                pscale += magnitude(prod[i]);
            }
            check_close<D>(dot(x, y).get(), host_sum<D>(prod), pscale, n);
        }
    }
}

template <std::size_t I = 0> void all_types(const Context& ctx) {
    using Types = std::tuple<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                             std::uint32_t, std::uint64_t, float, double, std::complex<float>, std::complex<double>>;
    if constexpr (I < std::tuple_size_v<Types>) {
        sums_and_dots<std::tuple_element_t<I, Types>>(ctx);
        all_types<I + 1>(ctx);
    }
}

} // namespace

TEST_CASE("sum and dot of many sizes for every numeric type") {
    static_assert(std::is_same_v<decltype(sum(std::declval<Array<std::int8_t>>()))::value_type, std::int64_t>);
    static_assert(std::is_same_v<decltype(sum(std::declval<Array<std::uint16_t>>()))::value_type, std::uint64_t>);
    static_assert(std::is_same_v<decltype(sum(std::declval<Array<float>>()))::value_type, float>);
    static_assert(std::is_same_v<decltype(norm(std::declval<Array<std::int32_t>>()))::value_type, double>);
    XGPU_FOR_EACH_CONTEXT(ctx) {
        all_types(ctx);
    }
}

TEST_CASE("sums and norms of 8- and 16-bit integers at their extremes are exact") {
    // Every element at the type's most negative or largest value: CPUs add these in 32-bit lanes
    // for bounded runs before widening (reduction.cpp, narrow_steps), which must neither overflow
    // nor lose the sign. Sizes leave a ragged end after the vector steps.
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (std::size_t n : {std::size_t(1) << 20, (std::size_t(1) << 21) + 37}) {
            INFO("n = " << n);
            const auto nn = static_cast<long long>(n);
            CHECK(static_cast<long long>(sum(full<std::int8_t>(ctx, {n}, std::int8_t(-128))).get()) == -128LL * nn);
            CHECK(static_cast<unsigned long long>(sum(full<std::uint8_t>(ctx, {n}, std::uint8_t(255))).get()) ==
                  255ULL * n);
            CHECK(static_cast<long long>(sum(full<std::int16_t>(ctx, {n}, std::int16_t(-32768))).get()) ==
                  -32768LL * nn);
            CHECK(static_cast<unsigned long long>(sum(full<std::uint16_t>(ctx, {n}, std::uint16_t(65535))).get()) ==
                  65535ULL * n);
            CHECK(static_cast<long long>(sum(full<bool>(ctx, {n}, true)).get()) == nn);
            // norm2 of 8-bit elements (a float32 result): CPUs square them as 32-bit integers for
            // bounded runs, so the sum is exact and the result the root correctly rounded.
            CHECK(norm(full<std::int8_t>(ctx, {n}, std::int8_t(-128))).get() ==
                  Approx(std::sqrt(16384.0 * double(n))).epsilon(2e-7));
            CHECK(norm(full<std::uint8_t>(ctx, {n}, std::uint8_t(255))).get() ==
                  Approx(std::sqrt(65025.0 * double(n))).epsilon(2e-7));
            CHECK(norm(full<bool>(ctx, {n}, true)).get() == Approx(std::sqrt(double(n))).epsilon(2e-7));
        }
    }
}

TEST_CASE("min, max, argmin, argmax exact, with NaN as numpy; any and all") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1000), std::size_t(300001)}) {
            auto h = random_vector<std::int32_t>(n, -1000000, 1000000);
            h[n / 2] = 5000000; // a tie for argmax: the first occurrence wins
            if (n > 1) h[n - 1] = 5000000;
            auto x = to_device(ctx, h);
            CHECK(max(x).get() == *std::max_element(h.begin(), h.end()));
            CHECK(min(x).get() == *std::min_element(h.begin(), h.end()));
            CHECK(argmax(x).get() == std::max_element(h.begin(), h.end()) - h.begin());
            CHECK(argmin(x).get() == std::min_element(h.begin(), h.end()) - h.begin());
            CHECK(any(x > 4999999).get());
            CHECK(!all(x > 4999999).get() == (n > 1));
            CHECK(all(x >= -1000000).get());
        }
        auto f = random_vector<float>(5000, -1, 1);
        auto df = to_device(ctx, f);
        CHECK(max(df).get() == *std::max_element(f.begin(), f.end()));
        CHECK(argmin(abs(df)).get() == std::min_element(f.begin(), f.end(), [](float a, float b) {
                                           return std::fabs(a) < std::fabs(b);
                                       }) - f.begin());
        f[1234] = std::nanf("");
        f[3000] = std::nanf("");
        df = to_device(ctx, f);
        CHECK(std::isnan(max(df).get()));
        CHECK(std::isnan(min(df).get()));
        CHECK(argmax(df).get() == 1234);
        CHECK(argmin(df).get() == 1234);
        CHECK(any(isnan(df)).get());
        CHECK_THROWS_WITH(min(zeros<float>(ctx, {0})), Contains("empty"));
        CHECK_THROWS_AS(argmax(zeros<float>(ctx, {0})), InvalidArgument);
        CHECK(sum(zeros<float>(ctx, {0})).get() == 0.0f);
        CHECK(!any(zeros<float>(ctx, {0})).get());
        CHECK(all(zeros<float>(ctx, {0})).get());
    }
}

template <class T> void nan_positions(const Context& ctx) {
    // Large enough for every work-item of a CPU's blocked shape to take vector steps from each
    // part of its block and a scalar rest: a NaN anywhere propagates, else the exact extremes.
    const std::size_t n = (std::size_t(1) << 20) + 37;
    auto h = random_vector<T>(n, -1, 1);
    auto x = to_device(ctx, h);
    CHECK(max(x).get() == *std::max_element(h.begin(), h.end()));
    CHECK(min(x).get() == *std::min_element(h.begin(), h.end()));
    for (std::size_t at : {std::size_t(0), std::size_t(1), std::size_t(12345), n / 3, n / 2 + 7, n - 2, n - 1}) {
        INFO("NaN at " << at << " of " << n);
        auto g = h;
        g[at] = std::numeric_limits<T>::quiet_NaN();
        auto y = to_device(ctx, g);
        CHECK(std::isnan(max(y).get()));
        CHECK(std::isnan(min(y).get()));
        CHECK(std::isnan(norm(y, std::numeric_limits<double>::infinity()).get()));
        CHECK(argmax(y).get() == std::int64_t(at));
    }
}

TEST_CASE("NaN propagates through max, min and the infinity norm from any position of a large array") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        nan_positions<float>(ctx);
        if (ctx.device().has_fp64()) nan_positions<double>(ctx);
    }
}

TEST_CASE("norms, vdot, views and fused expressions") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().has_fp64()) continue;
        const std::size_t n = 100003;
        const auto h = random_vector<double>(n, -2, 2), g = random_vector<double>(n, -2, 2);
        auto x = to_device(ctx, h), y = to_device(ctx, g);
        long double s2 = 0, s1 = 0, si = 0, sxy = 0, sv = 0, sxy_abs = 0, sv_abs = 0; // the sums may cancel
        for (std::size_t i = 0; i < n; ++i) {
            s2 += (long double)h[i] * h[i];
            s1 += std::fabs(h[i]);
            si = std::max<long double>(si, std::fabs(h[i]));
            sxy += (long double)(h[i] + 1) * (g[i] * 2);
            sxy_abs += std::fabs((h[i] + 1) * (g[i] * 2));
        }
        for (std::size_t i = 0; i < n; i += 3) {
            sv += h[i];
            sv_abs += std::fabs(h[i]);
        }
        CHECK(norm(x).get() == Approx(std::sqrt(double(s2))).epsilon(1e-13));
        CHECK(norm(x, 1).get() == Approx(double(s1)).epsilon(1e-13));
        CHECK(norm(x, std::numeric_limits<double>::infinity()).get() == double(si));
        CHECK_THROWS_AS(norm(x, 3), InvalidArgument);
        // sum(x*y) over an expression: one pass (the map is fused into the reduction's kernels).
        const auto before = ctx.launch_count();
        const double fused = sum((x + 1.0) * (y * 2.0)).get();
        CHECK(ctx.launch_count() - before <= 2);
        CHECK(fused == Approx(double(sxy)).epsilon(1e-12).margin(1e-13 * double(sxy_abs)));
        CHECK(sum(x(slice({}, {}, 3))).get() == Approx(double(sv)).epsilon(1e-12).margin(1e-13 * double(sv_abs)));
        using C = std::complex<double>;
        std::vector<C> ca(1000), cb(1000);
        C want = 0;
        for (std::size_t i = 0; i < 1000; ++i) {
            ca[i] = C(h[i], g[i]);
            cb[i] = C(g[i], -h[i]);
            want += std::conj(ca[i]) * cb[i];
        }
        const C got = vdot(to_device(ctx, ca), to_device(ctx, cb)).get();
        CHECK(std::abs(got - want) <= 1e-12 * std::abs(want));
        CHECK(norm(to_device(ctx, ca)).get() ==
              Approx(std::sqrt(std::real(std::inner_product(ca.begin(), ca.end(), ca.begin(), C(0), std::plus<>(),
                                                            [](C a, C b) { return std::conj(a) * b; })))));
    }
}

// Complex sums, dots (either factor conjugated) and norms of arrays long enough for every
// work-item of a CPU's blocked shape to take whole vector steps from each part of its block and a
// scalar rest (the interleaved-parts path of reductions on CPUs), and maps outside that path.
template <class R> void complex_streams(const Context& ctx) {
    using C = std::complex<R>;
    using L = std::complex<long double>;
    const std::size_t n = (std::size_t(1) << 20) + 37;
    const auto re = random_vector<R>(2 * n, -1, 1);
    std::vector<C> ha(n), hb(n);
    for (std::size_t i = 0; i < n; ++i) {
        ha[i] = C(re[i], re[n + i]);
        hb[i] = C(re[n + i] * R(0.5), -re[i]);
    }
    L s = 0, d = 0, va = 0, vb = 0, vv = 0, aa = 0, twice = 0;
    long double n2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const L a(ha[i].real(), ha[i].imag()), b(hb[i].real(), hb[i].imag());
        s += a;
        d += a * b;
        va += std::conj(a) * b;
        vb += a * std::conj(b);
        vv += std::conj(a) * std::conj(b);
        aa += a * a;
        twice += a * L(2);
        n2 += std::norm(a);
    }
    const R tol = std::is_same_v<R, float> ? R(1e-4) : R(1e-12);
    const auto close = [&](C got, L want, long double scale) {
        INFO("got " << got << " want " << C(R(want.real()), R(want.imag())));
        CHECK(std::abs(L(got.real(), got.imag()) - want) <= tol * scale);
    };
    const long double scale = std::sqrt(n2) * std::sqrt((long double)n); // bounds every sum above
    auto a = to_device(ctx, ha), b = to_device(ctx, hb);
    close(sum(a).get(), s, scale);
    close(dot(a, b).get(), d, scale);
    close(vdot(a, b).get(), va, scale);
    CHECK(double(norm(a).get()) == Approx(double(std::sqrt(n2))).epsilon(double(tol)));
    if (!std::is_same_v<R, float>) return; // the other forms once (a program each, seconds on PoCL)
    close(dot(a, conj(b)).get(), vb, scale);
    close(dot(conj(a), conj(b)).get(), vv, scale);
    close(dot(a, a).get(), aa, scale);
    close(sum(conj(a)).get(), std::conj(s), scale);
    close(sum(a * C(2)).get(), twice, scale); // not a plain stream: the general path
}

TEST_CASE("complex sums, dots and norms of large arrays against a long double reference") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        complex_streams<float>(ctx);
        if (ctx.device().has_fp64()) complex_streams<double>(ctx);
    }
}

TEST_CASE("device scalars feed later expressions without a host round trip") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = random_vector<float>(4096, 0.5f, 2.0f);
        auto x = to_device(ctx, h);
        auto nrm = norm(x);          // on the device
        Array<float> unit = x / nrm; // broadcasts the 0-d result
        double s = 0;
        for (float v : h)
            s += double(v) * v;
        const auto u = unit.get();
        for (std::size_t i = 0; i < h.size(); ++i)
            REQUIRE(u[i] == Approx(h[i] / std::sqrt(s)).epsilon(1e-5));
        CHECK(norm(unit).get() == Approx(1.0f).epsilon(1e-5));
        float async = 0;
        sum(x).get_async(async).wait();
        CHECK(async == Approx(std::accumulate(h.begin(), h.end(), 0.0)).epsilon(1e-5));
    }
}

// Where the device writes mapped host memory, a result read on the host comes from its mirror
// (core/src/mirror.hpp) until anything may have changed it: a write, a fill, a launch that takes
// its buffer, a view of other bytes.
TEST_CASE("a reduction's result read on the host is its current value after every later change") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto hx = random_vector<double>(20011, -1.0, 1.0), hy = random_vector<double>(20011, -1.0, 1.0);
        auto x = to_device(ctx, hx), y = to_device(ctx, hy);
        // Tolerances from the sums of magnitudes: the sums of random signs cancel, and a relative
        // one failed on a sum of -0.27 (seed 2462950514351127386, PoCL) and of -0.0012 (seed
        // 8159753284488300847, PoCL).
        double ref = 0, ref_abs = 0, sum_abs = 0;
        for (std::size_t i = 0; i < hx.size(); ++i) {
            ref += hx[i] * hy[i];
            ref_abs += std::abs(hx[i] * hy[i]);
            sum_abs += std::abs(hx[i]);
        }
        auto d = dot(x, y);
        const double first = d.get();
        CHECK(first == Approx(ref).epsilon(1e-12).margin(1e-12 * ref_abs));
        CHECK(d.get() == first); // read twice
        DeviceScalar<double> copy = d;
        CHECK(copy.get() == first);
        const std::vector<double> seven = {7.0};
        d.set(seven); // a write from the host
        CHECK(d.get() == 7.0);
        CHECK(copy.get() == 7.0); // the copy shares the buffer
        auto e = dot(x, y);
        e.fill(-2.5);
        CHECK(e.get() == -2.5);
        auto f = sum(x);
        static_cast<Array<double>&>(f) = f * 2.0; // a launch that writes the result's buffer
        CHECK(f.get() ==
              Approx(2.0 * std::accumulate(hx.begin(), hx.end(), 0.0)).epsilon(1e-12).margin(2e-12 * sum_abs));
        auto g = max(x), h = min(x);
        g.assign(h); // a copy kernel into it
        CHECK(g.get() == *std::min_element(hx.begin(), hx.end()));
        // Many results alive at once, each read in turn.
        std::vector<DeviceScalar<double>> many;
        for (int i = 0; i < 64; ++i)
            many.push_back(dot(x(slice(0, 100 + i)), y(slice(0, 100 + i))));
        for (int i = 0; i < 64; ++i) {
            double r = 0, r_abs = 0;
            for (int k = 0; k < 100 + i; ++k) {
                r += hx[k] * hy[k];
                r_abs += std::abs(hx[k] * hy[k]);
            }
            REQUIRE(many[i].get() == Approx(r).epsilon(1e-12).margin(1e-13 * r_abs));
        }
    }
}

TEST_CASE("reductions are deterministic, and float32 sums stay within numpy's pairwise error") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = std::size_t(1) << 24;
        const auto h = random_vector<float>(n, 0, 1);
        auto x = to_device(ctx, h);
        const float a = sum(x).get(), b = sum(x).get();
        CHECK(std::memcmp(&a, &b, sizeof a) == 0);
        long double exact = 0;
        for (float v : h)
            exact += v;
        // numpy's pairwise summation: error within about (128 + log2 n) * eps * sum|x|.
        const double bound = (128 + 24) * 5.96e-8 * double(exact);
        CHECK(std::fabs(double(a) - double(exact)) <= bound);
    }
}

TEST_CASE("reductions along one axis of 2-D arrays") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t r = 37, c = 1001;
        const auto h = random_vector<std::int32_t>(r * c, -1000, 1000);
        auto m = to_device(ctx, h, {r, c});
        const auto s0 = sum(m, 0).get(), s1 = sum(m, 1).get();
        const auto mx1 = max(m, 1).get(), mn0 = min(m.transpose(), 1).get();
        REQUIRE(s0.size() == c);
        REQUIRE(s1.size() == r);
        for (std::size_t j = 0; j < c; ++j) {
            std::int64_t s = 0;
            std::int32_t lo = h[j];
            for (std::size_t i = 0; i < r; ++i) {
                s += h[i * c + j];
                lo = std::min(lo, h[i * c + j]);
            }
            REQUIRE(s0[j] == s);
            REQUIRE(mn0[j] == lo);
        }
        for (std::size_t i = 0; i < r; ++i) {
            REQUIRE(s1[i] == std::accumulate(h.begin() + i * c, h.begin() + (i + 1) * c, std::int64_t(0)));
            REQUIRE(mx1[i] == *std::max_element(h.begin() + i * c, h.begin() + (i + 1) * c));
        }
        CHECK_THROWS_AS(sum(m, 2), InvalidArgument);
    }
}

namespace {

// Every value of the type (bool: 0 and 1), so that sums reach the lanes' extremes.
template <class T> std::vector<T> any_values(std::size_t n) {
    if constexpr (std::is_same_v<T, bool>)
        return values<bool>(n);
    else
        return random_vector<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
}

// The operations narrow_views checks (PoCL compiles a program for each, for seconds).
enum Ops : unsigned { op_sum = 1, op_max = 2, op_min = 4, op_argmax = 8, op_dot = 16, op_norm = 32 };

// The operations `ops` of x(slice(ox, ox + n * step, step)) (and y alike, from oy) against the host.
template <class T>
void narrow_views(const Context& ctx, std::size_t n, std::size_t ox, std::size_t oy, std::size_t step, unsigned ops) {
    INFO("type " << name(dtype_v<T>) << ", n = " << n << ", offsets " << ox << " and " << oy << ", step " << step);
    const auto hx = any_values<T>(ox + n * step), hy = any_values<T>(oy + n * step);
    auto dx = to_device(ctx, hx), dy = to_device(ctx, hy);
    auto x = dx(slice(ox, ox + n * step, step)), y = dy(slice(oy, oy + n * step, step));
    std::vector<T> vx(n), vy(n);
    for (std::size_t i = 0; i < n; ++i) {
        vx[i] = hx[ox + i * step];
        vy[i] = hy[oy + i * step];
    }
    using S = typename decltype(sum(x))::value_type;
    if (ops & op_sum) CHECK(sum(x).get() == host_sum<S>(vx));
    if constexpr (!std::is_same_v<T, bool>) {
        if (ops & op_max) CHECK(max(x).get() == *std::max_element(vx.begin(), vx.end()));
        if (ops & op_min) CHECK(min(x).get() == *std::min_element(vx.begin(), vx.end()));
        if (ops & op_argmax) CHECK(argmax(x).get() == std::max_element(vx.begin(), vx.end()) - vx.begin());
        if (ops & op_dot) {
            using D = typename decltype(dot(x, y))::value_type;
            std::vector<D> prod(n);
            for (std::size_t i = 0; i < n; ++i)
                // In 64 unsigned bits: D's own product would be int's for 16-bit D, and overflow.
                prod[i] = D(std::uint64_t(D(vx[i])) * std::uint64_t(D(vy[i])));
            CHECK(dot(x, y).get() == host_sum<D>(prod));
        }
    }
    if (ops & op_norm) {
        long double squares = 0;
        for (const auto& v : vx)
            squares += (long double)v * (long double)v;
        CHECK(double(norm(x).get()) == Approx(std::sqrt(double(squares))).epsilon(1e-5));
    }
}

// `ops` on the shape of four accumulators in groups of 256, at starts 16-byte aligned, not, and
// different for x and y, sizes short of a whole 16 bytes and ragged; strided sums (the general
// loop); sums at the type's extremes. With `shapes`, sums and max on other accumulator counts.
template <class T> void narrow_shapes(const Context& ctx, unsigned ops, bool shapes) {
    {
        LaunchShapeScope scope(KernelFamily::reduction, LaunchShape{256, 4});
        for (std::size_t n : {std::size_t(1), std::size_t(15), std::size_t(17), std::size_t(1000), std::size_t(123457)})
            for (auto [ox, oy] : {std::pair<std::size_t, std::size_t>{0, 0}, {3, 3}, {1, 6}, {16, 0}})
                narrow_views<T>(ctx, n, ox, oy, 1, ops);
        narrow_views<T>(ctx, 100003, 1, 0, 2, op_sum);
        narrow_views<T>(ctx, 77, 0, 5, 3, op_sum);
        // A step's lanes add in 32 bits before they join the 64-bit sum.
        if constexpr (!std::is_same_v<T, bool>)
            for (T v : {std::numeric_limits<T>::min(), std::numeric_limits<T>::max()}) {
                const std::size_t n = (std::size_t(1) << 20) + 37;
                using S = typename decltype(sum(std::declval<Array<T>>()))::value_type;
                CHECK(sum(full<T>(ctx, {n}, v)).get() == S(S(v) * S(n)));
            }
    }
    if (shapes)
        for (const LaunchShape shape : {LaunchShape{64, 3}, LaunchShape{32, 1}}) {
            LaunchShapeScope scope(KernelFamily::reduction, shape);
            for (std::size_t n : {std::size_t(5), std::size_t(40), std::size_t(50001)})
                narrow_views<T>(ctx, n, 2, 2, 1, op_sum | op_max);
        }
}

} // namespace

// The grid-stride shape of GPUs, forced here so that CPUs run it too: contiguous elements
// narrower than 4 bytes are read 16 bytes at a time from the first 16-byte boundary on (a head
// before it and a tail after the last whole 16 bytes element by element), where x and y lie at
// the same distance from a boundary; everything else takes the general loop.
TEST_CASE("reductions of 8- and 16-bit elements on the grid-stride shape, at any offset and stride") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().has_fp64()) continue; // sums of these types are 64-bit
        narrow_shapes<bool>(ctx, op_sum | op_norm, false);
        narrow_shapes<std::int8_t>(ctx, op_sum | op_max | op_min | op_argmax | op_dot | op_norm, true);
        narrow_shapes<std::uint8_t>(ctx, op_sum | op_max | op_dot | op_norm, false);
        narrow_shapes<std::int16_t>(ctx, op_sum | op_min | op_dot | op_norm, false);
        narrow_shapes<std::uint16_t>(ctx, op_sum | op_max | op_argmax | op_dot | op_norm, true);
        // complex128, read as one 16-byte vector each on this shape: sum, dot and norm of views.
        for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(1001), std::size_t(65537)})
            for (std::size_t off : {0, 1})
                for (std::size_t step : {1, 2}) {
                    INFO("complex128, n = " << n << ", offset " << off << ", step " << step);
                    LaunchShapeScope scope(KernelFamily::reduction, LaunchShape{256, 4});
                    using C = std::complex<double>;
                    const auto ha = values<C>(off + n * step), hb = values<C>(off + n * step);
                    auto a = to_device(ctx, ha)(slice(off, off + n * step, step)),
                         b = to_device(ctx, hb)(slice(off, off + n * step, step));
                    std::vector<C> va(n), prod(n);
                    double scale = 0, pscale = 0, squares = 0;
                    for (std::size_t i = 0; i < n; ++i) {
                        va[i] = ha[off + i * step];
                        prod[i] = va[i] * hb[off + i * step];
                        scale += std::abs(va[i]);
                        pscale += std::abs(prod[i]);
                        squares += std::norm(va[i]);
                    }
                    check_close<C>(sum(a).get(), host_sum<C>(va), scale, n);
                    check_close<C>(dot(a, b).get(), host_sum<C>(prod), pscale, n);
                    CHECK(norm(a).get() == Approx(std::sqrt(squares)).epsilon(1e-13));
                }
        // A fused map of two operands ((x + y) * (x - y), wrapping in 8 bits as numpy) and a user's
        // ReductionKernel (which takes the general loop) on the same shape.
        LaunchShapeScope scope(KernelFamily::reduction, LaunchShape{256, 4});
        const std::size_t n = 4099;
        const auto hx = any_values<std::int8_t>(n + 3), hy = any_values<std::int8_t>(n + 3);
        auto x = to_device(ctx, hx)(slice(3, n + 3)), y = to_device(ctx, hy)(slice(3, n + 3));
        long long want = 0, want_user = 0;
        for (std::size_t i = 3; i < n + 3; ++i) {
            const auto s = std::int8_t(hx[i] + hy[i]), d = std::int8_t(hx[i] - hy[i]);
            want += std::int8_t(s * d);
            want_user += hx[i];
        }
        CHECK(sum((x + y) * (x - y)).get() == want);
        ReductionKernel<std::int64_t> user(ctx, "0", "a + b", "(int64_t)x[i]", "const int8_t* x", "sum_int8");
        CHECK(user(x).get() == want_user);
    }
}

TEST_CASE("ReductionKernel as PyOpenCL's") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ReductionKernel<std::int64_t> dotk(ctx, "0", "a + b", "(int64_t)x[i] * y[i]",
                                           "const int32_t* x, const int32_t* y", "int_dot");
        for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(123457)}) {
            const auto hx = random_vector<std::int32_t>(n, -50000, 50000),
                       hy = random_vector<std::int32_t>(n, -50000, 50000);
            std::int64_t want = 0;
            for (std::size_t i = 0; i < n; ++i)
                want += std::int64_t(hx[i]) * hy[i];
            CHECK(dotk(to_device(ctx, hx), to_device(ctx, hy)).get() == want);
        }
        ReductionKernel<std::uint32_t> maxk(ctx, "0", "a > b ? a : b", "(uint32_t)(i * 7919u % 10007u)",
                                            "const uint32_t unused", "max_of_index");
        std::uint32_t want = 0;
        for (std::uint32_t i = 0; i < 50000; ++i)
            want = std::max(want, i * 7919u % 10007u);
        CHECK(maxk.over(50000, std::uint32_t(0)).get() == want);
        CHECK_THROWS_AS(dotk(to_device(ctx, std::vector<float>{1.0f}), to_device(ctx, std::vector<float>{1.0f})),
                        InvalidArgument);
        // Every array holds every index the map reads: a short one is refused, not read past.
        const auto h5 = random_vector<std::int32_t>(5, -9, 9);
        CHECK_THROWS_WITH(dotk(to_device(ctx, random_vector<std::int32_t>(100, -9, 9)), to_device(ctx, h5)),
                          Contains("'y' holds 5 elements"));
        CHECK(dotk.over(5, to_device(ctx, h5), to_device(ctx, h5)).get() ==
              std::inner_product(h5.begin(), h5.end(), h5.begin(), std::int64_t(0)));
        // Any argument name the kernel around the map does not declare itself; the others are
        // refused by name, before anything is compiled.
        const auto hv = random_vector<std::int32_t>(3001, -1000, 1000);
        ReductionKernel<std::int64_t> named_v(ctx, "0", "a + b", "(int64_t)v[i] * a", "const int32_t* v, int32_t a",
                                              "sum_scaled");
        CHECK(named_v(to_device(ctx, hv), std::int32_t(3)).get() ==
              3 * std::accumulate(hv.begin(), hv.end(), std::int64_t(0)));
        for (const char* taken :
             {"const int32_t* x, const int n", "const int32_t* out", "const int32_t* i", "const int32_t* xgpu_x",
              "const int32_t* a3", "const int32_t* ACC", "const int32_t* XGPU_WG"})
            CHECK_THROWS_WITH(ReductionKernel<std::int64_t>(ctx, "0", "a + b", "(int64_t)x[i]", taken, "taken"),
                              Contains("is taken by the kernel around the operation"));
        CHECK_THROWS_WITH(ElementwiseKernel(ctx, "float* i", "i[0] = 1", "index_named_i"),
                          Contains("argument name 'i' is taken"));
    }
}

TEST_CASE("a reduction over 2^32 + 11 uint8 ones") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = (std::size_t(1) << 32) + 11;
        if (ctx.device().type() != DeviceType::gpu || ctx.device().info().max_allocation < n ||
            ctx.device().global_memory() < 2 * n) {
            WARN("skipped on " << ctx.device().name() << ": needs a GPU with room for 2^32 + 11 bytes");
            continue;
        }
        auto ones = full<std::uint8_t>(ctx, {n}, 1);
        CHECK(sum(ones).get() == std::uint64_t(n));
    }
}
