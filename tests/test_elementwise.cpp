// ElementwiseKernel on every backend: PyCUDA's example, views at their offset, ranges, errors.
#include <xgpu/elementwise.hpp>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

TEST_CASE("ElementwiseKernel computes a linear combination, over views at their offset") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ElementwiseKernel lin(ctx, "float a, const float* x, float b, XGPU_GLOBAL const float *y, float* z",
                              "z[i] = a * x[i] + b * y[i]", "linear_combination");
        const std::size_t n = 5000;
        const auto hx = random_vector<float>(n, -1, 1), hy = random_vector<float>(n, -1, 1);
        auto x = to_device(ctx, hx), y = to_device(ctx, hy);
        auto z = empty<float>(ctx, {n});
        lin(2.5f, x, -1.5f, y, z);
        auto gz = z.get();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(gz[i] == Approx(2.5f * hx[i] - 1.5f * hy[i]).margin(1e-5));
        // Views at an offset: elements 100.. of x and 7.. of y into 1000.. of z.
        auto zv = z(slice(1000, 3000));
        lin(1.0f, x(slice(100, 2100)), 2.0f, y(slice(7, 2007)), zv);
        gz = z.get();
        for (std::size_t k = 0; k < 2000; ++k)
            REQUIRE(gz[1000 + k] == Approx(hx[100 + k] + 2.0f * hy[7 + k]).margin(1e-5));
        CHECK(gz[999] == Approx(2.5f * hx[999] - 1.5f * hy[999]).margin(1e-5));
        CHECK(gz[3000] == Approx(2.5f * hx[3000] - 1.5f * hy[3000]).margin(1e-5));
    }
}

TEST_CASE("ElementwiseKernel over a range, with a preamble and integer arguments") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ElementwiseKernel k(ctx, "int32_t* out, const int32_t scale", "out[i] = square(i) * scale", "squares",
                            "XGPU_DEVICE_FN int32_t square(int64_t v) { return (int32_t)(v * v); }");
        auto out = full<std::int32_t>(ctx, {100}, -1);
        k(slice(10, 90, 4), out, std::int32_t(3));
        const auto got = out.get();
        for (int i = 0; i < 100; ++i)
            REQUIRE(got[std::size_t(i)] == ((i >= 10 && i < 90 && (i - 10) % 4 == 0) ? 3 * i * i : -1));
    }
}

TEST_CASE("ElementwiseKernel checks its arguments before launching") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        ElementwiseKernel k(ctx, "double* y, const double* x", "y[i] = 2.0 * x[i]", "twice_d");
        auto x = arange<float>(ctx, 10), y = zeros<float>(ctx, {10});
        CHECK_THROWS_WITH(k(y, x), Contains("twice_d") && Contains("double") && Contains("float32"));
        CHECK_THROWS_WITH(k(y), Contains("2 arguments"));
        auto d = arange<double>(ctx, 10);
        auto strided = d(slice({}, {}, 2));
        CHECK_THROWS_WITH(k(strided, strided), Contains("non-contiguous"));
        CHECK_THROWS_AS(ElementwiseKernel(ctx, "float* a", "a[i] = ;", "broken"), CompileError);
        // Every array holds every index the kernel runs: i indexes them all.
        ElementwiseKernel copy(ctx, "float* y, const float* x", "y[i] = x[i]", "copy_f");
        const auto hx = random_vector<float>(50, -1.0f, 1.0f);
        auto xs = to_device(ctx, hx), short_y = zeros<float>(ctx, {20});
        CHECK_THROWS_WITH(copy(xs, short_y), Contains("'x' holds 20 elements") && Contains("up to 49"));
        auto long_y = zeros<float>(ctx, {50});
        CHECK_THROWS_WITH(copy(slice(10, 30), long_y, short_y), Contains("'x' holds 20 elements"));
        // A gather reads its source at other indices: the operation keeps them in bounds.
        ElementwiseKernel gather(ctx, "float* y, const int32_t* index, const float* x", "y[i] = x[index[i]]",
                                 "gather_f");
        auto picked = zeros<float>(ctx, {50});
        gather(picked, to_device(ctx, std::vector<std::int32_t>(50, 7)), short_y);
        CHECK(picked.get() == std::vector<float>(50, 0.0f));
        copy(slice(19, {}, -2), short_y, xs); // indices 19, 17, ..., 1: inside both
        const auto got = short_y.get();
        for (std::size_t i = 0; i < 20; ++i)
            CHECK(got[i] == (i % 2 ? hx[i] : 0.0f));
    }
}
