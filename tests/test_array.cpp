// Arrays on every backend against host references: numpy's type promotion, binary operations
// over every pair of types, slicing and views, fused expressions, math, NaN, empty arrays, errors.
#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <sstream>
#include <tuple>

#include <xgpu/array.hpp>
#include <xgpu/reduction.hpp>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

namespace {

using AllTypes = std::tuple<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                            std::uint32_t, std::uint64_t, float, double, std::complex<float>, std::complex<double>>;

// numpy.promote_types for the types above, in that order (generated with numpy 2.4).
const char* const numpy_promote[13][13] = {
    {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
     "complex64", "complex128"},
    {"int8", "int8", "int16", "int32", "int64", "int16", "int32", "int64", "float64", "float32", "float64", "complex64",
     "complex128"},
    {"int16", "int16", "int16", "int32", "int64", "int16", "int32", "int64", "float64", "float32", "float64",
     "complex64", "complex128"},
    {"int32", "int32", "int32", "int32", "int64", "int32", "int32", "int64", "float64", "float64", "float64",
     "complex128", "complex128"},
    {"int64", "int64", "int64", "int64", "int64", "int64", "int64", "int64", "float64", "float64", "float64",
     "complex128", "complex128"},
    {"uint8", "int16", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
     "complex64", "complex128"},
    {"uint16", "int32", "int32", "int32", "int64", "uint16", "uint16", "uint32", "uint64", "float32", "float64",
     "complex64", "complex128"},
    {"uint32", "int64", "int64", "int64", "int64", "uint32", "uint32", "uint32", "uint64", "float64", "float64",
     "complex128", "complex128"},
    {"uint64", "float64", "float64", "float64", "float64", "uint64", "uint64", "uint64", "uint64", "float64", "float64",
     "complex128", "complex128"},
    {"float32", "float32", "float32", "float64", "float64", "float32", "float32", "float64", "float64", "float32",
     "float64", "complex64", "complex128"},
    {"float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64",
     "float64", "complex128", "complex128"},
    {"complex64", "complex64", "complex64", "complex128", "complex128", "complex64", "complex64", "complex128",
     "complex128", "complex64", "complex128", "complex64", "complex128"},
    {"complex128", "complex128", "complex128", "complex128", "complex128", "complex128", "complex128", "complex128",
     "complex128", "complex128", "complex128", "complex128", "complex128"},
};

// True division (numpy 2.4): integers and bool divide to float64; others keep the promoted type.
const char* numpy_true_divide(const std::string& promoted) {
    if (promoted == "float32" || promoted == "complex64" || promoted == "complex128")
        return promoted == "float32" ? "float32" : promoted == "complex64" ? "complex64" : "complex128";
    return "float64";
}

template <class T> constexpr bool is_complex_v = !std::is_arithmetic_v<T>;

// Host conversion with numpy's casting (complex to real drops the imaginary part).
template <class To, class From> To host_cast(const From& v) {
    if constexpr (is_complex_v<To> && is_complex_v<From>)
        return To(typename To::value_type(v.real()), typename To::value_type(v.imag()));
    else if constexpr (is_complex_v<To>)
        return To(typename To::value_type(v), 0);
    else if constexpr (is_complex_v<From>)
        return static_cast<To>(v.real());
    else
        return static_cast<To>(v);
}

template <class T> std::vector<T> random_values(std::size_t n, bool nonzero) {
    std::vector<T> v(n);
    auto& g = test::rng();
    for (auto&& x : v) {
        if constexpr (std::is_same_v<T, bool>)
            x = (g() & 1) || nonzero;
        else if constexpr (is_complex_v<T>) {
            std::uniform_real_distribution<typename T::value_type> d(0.5, 20);
            x = T(d(g), d(g) * ((g() & 1) ? 1 : -1));
        } else if constexpr (std::is_floating_point_v<T>) {
            std::uniform_real_distribution<T> d(0.5, 40);
            x = d(g) * ((g() & 1) ? 1 : -1);
        } else if constexpr (std::is_signed_v<T>) {
            std::uniform_int_distribution<int> d(1, 40);
            x = T(d(g) * ((g() & 1) ? 1 : -1));
        } else {
            std::uniform_int_distribution<int> d(1, 80);
            x = T(d(g));
        }
    }
    return v;
}

template <class T> bool close(const T& got, const T& want) {
    if constexpr (is_complex_v<T>) // componentwise error is relative to the magnitude (cancellation)
        return std::abs(got - want) <= (sizeof(T) == 8 ? 3e-6 : 1e-13) * std::max<double>(1, std::abs(want));
    else if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(want)) return std::isnan(got);
        return std::fabs(got - want) <= (sizeof(T) == 4 ? 3e-6 : 1e-13) * std::max<T>(1, std::fabs(want));
    } else
        return got == want;
}

template <class T> std::vector<T> get(const Array<T>& a) {
    return a.get();
}

template <class A, class B> void check_pair(const Context& ctx, std::size_t ia, std::size_t ib) {
    using R = typename decltype(std::declval<Array<A>>() + std::declval<Array<B>>())::value_type;
    using D = typename decltype(std::declval<Array<A>>() / std::declval<Array<B>>())::value_type;
    INFO(name(dtype_v<A>) << " op " << name(dtype_v<B>));
    REQUIRE(std::string(name(dtype_v<R>)) == numpy_promote[ia][ib]);
    REQUIRE(std::string(name(dtype_v<D>)) == numpy_true_divide(numpy_promote[ia][ib]));
    if (!ctx.device().has_fp64() && (sizeof(R) >= 8 && !std::is_integral_v<R>)) return;
    const std::size_t n = 300;
    const auto ha = random_values<A>(n, false);
    const auto hb = random_values<B>(n, true);
    auto a = to_device(ctx, ha);
    auto b = to_device(ctx, hb);
    Array<R> sum = a + b;
    const auto got = sum.get();
    for (std::size_t i = 0; i < n; ++i) {
        R want;
        if constexpr (std::is_same_v<R, bool>)
            want = ha[i] || hb[i];
        else
            want = host_cast<R>(host_cast<R>(ha[i]) + host_cast<R>(hb[i]));
        REQUIRE(close(got[i], want));
    }
    if constexpr (!std::is_same_v<R, bool>) {
        if (ia == ib || ia == 3 || ib == 10) { // products and quotients for a cross-section of pairs
            Array<R> prod = a * b;
            Array<D> quot = a / b;
            const auto gp = prod.get();
            const auto gq = quot.get();
            for (std::size_t i = 0; i < n; ++i) {
                REQUIRE(close(gp[i], host_cast<R>(host_cast<R>(ha[i]) * host_cast<R>(hb[i]))));
                const D want = host_cast<D>(ha[i]) / host_cast<D>(hb[i]);
                if constexpr (is_complex_v<D>)
                    REQUIRE(std::abs(gq[i] - want) <= 1e-5 * std::abs(want));
                else
                    REQUIRE(std::fabs(gq[i] - want) <= 1e-5 * std::fabs(want));
            }
        }
    }
}

template <std::size_t I, std::size_t J> void pairs_from(const Context& ctx) {
    if constexpr (I < 13) {
        if constexpr (J < 13) {
            check_pair<std::tuple_element_t<I, AllTypes>, std::tuple_element_t<J, AllTypes>>(ctx, I, J);
            pairs_from<I, J + 1>(ctx);
        } else {
            pairs_from<I + 1, 0>(ctx);
        }
    }
}

} // namespace

TEST_CASE("binary operations over every pair of types: numpy's result types and values") {
    // C++ scalars are weak, as Python's: they never widen an array within its kind.
    static_assert(std::is_same_v<decltype(std::declval<Array<float>>() * 2.0)::value_type, float>);
    static_assert(std::is_same_v<decltype(std::declval<Array<std::int8_t>>() + 1000)::value_type, std::int8_t>);
    static_assert(std::is_same_v<decltype(std::declval<Array<std::int32_t>>() * 2.5)::value_type, double>);
    static_assert(std::is_same_v<decltype(std::declval<Array<float>>() * std::complex<double>(1, 1))::value_type,
                                 std::complex<float>>);
    static_assert(std::is_same_v<decltype(std::declval<Array<std::int32_t>>() / 2)::value_type, double>);
    static_assert(std::is_same_v<decltype(sin(std::declval<Array<std::int16_t>>()))::value_type, float>);
    static_assert(std::is_same_v<decltype(sin(std::declval<Array<std::int32_t>>()))::value_type, double>);
    static_assert(std::is_same_v<decltype(abs(std::declval<Array<std::complex<float>>>()))::value_type, float>);
    static_assert(std::is_same_v<decltype(std::declval<Array<double>>() < 1)::value_type, bool>);
    XGPU_FOR_EACH_CONTEXT(ctx) {
        pairs_from<0, 0>(ctx);
    }
}

TEST_CASE("a five-array expression is one kernel launch, and new scalars reuse it") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        // A whole number of work-groups: one launch on every device. (Other sizes on a CPU device
        // take a second launch of the same kernel for the last, partial group.)
        for (const std::size_t n : {std::size_t(256 * 40), std::size_t(10001)}) {
            const std::uint64_t launches = n % 256 == 0 || ctx.device().type() != DeviceType::cpu ? 1 : 2;
            std::vector<std::vector<float>> h;
            std::vector<Array<float>> d;
            for (int k = 0; k < 5; ++k) {
                h.push_back(random_vector<float>(n, -2, 2));
                d.push_back(to_device(ctx, h.back()));
            }
            auto out = empty<float>(ctx, {n});
            for (float s : {0.5f, -1.5f, 3.0f}) {
                const auto before = ctx.launch_count();
                out = s * d[0] * d[1] + d[2] / (1.0f + d[3] * d[3]) - maximum(d[4], 0.0f);
                CHECK(ctx.launch_count() == before + launches);
                const auto got = out.get();
                for (std::size_t i = 0; i < n; ++i)
                    REQUIRE(got[i] == Approx(s * h[0][i] * h[1][i] + h[2][i] / (1.0f + h[3][i] * h[3][i]) -
                                             std::max(h[4][i], 0.0f))
                                          .margin(1e-5));
            }
            // Compound assignment is one launch too.
            const auto before = ctx.launch_count();
            out += d[0] * 2.0f;
            CHECK(ctx.launch_count() == before + launches);
        }
    }
}

TEST_CASE("random slices of 1-D and 2-D arrays, C and F order, negative steps") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto& g = test::rng();
        for (int trial = 0; trial < 20; ++trial) {
            const std::int64_t n = 1 + std::int64_t(g() % 60);
            const auto h = random_vector<std::int32_t>(std::size_t(n), -1000, 1000);
            auto a = to_device(ctx, h);
            std::uniform_int_distribution<std::int64_t> pos(-n - 3, n + 3);
            std::int64_t step = std::int64_t(g() % 7) - 3;
            if (step == 0) step = 1;
            std::optional<std::int64_t> start = (g() & 1) ? std::optional(pos(g)) : std::nullopt;
            std::optional<std::int64_t> stop = (g() & 1) ? std::optional(pos(g)) : std::nullopt;
            auto v = a(slice(start, stop, step));
            // Host reference: Python's slice semantics written out.
            std::vector<std::int32_t> want;
            auto norm = [&](std::optional<std::int64_t> x, std::int64_t dflt) {
                if (!x) return dflt;
                std::int64_t k = *x < 0 ? *x + n : *x;
                return step > 0 ? std::clamp<std::int64_t>(k, 0, n) : std::clamp<std::int64_t>(k, -1, n - 1);
            };
            const std::int64_t s0 = norm(start, step > 0 ? 0 : n - 1), s1 = norm(stop, step > 0 ? n : -1);
            for (std::int64_t i = s0; step > 0 ? i < s1 : i > s1; i += step)
                want.push_back(h[std::size_t(i)]);
            INFO("n " << n << " slice " << (start ? std::to_string(*start) : "None") << ":"
                      << (stop ? std::to_string(*stop) : "None") << ":" << step);
            REQUIRE(v.size() == want.size());
            CHECK(v.get() == want);
            // Write through the view, then read the whole array.
            auto hw = h;
            for (std::size_t k = 0, i = std::size_t(s0); k < want.size(); ++k, i += std::size_t(step))
                hw[i] = -7 - std::int32_t(k);
            std::vector<std::int32_t> vals(want.size());
            for (std::size_t k = 0; k < vals.size(); ++k)
                vals[k] = -7 - std::int32_t(k);
            v.set(vals);
            CHECK(a.get() == hw);
        }
        for (Order order : {Order::C, Order::F}) {
            const std::size_t r = 7, c = 9;
            const auto h = random_vector<double>(r * c, -1, 1); // row-major values
            auto a = empty<double>(ctx, {r, c}, order);
            a.set(h); // set and get are in C (logical) order whatever the layout
            CHECK(a.get() == h);
            CHECK(a.is_contiguous() == (order == Order::C));
            auto v = a(slice(5, 0, -2), slice(1, {}, 3));
            std::vector<double> want;
            for (std::size_t i : {5, 3, 1})
                for (std::size_t j = 1; j < c; j += 3)
                    want.push_back(h[i * c + j]);
            CHECK(v.shape() == Shape{3, 3});
            CHECK(v.get() == want);
            Array<double> w = v * 2.0 + a(slice(0, 3), slice(0, 3)); // strided + strided into new
            std::vector<double> wh(9);
            for (std::size_t i = 0; i < 3; ++i)
                for (std::size_t j = 0; j < 3; ++j)
                    wh[i * 3 + j] = want[i * 3 + j] * 2.0 + h[i * c + j];
            CHECK(w.get() == wh);
            auto t = a.transpose();
            auto th = t.get();
            for (std::size_t i = 0; i < r; ++i)
                for (std::size_t j = 0; j < c; ++j)
                    REQUIRE(th[j * r + i] == h[i * c + j]);
            CHECK(a(3).get() == std::vector<double>(h.begin() + 3 * c, h.begin() + 4 * c));
        }
    }
}

TEST_CASE("reshape, ravel, copy, astype, arange, full and broadcasting") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto a = arange<std::int32_t>(ctx, 24);
        std::vector<std::int32_t> h(24);
        for (int i = 0; i < 24; ++i)
            h[std::size_t(i)] = i;
        CHECK(a.get() == h);
        auto m = a.reshape({2, 3, 4});
        CHECK(m.shape() == Shape{2, 3, 4});
        auto t = m.transpose({2, 0, 1});
        CHECK(t.shape() == Shape{4, 2, 3});
        auto flat = t.ravel(); // a copy: not expressible as a view
        std::vector<std::int32_t> want;
        for (int k = 0; k < 4; ++k)
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 3; ++j)
                    want.push_back(i * 12 + j * 4 + k);
        CHECK(flat.get() == want);
        auto f = t.astype<float>();
        CHECK(f.get() == std::vector<float>(want.begin(), want.end()));
        // A reshape that splits or merges only contiguous runs of a strided view is a view (as
        // numpy's): the last 6 columns of a 2 x 12 array as 2 x 2 x 3, written through.
        auto wide = arange<std::int32_t>(ctx, 24).reshape({2, 12});
        auto part = wide(_, slice(6, 12)).reshape({2, 2, 3});
        CHECK(part.buffer() == wide.buffer());
        CHECK(part.strides() == Strides{12, 3, 1});
        part.fill(-1);
        std::vector<std::int32_t> wide_want(24);
        for (int i = 0; i < 24; ++i)
            wide_want[std::size_t(i)] = i % 12 >= 6 ? -1 : i;
        CHECK(wide.get() == wide_want);
        // Merging axes that do not continue each other copies; every other column does.
        CHECK(wide(_, slice(0, 6)).reshape({12}).buffer() != wide.buffer());
        CHECK(wide(_, slice(0, 12, 2)).reshape({12}).strides() == Strides{2});
        auto c = m.copy();
        c.fill(5);
        CHECK(a.get() == h); // the copy does not share
        CHECK(full<std::int16_t>(ctx, {3}, std::int16_t(-4)).get() == std::vector<std::int16_t>{-4, -4, -4});
        CHECK(arange<double>(ctx, 1.0, 2.0, 0.25).get() == std::vector<double>{1.0, 1.25, 1.5, 1.75});
        // Broadcasting: a row and a column.
        auto row = arange<float>(ctx, 4).reshape({1, 4});
        auto col = arange<float>(ctx, 3).reshape({3, 1});
        Array<float> grid = row * 10.0f + col;
        CHECK(grid.shape() == Shape{3, 4});
        std::vector<float> gw;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 4; ++j)
                gw.push_back(float(j * 10 + i));
        CHECK(grid.get() == gw);
        // A 0-d array broadcasts.
        auto s = full<float>(ctx, {}, 2.5f);
        Array<float> scaled = grid * s;
        CHECK(scaled.get()[5] == gw[5] * 2.5f);
    }
}

TEST_CASE("math functions, comparisons, where and NaN propagation against the host") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().has_fp64()) continue;
        const std::size_t n = 2000;
        auto hx = random_vector<double>(n, 0.01, 0.99);
        auto hy = random_vector<double>(n, -3, 3);
        hy[7] = std::nan("");
        auto x = to_device(ctx, hx), y = to_device(ctx, hy);
        auto check = [&](const Array<double>& got, auto f, double tol = 1e-12) {
            const auto g = got.get();
            for (std::size_t i = 0; i < n; ++i) {
                const double w = f(i);
                if (std::isnan(w))
                    REQUIRE(std::isnan(g[i]));
                else
                    REQUIRE(std::fabs(g[i] - w) <= tol * std::max(1.0, std::fabs(w)));
            }
        };
        check(sin(x) + cos(y) * tan(x),
              [&](std::size_t i) { return std::sin(hx[i]) + std::cos(hy[i]) * std::tan(hx[i]); });
        check(asin(x) + acos(x) + atan(y),
              [&](std::size_t i) { return std::asin(hx[i]) + std::acos(hx[i]) + std::atan(hy[i]); });
        check(sinh(y) - cosh(x) + tanh(y) + asinh(y) + atanh(x) + acosh(x + 1.0), [&](std::size_t i) {
            return std::sinh(hy[i]) - std::cosh(hx[i]) + std::tanh(hy[i]) + std::asinh(hy[i]) + std::atanh(hx[i]) +
                   std::acosh(hx[i] + 1);
        });
        check(exp(y) + exp2(y) + expm1(x) + log(x) + log2(x) + log10(x) + log1p(x), [&](std::size_t i) {
            return std::exp(hy[i]) + std::exp2(hy[i]) + std::expm1(hx[i]) + std::log(hx[i]) + std::log2(hx[i]) +
                   std::log10(hx[i]) + std::log1p(hx[i]);
        });
        check(sqrt(x) + cbrt(y) + pow(x, y) + fabs(y) + hypot(x, y) + atan2(y, x), [&](std::size_t i) {
            return std::sqrt(hx[i]) + std::cbrt(hy[i]) + std::pow(hx[i], hy[i]) + std::fabs(hy[i]) +
                   std::hypot(hx[i], hy[i]) + std::atan2(hy[i], hx[i]);
        });
        check(floor(y) + ceil(y) + round(y * 4.0) + trunc(y) + fmod(y, x) + y % x, [&](std::size_t i) {
            const double m = std::fmod(hy[i], hx[i]);
            const double floor_mod = (m != 0 && ((m < 0) != (hx[i] < 0))) ? m + hx[i] : m;
            return std::floor(hy[i]) + std::ceil(hy[i]) + std::nearbyint(hy[i] * 4) + std::trunc(hy[i]) + m + floor_mod;
        });
        check(
            erf(y) + erfc(y), [&](std::size_t i) { return std::erf(hy[i]) + std::erfc(hy[i]); }, 1e-10);
        // NaN propagates through maximum/minimum as numpy's; where picks per element.
        check(maximum(y, 0.0) + minimum(y, x), [&](std::size_t i) {
            if (std::isnan(hy[i])) return std::nan("");
            return std::max(hy[i], 0.0) + std::min(hy[i], hx[i]);
        });
        check(where(y > x, y, -x * 2.0), [&](std::size_t i) { return hy[i] > hx[i] ? hy[i] : -hx[i] * 2; });
        Array<bool> nan = isnan(y) || (y == 2.0);
        const auto nb = nan.get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(nb[i] == (std::isnan(hy[i]) || hy[i] == 2.0));
        // Integer semantics: floor modulo with the divisor's sign, x % 0 == 0, integer powers.
        auto hi = random_vector<std::int32_t>(n, -100, 100), hj = random_vector<std::int32_t>(n, -7, 7);
        auto ii = to_device(ctx, hi), jj = to_device(ctx, hj);
        Array<std::int32_t> m = ii % jj + pow(jj, 3) + abs(ii);
        const auto gm = m.get();
        for (std::size_t i = 0; i < n; ++i) {
            std::int32_t r = hj[i] == 0 ? 0 : hi[i] % hj[i];
            if (r != 0 && ((r < 0) != (hj[i] < 0))) r += hj[i];
            REQUIRE(gm[i] == r + hj[i] * hj[i] * hj[i] + std::abs(hi[i]));
        }
        // Floor division rounds toward minus infinity; x // 0 is 0.
        const auto gq = Array<std::int32_t>(floor_divide(ii, jj)).get();
        for (std::size_t i = 0; i < n; ++i) {
            std::int32_t q = hj[i] == 0 ? 0 : hi[i] / hj[i];
            if (hj[i] != 0 && hi[i] % hj[i] != 0 && ((hi[i] < 0) != (hj[i] < 0))) --q;
            REQUIRE(gq[i] == q);
        }
        // Of two bools, % and // compute in int8 and - is refused, as numpy's.
        const auto bt = ii > 0, bu = jj > 0;
        const auto gb = Array<std::int8_t>(floor_divide(bt, bu) + bt % bu * 2).get();
        for (std::size_t i = 0; i < n; ++i) {
            const int t = hi[i] > 0, u = hj[i] > 0;
            REQUIRE(gb[i] == (u ? t / u + t % u * 2 : 0));
        }
        CHECK_THROWS_AS(bt - bu, InvalidArgument);
    }
}

TEST_CASE("complex arithmetic, abs, real, imag, conj") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        using C = std::complex<float>;
        const std::size_t n = 500;
        auto ha = random_values<C>(n, true), hb = random_values<C>(n, true);
        auto a = to_device(ctx, ha), b = to_device(ctx, hb);
        Array<C> r = a * b - conj(a) / b + C(1.5f, -2.0f);
        Array<float> m = abs(a) + real(b) * imag(a);
        const auto gr = r.get();
        const auto gm = m.get();
        for (std::size_t i = 0; i < n; ++i) {
            const C w = ha[i] * hb[i] - std::conj(ha[i]) / hb[i] + C(1.5f, -2.0f);
            REQUIRE(std::abs(gr[i] - w) <= 1e-4f * std::abs(w));
            REQUIRE(gm[i] == Approx(std::abs(ha[i]) + hb[i].real() * ha[i].imag()).epsilon(1e-5).margin(1e-4));
        }
    }
}

TEST_CASE("empty and zero-size arrays") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto z = zeros<float>(ctx, {0});
        CHECK(z.size() == 0);
        CHECK(z.get().empty());
        const auto before = ctx.launch_count();
        Array<float> w = z * 2.0f + 1.0f;
        CHECK(w.size() == 0);
        CHECK(ctx.launch_count() == before);
        auto e = empty<double>(ctx, {3, 0, 2});
        CHECK(e.size() == 0);
        std::ostringstream os;
        os << z;
        CHECK(os.str() == "[]");
        auto a = arange<float>(ctx, 5);
        CHECK(a(slice(3, 1)).size() == 0);
    }
}

TEST_CASE("printing as numpy prints") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto str = [](const auto& a) {
            std::ostringstream os;
            os << a;
            return os.str();
        };
        CHECK(str(to_device<double>(ctx, std::vector<double>{1.5, 2, 3})) == "[1.5 2.  3. ]");
        CHECK(str(arange<std::int32_t>(ctx, 4).reshape({2, 2})) == "[[0 1]\n [2 3]]");
        CHECK(str(arange<float>(ctx, 2000.0f)) == "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
        Array<bool> b = arange<std::int32_t>(ctx, 3) > 0;
        CHECK(str(b) == "[False  True  True]");
        CHECK(str(to_device<std::complex<float>>(ctx, std::vector<std::complex<float>>{{1, 2}, {3.5f, -1}})) ==
              "[1. +2.j 3.5-1.j]");
    }
}

TEST_CASE("shape mismatches and bad indices throw before any launch, leaving data unchanged") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto a = arange<float>(ctx, 6), b = arange<float>(ctx, 4);
        auto out = full<float>(ctx, {6}, 9.0f);
        const auto before = ctx.launch_count();
        CHECK_THROWS_AS(out = a + b, ShapeError);
        CHECK_THROWS_WITH(out = a + b, Contains("(6,)") && Contains("(4,)"));
        CHECK_THROWS_WITH(out = b * 2.0f, Contains("(4,)") && Contains("(6,)"));
        CHECK_THROWS_AS(a.reshape({4, 2}), ShapeError);
        CHECK_THROWS_AS(a(6), InvalidArgument);
        CHECK_THROWS_AS(a(-7), InvalidArgument);
        CHECK_THROWS_AS(a(0, 0), InvalidArgument);
        CHECK_THROWS_AS(a(slice(0, 3, 0)), InvalidArgument);
        CHECK_THROWS_AS(a.set(std::vector<float>(5)), ShapeError);
        CHECK(ctx.launch_count() == before);
        CHECK(out.get() == std::vector<float>(6, 9.0f));
        CHECK(a(-1).get() == std::vector<float>{5.0f});
        // Overlapping source and destination in another layout are handled through a temporary.
        auto r = arange<float>(ctx, 6);
        r = r(slice({}, {}, -1)) + 0.0f;
        CHECK(r.get() == std::vector<float>{5, 4, 3, 2, 1, 0});
        // Views of one buffer: disjoint ranges are written directly, an overlapping shift through a
        // temporary; both give numpy's result.
        auto w = arange<float>(ctx, 8);
        auto lo = w(slice(0, 4)), hi = w(slice(4, 8)), mid = w(slice(2, 6));
        lo = hi * 2.0f;
        CHECK(w.get() == std::vector<float>{8, 10, 12, 14, 4, 5, 6, 7});
        hi = mid + 1.0f;
        CHECK(w.get() == std::vector<float>{8, 10, 12, 14, 13, 15, 5, 6});
    }
}

TEST_CASE("more than 2^31 elements are indexed correctly") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = (std::size_t(1) << 31) + 1000;
        if (ctx.device().type() != DeviceType::gpu || ctx.device().info().max_allocation < n * 2 ||
            ctx.device().global_memory() < 4 * n) {
            WARN("skipped on " << ctx.device().name() << ": needs a GPU with room for 2^31 + 1000 int8 elements twice");
            continue;
        }
        auto a = arange<std::uint8_t>(ctx, double(n)); // i mod 256
        Array<std::uint8_t> b = a + std::uint8_t(1);
        auto tail = b(slice(std::int64_t(n) - 600, {}));
        const auto got = tail.get();
        for (std::size_t k = 0; k < got.size(); ++k)
            REQUIRE(got[k] == std::uint8_t((n - 600 + k + 1) % 256));
        CHECK(b(std::int64_t((std::size_t(1) << 31) + 5)).get()[0] == std::uint8_t(((std::size_t(1) << 31) + 6) % 256));
    }
}

TEST_CASE("an array used twice in an expression is one operand, loaded once") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = 5000;
        const auto h = random_vector<double>(n, -3.0, 3.0);
        auto x = to_device(ctx, h);
        const auto dir = std::filesystem::temp_directory_path() / ("xgpu-operands-" + std::to_string(test::rng()()));
        ::setenv("XGPU_DUMP_KERNELS", dir.c_str(), 1);
        Array<double> y = 2.0 * x + sin(x) * x - x / 7.0; // x four times: one parameter, one load
        ::unsetenv("XGPU_DUMP_KERNELS");
        const auto got = y.get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(got[i] == Approx(2.0 * h[i] + std::sin(h[i]) * h[i] - h[i] / 7.0).epsilon(1e-12));
        std::size_t kernels = 0;
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            std::ifstream in(entry.path());
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            const auto at = text.find("XGPU_KERNEL void xgpu_elementwise");
            if (at == std::string::npos) continue;
            ++kernels;
            const std::string kernel = text.substr(at);
            std::size_t inputs = 0, loads = 0;
            for (std::size_t p = kernel.find("const double* p"); p != std::string::npos;
                 p = kernel.find("const double* p", p + 1))
                ++inputs;
            for (std::size_t p = kernel.find("= p1["); p != std::string::npos; p = kernel.find("= p1[", p + 1))
                ++loads;
            CHECK(inputs == 1);
            CHECK(loads == 1);
        }
        CHECK(kernels == 1);
        std::filesystem::remove_all(dir);

        // Views of one buffer at other offsets, strides or types are other operands.
        Array<double> d = x(slice(1, {})) - x(slice(0, -1));
        const auto hd = d.get();
        for (std::size_t i = 0; i + 1 < n; ++i)
            REQUIRE(hd[i] == h[i + 1] - h[i]);
        Array<double> e = x(slice(0, {}, 2)) + x(slice(1, {}, 2));
        const auto he = e.get();
        for (std::size_t i = 0; i < n / 2; ++i)
            REQUIRE(he[i] == h[2 * i] + h[2 * i + 1]);
        Array<double> w = where(x > 0.0, x, -x) + x * x; // the same array in a condition and both branches
        const auto hw = w.get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(hw[i] == Approx(std::abs(h[i]) + h[i] * h[i]).epsilon(1e-15)); // GPUs contract into fma
        CHECK(sum(x * x).get() == Approx(std::inner_product(h.begin(), h.end(), h.begin(), 0.0)).epsilon(1e-12));
    }
}
