// The kernel dialect: one kernel text, every macro, compiled and run on each backend.
#include <cmath>
#include <cstdlib>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using xgpu::test::random_vector;

TEST_CASE("fixed-width types have their sizes and signedness") {
    static const char* src = R"(
        XGPU_KERNEL void sizes(XGPU_GLOBAL int32_t* out) {
            out[0] = sizeof(int8_t);  out[1] = sizeof(uint8_t);  out[2] = sizeof(int16_t); out[3] = sizeof(uint16_t);
            out[4] = sizeof(int32_t); out[5] = sizeof(uint32_t); out[6] = sizeof(int64_t); out[7] = sizeof(uint64_t);
            out[8] = (int8_t)-1 < 0;  out[9] = (uint8_t)-1 > 0;  out[10] = (int64_t)-1 < 0; out[11] = (uint64_t)-1 > 0;
            out[12] = sizeof(size_t) >= 4;
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto d = ctx.alloc(13 * 4);
        ctx.compile(src).kernel("sizes").launch(ctx.queue(), Grid{1}, d);
        std::int32_t got[13];
        ctx.queue().read(d, got, sizeof got);
        const std::int32_t want[13] = {1, 1, 2, 2, 4, 4, 8, 8, 1, 1, 1, 1, 1};
        for (int i = 0; i < 13; ++i)
            CHECK(got[i] == want[i]);
    }
}

TEST_CASE("device functions, constant tables, restrict and atomics") {
    static const char* src = R"(
        XGPU_CONSTANT int32_t weights[4] = {1, 10, 100, 1000};
        XGPU_DEVICE_FN int32_t weigh(int32_t v) { return v * weights[v & 3]; }
        XGPU_KERNEL void apply(XGPU_GLOBAL const int32_t* XGPU_RESTRICT in, XGPU_GLOBAL int32_t* XGPU_RESTRICT out,
                               XGPU_GLOBAL int32_t* counter, XGPU_CONSTANT_PTR(int32_t) bias, const uint32_t n) {
            const size_t i = XGPU_GLOBAL_ID(0);
            if (i >= n) return;
            out[i] = weigh(in[i]) + bias[0];
            if (in[i] % 2 == 0) XGPU_ATOMIC_ADD(counter, 1);
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        const std::uint32_t n = 5000;
        const auto in = random_vector<std::int32_t>(n, -10000, 10000);
        auto din = ctx.alloc(n * 4), dout = ctx.alloc(n * 4), dc = ctx.alloc(4), dbias = ctx.alloc(4);
        q.write(din, in.data(), n * 4);
        q.fill(dc, std::int32_t(0));
        const std::int32_t bias = 3;
        q.write(dbias, &bias, 4);
        ctx.compile(src).kernel("apply").launch(q, Grid{(n + 255) / 256 * 256, 256}, din, dout, dc, dbias, n);
        std::vector<std::int32_t> out(n);
        std::int32_t count = 0;
        q.read(dout, out.data(), n * 4);
        q.read(dc, &count, 4);
        const std::int32_t w[4] = {1, 10, 100, 1000};
        std::int32_t evens = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            REQUIRE(out[i] == in[i] * w[in[i] & 3] + bias);
            evens += in[i] % 2 == 0;
        }
        CHECK(count == evens);
    }
}

TEST_CASE("double precision where the device has it") {
    static const char* src = R"(
        XGPU_KERNEL void dpoly(XGPU_GLOBAL const double* x, XGPU_GLOBAL double* y, const double c) {
            const size_t i = XGPU_GLOBAL_ID(0);
            y[i] = sqrt(x[i] * x[i] + c) + 1e-300 * x[i];
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().has_fp64()) {
            WARN(ctx.device().name() << " has no fp64");
            continue;
        }
        CHECK(ctx.preamble().find("XGPU_HAS_FP64") != std::string::npos);
        auto q = ctx.queue();
        const std::size_t n = 4096;
        const auto x = random_vector<double>(n, -1e3, 1e3);
        const double c = 1.0 / 3.0;
        auto dx = ctx.alloc(n * 8), dy = ctx.alloc(n * 8);
        q.write(dx, x.data(), n * 8);
        ctx.compile(src).kernel("dpoly").launch(q, Grid{n}, dx, dy, c);
        std::vector<double> y(n);
        q.read(dy, y.data(), n * 8);
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(y[i] == Approx(std::sqrt(x[i] * x[i] + c)).epsilon(1e-14));
    }
}

TEST_CASE("the warp barrier where the device has it") {
    // One warp: the check shows only that the macro exists and local values pass between lanes
    // (one converged warp passes it without a barrier too). flag (zeroed by the host): whether the
    // preamble defined it. (examples/dg's mma.kernel holds the tensor-core products.)
    static const char* src = R"(
        XGPU_KERNEL void warp(XGPU_GLOBAL double* out, XGPU_GLOBAL int32_t* flag) {
            const int lane = (int)XGPU_LOCAL_ID(0);
            XGPU_LOCAL double s[32];
        #ifdef XGPU_WARP_SYNC
            s[lane] = 3.0 * lane;
            XGPU_WARP_SYNC();
            out[lane] = s[(lane + 1) % 32];
            if (lane == 0) flag[0] = 1;
        #else
            (void)s; (void)out; (void)flag; (void)lane;
        #endif
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto& info = ctx.device().info();
        if (ctx.backend() == "cuda") CHECK(info.nv_compute_capability == unsigned(std::atoi(info.arch.c_str() + 3)));
        if (!ctx.device().has_fp64()) continue; // the kernel takes doubles
        auto q = ctx.queue();
        auto dout = ctx.alloc(32 * 8), dflag = ctx.alloc(4);
        const std::int32_t zero = 0;
        q.write(dflag, &zero, 4);
        ctx.compile(src).kernel("warp").launch(q, Grid{32, 32}, dout, dflag);
        std::vector<double> out(32);
        std::int32_t flag = 0;
        q.read(dout, out.data(), out.size() * 8);
        q.read(dflag, &flag, 4);
        INFO(ctx.backend() << " " << ctx.device().name() << ", compute capability " << info.nv_compute_capability);
        if (info.nv_compute_capability >= 70) CHECK(flag == 1);
        for (int lane = 0; flag && lane < 32; ++lane)
            CHECK(out[std::size_t(lane)] == 3.0 * ((lane + 1) % 32));
    }
}

TEST_CASE("native source compiles without the dialect") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const bool cuda = ctx.backend() == "cuda";
        const std::string src =
            cuda ? "extern \"C\" __global__ void neg(int* a) { a[threadIdx.x] = -a[threadIdx.x]; }"
                 : "__kernel void neg(__global int* a) { a[get_global_id(0)] = -a[get_global_id(0)]; }";
        CHECK(ctx.preamble().find(cuda ? "XGPU_BACKEND_CUDA" : "XGPU_BACKEND_OPENCL") != std::string::npos);
        const auto v = random_vector<std::int32_t>(32, -100, 100);
        auto d = ctx.alloc(128);
        ctx.queue().write(d, v.data(), 128);
        ctx.compile_native(src).kernel("neg").launch(ctx.queue(), Grid{32, 32}, d);
        std::vector<std::int32_t> got(32);
        ctx.queue().read(d, got.data(), 128);
        for (int i = 0; i < 32; ++i)
            REQUIRE(got[i] == -v[i]);
    }
}

TEST_CASE("a CUDA C++ kernel without extern \"C\" is found by its plain name where only one has it") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (ctx.backend() != "cuda") continue; // OpenCL C does not mangle
        const Program p = ctx.compile_native("__global__ void neg(int* a) { a[threadIdx.x] = -a[threadIdx.x]; }\n"
                                             "__global__ void twice(int* a) { a[threadIdx.x] *= 2; }\n"
                                             "__global__ void twice(float* a) { a[threadIdx.x] *= 2; }\n");
        // The plain name is looked up in the module's list of kernels, which a driver before
        // 12.4 does not give.
        if (p.kernel_names().empty()) continue;
        const auto v = random_vector<std::int32_t>(32, -100, 100);
        auto d = ctx.alloc(128);
        ctx.queue().write(d, v.data(), 128);
        const Kernel k = p.kernel("neg");
        CHECK(k.name() == "neg");
        k.launch(ctx.queue(), Grid{32, 32}, d);
        std::vector<std::int32_t> got(32);
        ctx.queue().read(d, got.data(), 128);
        for (int i = 0; i < 32; ++i)
            REQUIRE(got[i] == -v[i]);
        // Overloads: the plain name names two kernels; their mangled names still find each.
        CHECK_THROWS_WITH(p.kernel("twice"), Contains("no kernel named 'twice'") && Contains("_Z5twicePi"));
        CHECK(p.kernel("_Z5twicePf").name() == "_Z5twicePf");
    }
}
