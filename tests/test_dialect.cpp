// The kernel dialect: one kernel text, every macro, compiled and run on each backend.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "support.hpp"

using namespace xgpu;
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

TEST_CASE("the warp barrier and the tensor-core products where the device has them") {
    // One warp: each product of A (16 x 8) and B (8 x 8) that the preamble offers, from fragments
    // loaded in the documented lane layout (lane 4g + t), added to C; small integers, so every
    // sum is exact in any order. The warp barrier's check shows only that the macro exists and
    // local values pass between lanes (one converged warp passes it without a barrier too).
    // flags (zeroed by the host): which of the functions the preamble defined.
    static const char* src = R"(
        XGPU_KERNEL void mma(XGPU_GLOBAL const double* a, XGPU_GLOBAL const double* b, XGPU_GLOBAL const double* c,
                             XGPU_GLOBAL double* out, XGPU_GLOBAL int32_t* flags) {
            const int lane = (int)XGPU_LOCAL_ID(0), g = lane / 4, t = lane % 4;
            XGPU_LOCAL double s[32];
        #ifdef XGPU_WARP_SYNC
            s[lane] = 3.0 * lane;
            XGPU_WARP_SYNC();
            out[320 + lane] = s[(lane + 1) % 32];
            if (lane == 0) flags[2] = 1;
        #else
            (void)s;
        #endif
        #ifdef XGPU_HAS_MMA_F64
            {
                double d[2] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1]};
                xgpu_mma_m8n8k4_f64(d, a[g * 8 + t], b[t * 8 + g]);
                out[2 * lane] = d[0];
                out[2 * lane + 1] = d[1];
                if (lane == 0) flags[0] = 1;
            }
        #endif
        #ifdef XGPU_HAS_MMA_F64_M16
            {
                double d[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
                xgpu_mma_m16n8k4_f64(d, a[g * 8 + t], a[(g + 8) * 8 + t], b[t * 8 + g]);
                for (int i = 0; i < 4; ++i) out[64 + 4 * lane + i] = d[i];
                double e[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
                xgpu_mma_m16n8k8_f64(e, a[g * 8 + t], a[(g + 8) * 8 + t], a[g * 8 + t + 4], a[(g + 8) * 8 + t + 4],
                                     b[t * 8 + g], b[(t + 4) * 8 + g]);
                for (int i = 0; i < 4; ++i) out[192 + 4 * lane + i] = e[i];
                if (lane == 0) flags[1] = 1;
            }
        #endif
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto& info = ctx.device().info();
        if (ctx.backend() == "cuda") CHECK(info.nv_compute_capability == unsigned(std::atoi(info.arch.c_str() + 3)));
        if (!ctx.device().has_fp64()) continue; // the kernel takes doubles
        auto q = ctx.queue();
        std::vector<double> a(16 * 8), b(8 * 8), c(16 * 8);
        for (auto* v : {&a, &b, &c}) {
            *v = random_vector<double>(v->size(), -8.0, 8.0);
            for (auto& x : *v)
                x = std::round(x);
        }
        auto da = ctx.alloc(a.size() * 8), db = ctx.alloc(b.size() * 8), dc = ctx.alloc(c.size() * 8),
             dout = ctx.alloc(352 * 8), dflags = ctx.alloc(3 * 4);
        q.write(da, a.data(), a.size() * 8);
        q.write(db, b.data(), b.size() * 8);
        q.write(dc, c.data(), c.size() * 8);
        const std::int32_t zero[3] = {0, 0, 0};
        q.write(dflags, zero, sizeof zero);
        ctx.compile(src).kernel("mma").launch(q, Grid{32, 32}, da, db, dc, dout, dflags);
        std::vector<double> out(352);
        std::int32_t flags[3];
        q.read(dout, out.data(), out.size() * 8);
        q.read(dflags, flags, sizeof flags);
        const unsigned cc = info.nv_compute_capability;
        INFO(ctx.backend() << " " << ctx.device().name() << ", compute capability " << cc);
        // Never offered where the device lacks them; offered where it has them, except that on
        // CUDA the preamble follows NVRTC's target, which is below the device where NVRTC does
        // not know it (NVRTC 12 and later know compute capability 9.0).
        const bool nvrtc12 =
            ctx.backend() != "cuda" || std::atoi(info.compiler_version.c_str() + std::strlen("NVRTC ")) >= 12;
        CHECK(flags[0] <= (cc >= 80 ? 1 : 0));
        CHECK(flags[1] <= (cc >= 90 ? 1 : 0));
        if (cc >= 80) CHECK(flags[0] == 1);
        if (cc >= 90 && nvrtc12) CHECK(flags[1] == 1);
        if (cc >= 70) CHECK(flags[2] == 1);
        // D[i][j] = C[i][j] + sum over k < kk of A[i][k] B[k][j].
        auto want = [&](int i, int j, int kk) {
            double s = c[std::size_t(i * 8 + j)];
            for (int k = 0; k < kk; ++k)
                s += a[std::size_t(i * 8 + k)] * b[std::size_t(k * 8 + j)];
            return s;
        };
        for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, t = lane % 4;
            if (flags[2]) CHECK(out[std::size_t(320 + lane)] == 3.0 * ((lane + 1) % 32));
            if (flags[0])
                for (int i = 0; i < 2; ++i)
                    CHECK(out[std::size_t(2 * lane + i)] == want(g, 2 * t + i, 4));
            if (flags[1])
                for (int i = 0; i < 4; ++i) {
                    const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
                    CHECK(out[std::size_t(64 + 4 * lane + i)] == want(row, col, 4));
                    CHECK(out[std::size_t(192 + 4 * lane + i)] == want(row, col, 8));
                }
        }
    }
}

TEST_CASE("the TF32 tensor-core products where the device has them") {
    // One warp: xgpu_tf32 against a host rounding (to nearest, ties away, 13 bits dropped) on
    // random floats, and the 16x8x4 and 16x8x8 TF32 products of small integers (exact in TF32
    // and in the float sums) against host products, in the f64 products' lane layout.
    static const char* src = R"(
        XGPU_KERNEL void tf32(XGPU_GLOBAL const float* a, XGPU_GLOBAL const float* b, XGPU_GLOBAL const float* c,
                              XGPU_GLOBAL const float* x, XGPU_GLOBAL float* out, XGPU_GLOBAL uint32_t* bits,
                              XGPU_GLOBAL int32_t* flag) {
            const int lane = (int)XGPU_LOCAL_ID(0), g = lane / 4, t = lane % 4;
        #ifdef XGPU_HAS_MMA_TF32
            for (int i = 0; i < 8; ++i) {
                bits[8 * lane + i] = xgpu_tf32(x[8 * lane + i]);
                out[256 + 8 * lane + i] = xgpu_tf32_value(bits[8 * lane + i]);
            }
            float d[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
            xgpu_mma_m16n8k4_tf32(d, xgpu_tf32(a[g * 8 + t]), xgpu_tf32(a[(g + 8) * 8 + t]), xgpu_tf32(b[t * 8 + g]));
            for (int i = 0; i < 4; ++i) out[4 * lane + i] = d[i];
            float e[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
            xgpu_mma_m16n8k8_tf32(e, xgpu_tf32(a[g * 8 + t]), xgpu_tf32(a[(g + 8) * 8 + t]), xgpu_tf32(a[g * 8 + t + 4]),
                                  xgpu_tf32(a[(g + 8) * 8 + t + 4]), xgpu_tf32(b[t * 8 + g]), xgpu_tf32(b[(t + 4) * 8 + g]));
            for (int i = 0; i < 4; ++i) out[128 + 4 * lane + i] = e[i];
            if (lane == 0) flag[0] = 1;
        #else
            (void)a; (void)b; (void)c; (void)x; (void)out; (void)bits; (void)flag; (void)g; (void)t; (void)lane;
        #endif
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto& info = ctx.device().info();
        auto q = ctx.queue();
        std::vector<float> a(16 * 8), b(8 * 8), c(16 * 8);
        for (auto* v : {&a, &b, &c})
            for (auto& x : *v)
                x = std::round(random_vector<float>(1, -8.0f, 8.0f)[0]);
        auto x = random_vector<float>(256, -1e3f, 1e3f);
        auto da = ctx.alloc(a.size() * 4), db = ctx.alloc(b.size() * 4), dc = ctx.alloc(c.size() * 4),
             dx = ctx.alloc(x.size() * 4), dout = ctx.alloc(512 * 4), dbits = ctx.alloc(256 * 4), dflag = ctx.alloc(4);
        const std::int32_t zero = 0;
        q.write(da, a.data(), a.size() * 4);
        q.write(db, b.data(), b.size() * 4);
        q.write(dc, c.data(), c.size() * 4);
        q.write(dx, x.data(), x.size() * 4);
        q.write(dflag, &zero, 4);
        ctx.compile(src).kernel("tf32").launch(q, Grid{32, 32}, da, db, dc, dx, dout, dbits, dflag);
        std::vector<float> out(512);
        std::vector<std::uint32_t> bits(256);
        std::int32_t flag = 0;
        q.read(dout, out.data(), out.size() * 4);
        q.read(dbits, bits.data(), bits.size() * 4);
        q.read(dflag, &flag, 4);
        const unsigned cc = info.nv_compute_capability;
        INFO(ctx.backend() << " " << ctx.device().name() << ", compute capability " << cc);
        CHECK(flag <= (cc >= 80 ? 1 : 0));
        if (cc >= 80) CHECK(flag == 1);
        if (!flag) continue;
        for (std::size_t i = 0; i < x.size(); ++i) {
            std::uint32_t u;
            std::memcpy(&u, &x[i], 4);
            const std::uint32_t want = (u + 0x1000u) & 0xffffe000u;
            float v;
            std::memcpy(&v, &want, 4);
            CHECK(bits[i] == want);
            CHECK(out[256 + i] == v);
        }
        auto product = [&](int i, int j, int kk) {
            float s = c[std::size_t(i * 8 + j)];
            for (int k = 0; k < kk; ++k)
                s += a[std::size_t(i * 8 + k)] * b[std::size_t(k * 8 + j)];
            return s;
        };
        for (int lane = 0; lane < 32; ++lane)
            for (int i = 0; i < 4; ++i) {
                const int g = lane / 4, t = lane % 4, row = g + 8 * (i / 2), col = 2 * t + i % 2;
                CHECK(out[std::size_t(4 * lane + i)] == product(row, col, 4));
                CHECK(out[std::size_t(128 + 4 * lane + i)] == product(row, col, 8));
            }
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
