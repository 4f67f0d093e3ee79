// Errors on every backend: each names the problem, is thrown before any work is enqueued, and
// leaves the user's data and the context intact.
#include <cmath>
#include <cstring>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using xgpu::test::random_vector;

TEST_CASE("a syntax error throws CompileError with the log and the options") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::string src = "XGPU_KERNEL void broken(XGPU_GLOBAL float* a) {\n  a[0] = 1.0f +;\n}\n";
        const std::vector<std::string> options{"-DXGPU_TEST_OPTION=1"};
        try {
            ctx.compile(src, options);
            FAIL("no CompileError");
        } catch (const CompileError& e) {
            CHECK(e.backend() == ctx.backend());
            CHECK(!e.log().empty());
            CHECK(e.options() == options);
            CHECK_THAT(e.what(), Contains("-DXGPU_TEST_OPTION=1"));
            CHECK_THAT(e.what(), Contains(e.log()));
            CHECK_THAT(e.source(), Contains("a[0] = 1.0f +;"));
            // The log points at the offending line (NVIDIA's OpenCL ignores #line and counts the preamble).
            CHECK_THAT(e.log(), Contains("1.0f +") || Contains(":2:") || Contains("(2)"));
        }
        // The context still compiles and runs afterwards.
        auto k = ctx.compile("XGPU_KERNEL void ok(XGPU_GLOBAL int32_t* a) { a[XGPU_GLOBAL_ID(0)] = 7; }").kernel("ok");
        auto d = ctx.alloc(16);
        k.launch(ctx.queue(), Grid{4}, d);
        std::int32_t got[4];
        ctx.queue().read(d, got, 16);
        CHECK(got[3] == 7);
    }
}

TEST_CASE("an unknown kernel name lists the kernels that exist") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto p = ctx.compile("XGPU_KERNEL void alpha(XGPU_GLOBAL float* a) { a[0] = 1.0f; }\n"
                             "XGPU_KERNEL void beta(XGPU_GLOBAL float* a) { a[0] = 2.0f; }\n");
        try {
            p.kernel("gamma");
            FAIL("no error");
        } catch (const InvalidArgument& e) {
            CHECK_THAT(e.what(), Contains("gamma"));
            CHECK_THAT(e.what(), Contains("alpha"));
            CHECK_THAT(e.what(), Contains("beta"));
        }
    }
}

TEST_CASE("an allocation larger than the device throws OutOfMemory, and the context keeps working") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto too_much = ctx.device().global_memory() + (std::uint64_t(1) << 30);
        CHECK_THROWS_AS(ctx.alloc(too_much), OutOfMemory);
        CHECK_THROWS_WITH(ctx.alloc(too_much), Contains(std::to_string(too_much)));
        const auto v = random_vector<std::int32_t>(1000, -5, 5);
        auto d = ctx.alloc(4000);
        ctx.queue().write(d, v.data(), 4000);
        std::vector<std::int32_t> back(1000);
        ctx.queue().read(d, back.data(), 4000);
        CHECK(back == v);
    }
}

TEST_CASE("a launch with a wrong argument list throws before anything runs, naming the kernel") {
    static const char* src = R"(
        XGPU_KERNEL void scale(XGPU_GLOBAL float* a, const float s) { a[XGPU_GLOBAL_ID(0)] *= s; }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        auto k = ctx.compile(src).kernel("scale");
        CHECK(k.num_args() == 2);
        const auto v = random_vector<float>(256, -1, 1);
        auto d = ctx.alloc(1024);
        q.write(d, v.data(), 1024);
        CHECK_THROWS_WITH(k.launch(q, Grid{256}, d), Contains("scale") && Contains("2 arguments"));
        CHECK_THROWS_AS(k.launch(q, Grid{256}, d, 2.0f, 3.0f), InvalidArgument);
        // A global range that the work-group size does not divide.
        CHECK_THROWS_WITH(k.launch(q, Grid{250, 64}, d, 2.0f), Contains("multiple"));
        // A buffer of another context.
        auto other = Context::create(ctx.device());
        auto foreign = other.alloc(1024);
        CHECK_THROWS_WITH(k.launch(q, Grid{256}, foreign, 2.0f), Contains("another context"));
        std::vector<float> back(256);
        q.read(d, back.data(), 1024);
        CHECK(back == v); // nothing ran
    }
}

TEST_CASE("a kernel's own work-group limit is known, and a launch past it throws before anything runs") {
    // 96 values live at once in each work-item: on GPUs the registers lower the kernel's limit
    // below the device's.
    static const char* src = R"(
        #define W 96
        XGPU_KERNEL void heavy(XGPU_GLOBAL const float* a, XGPU_GLOBAL float* out) {
            const size_t i = XGPU_GLOBAL_ID(0);
            float v[W];
            #pragma unroll
            for (int k = 0; k < W; ++k) v[k] = a[i * W + k];
            float s = 0.0f;
            #pragma unroll
            for (int k = 0; k < W; ++k) {
                #pragma unroll
                for (int j = k; j < W; ++j) s += v[k] * v[j];
            }
            out[i] = s;
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        auto k = ctx.compile(src).kernel("heavy");
        const std::size_t most = k.max_group_size(), device = ctx.device().info().max_work_group_size;
        INFO("kernel limit " << most << ", device limit " << device);
        REQUIRE(most > 0); // both backends report it
        if (device) CHECK(most <= device);
        // A launch at a work-group size within the limit computes the right sums.
        std::size_t g = 1;
        while (g * 2 <= most && g < 64)
            g *= 2;
        const std::size_t n = 4 * g, w = 96;
        const auto v = random_vector<float>(n * w, -1, 1);
        const auto junk = random_vector<float>(n, -1, 1);
        auto a = ctx.alloc(n * w * 4), out = ctx.alloc(n * 4);
        q.write(a, v.data(), n * w * 4);
        q.write(out, junk.data(), n * 4);
        if (most < device) {
            std::size_t over = 1;
            while (over <= most)
                over *= 2;
            if (over <= device) {
                CHECK_THROWS_WITH(k.launch(q, Grid{over * 2, over}, a, out),
                                  Contains("heavy") && Contains("this kernel's maximum"));
                std::vector<float> back(n);
                q.read(out, back.data(), n * 4);
                CHECK(back == junk); // nothing ran
            }
        }
        k.launch(q, Grid{n, g}, a, out);
        std::vector<float> got(n);
        q.read(out, got.data(), n * 4);
        for (std::size_t i = 0; i < n; ++i) {
            double s = 0, mag = 0;
            for (std::size_t p = 0; p < w; ++p)
                for (std::size_t r = p; r < w; ++r) {
                    s += double(v[i * w + p]) * v[i * w + r];
                    mag += std::abs(double(v[i * w + p]) * v[i * w + r]);
                }
            CHECK(std::abs(got[i] - s) <= 1e-5 * mag + 1e-6);
        }
    }
}

TEST_CASE("a copy past the end of a buffer throws and leaves the buffer unchanged") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        const auto v = random_vector<std::uint8_t>(100, 0, 255);
        const auto junk = random_vector<std::uint8_t>(200, 0, 255);
        auto d = ctx.alloc(100), e = ctx.alloc(100);
        q.write(d, v.data(), 100);
        CHECK_THROWS_AS(q.write(d, junk.data(), 101), InvalidArgument);
        CHECK_THROWS_WITH(q.write(d, junk.data(), 10, 95), Contains("past the end"));
        CHECK_THROWS_AS(q.write_async(d, junk.data(), 1, 100), InvalidArgument);
        CHECK_THROWS_AS(q.copy(e, d, 50, 60, 0), InvalidArgument);
        CHECK_THROWS_AS(q.copy(e, d, 50, 0, 60), InvalidArgument);
        CHECK_THROWS_AS(q.copy(d, d, 50, 0, 25), InvalidArgument); // overlapping
        std::uint8_t pat[4] = {1, 2, 3, 4};
        CHECK_THROWS_AS(q.fill(d, pat, 4, 104), InvalidArgument);
        CHECK_THROWS_AS(q.fill(d, pat, 3, 99), InvalidArgument);
        CHECK_THROWS_AS(q.fill(d, pat, 4, 8, 2), InvalidArgument);
        std::vector<std::uint8_t> big(200);
        CHECK_THROWS_AS(q.read(d, big.data(), 101), InvalidArgument);
        CHECK_THROWS_AS(q.write(d, nullptr, 4), InvalidArgument);
        std::vector<std::uint8_t> back(100);
        q.read(d, back.data(), 100);
        CHECK(back == v);
    }
}

TEST_CASE("empty handles throw instead of crashing") {
    CHECK_THROWS_AS(Queue().finish(), InvalidArgument);
    CHECK_THROWS_AS(Event().wait(), InvalidArgument);
    CHECK_THROWS_AS(Program().kernel("x"), InvalidArgument);
    XGPU_FOR_EACH_CONTEXT(ctx) {
        CHECK_THROWS_AS(ctx.queue().write(Buffer(), "x", 1), InvalidArgument);
    }
}

TEST_CASE("zero-size buffers and transfers are valid") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto d = ctx.alloc(0);
        CHECK(d.size() == 0);
        ctx.queue().write(d, nullptr, 0);
        ctx.queue().read(d, nullptr, 0);
        ctx.queue().write_async(d, nullptr, 0).wait();
    }
}
