// The runtime on every backend: transfers, fills, launches with scalars, buffers, arrays and
// local memory over 1-, 2- and 3-D ranges, events and queues; each against a host reference.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>

#include "support.hpp"
#include "xgpu/array.hpp"
#include "xgpu/detail/backend.hpp"

using namespace xgpu;
using xgpu::test::random_vector;

TEST_CASE("write and read round trip, blocking and asynchronous") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1000), std::size_t(1) << 20}) {
            const auto host = random_vector<std::uint32_t>(n, 0, 0xffffffffu);
            auto buf = ctx.alloc(n * 4);
            REQUIRE(buf.size() == n * 4);
            q.write(buf, host.data(), n * 4);
            std::vector<std::uint32_t> back(n);
            q.read(buf, back.data(), n * 4);
            CHECK(back == host);

            // Asynchronous, at an offset.
            const auto more = random_vector<std::uint32_t>(n, 0, 0xffffffffu);
            const std::size_t half = n / 2;
            auto e1 = q.write_async(buf, more.data(), (n - half) * 4, half * 4);
            std::vector<std::uint32_t> back2(n);
            auto e2 = q.read_async(buf, back2.data(), n * 4);
            e2.wait();
            CHECK(e1.is_complete());
            for (std::size_t i = 0; i < n; ++i)
                REQUIRE(back2[i] == (i < half ? host[i] : more[i - half]));
        }
    }
}

TEST_CASE("device-to-device copy at offsets") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        const std::size_t n = 4099;
        const auto a = random_vector<std::uint8_t>(n, 0, 255);
        const auto b = random_vector<std::uint8_t>(n, 0, 255);
        auto da = ctx.alloc(n), db = ctx.alloc(n);
        q.write(da, a.data(), n);
        q.write(db, b.data(), n);
        q.copy(da, db, 1000, 17, 333);
        auto e = q.copy_async(da, db, 5, 0, 0);
        e.wait();
        std::vector<std::uint8_t> got(n), want = b;
        std::memcpy(want.data() + 333, a.data() + 17, 1000);
        std::memcpy(want.data(), a.data(), 5);
        q.read(db, got.data(), n);
        CHECK(got == want);
    }
}

TEST_CASE("fill with every pattern size") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        const std::size_t bytes = 128 * 37;
        for (std::size_t p = 1; p <= 128; p *= 2) {
            const auto base = random_vector<std::uint8_t>(bytes, 0, 255);
            const auto pattern = random_vector<std::uint8_t>(p, 0, 255);
            auto buf = ctx.alloc(bytes);
            q.write(buf, base.data(), bytes);
            const std::size_t offset = p * 3, len = bytes - p * 5; // leaves both ends alone
            q.fill(buf, pattern.data(), p, len, offset).wait();
            std::vector<std::uint8_t> got(bytes), want = base;
            for (std::size_t i = 0; i < len; ++i)
                want[offset + i] = pattern[i % p];
            q.read(buf, got.data(), bytes);
            INFO("pattern size " << p);
            CHECK(got == want);
        }
        // The typed form fills the whole buffer.
        auto buf = ctx.alloc(1001 * sizeof(double));
        q.fill(buf, -2.5);
        std::vector<double> got(1001);
        q.read(buf, got.data(), got.size() * sizeof(double));
        CHECK(std::all_of(got.begin(), got.end(), [](double v) { return v == -2.5; }));
    }
}

TEST_CASE("kernels take buffers and typed scalars") {
    static const char* src = R"(
        typedef struct { float scale; int32_t shift; } params_t;
        XGPU_KERNEL void axpb(XGPU_GLOBAL float* y, XGPU_GLOBAL const float* x, const float a, const int64_t b,
                              const uint32_t n, const params_t p) {
            const size_t i = XGPU_GLOBAL_ID(0);
            if (i < n) y[i] = p.scale * (a * x[i] + (float)b) + (float)p.shift;
        }
    )";
    struct params_t {
        float scale;
        std::int32_t shift;
    };
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        auto k = ctx.compile(src).kernel("axpb");
        CHECK(k.name() == "axpb");
        const std::uint32_t n = 10007;
        const auto x = random_vector<float>(n, -10, 10);
        const float a = test::random_vector<float>(1, -3, 3)[0];
        const std::int64_t b = test::random_vector<std::int64_t>(1, -100, 100)[0];
        const params_t p{test::random_vector<float>(1, -2, 2)[0], int(test::random_vector<int>(1, -5, 5)[0])};
        auto dx = ctx.alloc(n * 4), dy = ctx.alloc(n * 4);
        q.write(dx, x.data(), n * 4);
        k.launch(q, Grid{n}, dy, dx, a, b, n, p); // the backend picks the work-group
        std::vector<float> y(n);
        q.read(dy, y.data(), n * 4);
        for (std::uint32_t i = 0; i < n; ++i)
            REQUIRE(y[i] == Approx(p.scale * (a * x[i] + float(b)) + float(p.shift)).margin(1e-3));

        k.launch(q, Grid{((n + 63) / 64) * 64, 64}, dy, dx, 1.0f, std::int64_t(0), n, params_t{1.0f, 0});
        q.read(dy, y.data(), n * 4);
        CHECK(y == x);
    }
}

TEST_CASE("an Array is a kernel argument: its buffer and its offset in elements") {
    static const char* src = R"(
        XGPU_KERNEL void add_c(XGPU_GLOBAL float* y, const int64_t y_o, XGPU_GLOBAL const float* x, const int64_t x_o,
                               const float c, const uint32_t n) {
            const size_t i = XGPU_GLOBAL_ID(0);
            if (i < n) y[y_o + i] = x[x_o + i] + c;
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto k = ctx.compile(src).kernel("add_c");
        const std::size_t n = 1000 + std::size_t(test::rng()() % 1000);
        const auto hx = random_vector<float>(n, -10, 10), hy = random_vector<float>(n, -10, 10);
        const auto x = to_device(ctx, hx), y = to_device(ctx, hy);
        // Views at random offsets, m elements each.
        const std::int64_t xo = std::int64_t(test::rng()() % 100), yo = std::int64_t(test::rng()() % 100);
        const auto m = std::uint32_t(n - 100);
        const Array<float> xv = x(slice(xo, xo + m));
        Array<float> yv = y(slice(yo, yo + m));
        REQUIRE(xv.offset() == xo);
        REQUIRE(yv.offset() == yo);
        const float c = random_vector<float>(1, -3, 3)[0];
        k.launch(ctx.queue(), Grid{m}, yv, xv, c, m);
        const auto got = y.get();
        for (std::size_t i = 0; i < n; ++i) {
            const bool inside = std::int64_t(i) >= yo && std::int64_t(i) < yo + std::int64_t(m);
            REQUIRE(got[i] == (inside ? hx[std::size_t(xo) + i - std::size_t(yo)] + c : hy[i]));
        }
    }
}

TEST_CASE("2-D and 3-D ranges give every work-item its ids") {
    static const char* src = R"(
        XGPU_KERNEL void ids(XGPU_GLOBAL uint32_t* out) {
            const size_t x = XGPU_GLOBAL_ID(0), y = XGPU_GLOBAL_ID(1), z = XGPU_GLOBAL_ID(2);
            const size_t nx = XGPU_GLOBAL_SIZE(0), ny = XGPU_GLOBAL_SIZE(1);
            const size_t i = (z * ny + y) * nx + x;
            out[4 * i + 0] = (uint32_t)x;
            out[4 * i + 1] = (uint32_t)y;
            out[4 * i + 2] = (uint32_t)z;
            out[4 * i + 3] = (uint32_t)((XGPU_GROUP_ID(0) * XGPU_LOCAL_SIZE(0) + XGPU_LOCAL_ID(0)) == x &&
                                        (XGPU_GROUP_ID(1) * XGPU_LOCAL_SIZE(1) + XGPU_LOCAL_ID(1)) == y &&
                                        (XGPU_GROUP_ID(2) * XGPU_LOCAL_SIZE(2) + XGPU_LOCAL_ID(2)) == z &&
                                        XGPU_NUM_GROUPS(0) * XGPU_LOCAL_SIZE(0) == nx);
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        auto k = ctx.compile(src).kernel("ids");
        for (const Grid& g :
             {Grid{Range(48, 20), Range(16, 4)}, Grid{Range(8, 6, 10), Range(4, 2, 5)}, Grid{Range(30, 7)}}) {
            const std::size_t n = g.global.total();
            auto out = ctx.alloc(n * 16);
            k.launch(q, g, out);
            std::vector<std::uint32_t> got(4 * n);
            q.read(out, got.data(), n * 16);
            const std::size_t nx = g.global[0], ny = g.global[1];
            for (std::size_t i = 0; i < n; ++i) {
                INFO("grid " << g.global.str() << " local " << g.local.str() << " item " << i);
                REQUIRE(got[4 * i + 0] == i % nx);
                REQUIRE(got[4 * i + 1] == (i / nx) % ny);
                REQUIRE(got[4 * i + 2] == i / (nx * ny));
                REQUIRE(got[4 * i + 3] == 1);
            }
        }
    }
}

TEST_CASE("local memory: static arrays, local parameters and barriers") {
    // A work-group sum in static local memory, then a reversal through a local parameter.
    static const char* src = R"(
        #define WG 128
        XGPU_KERNEL void group_sums(XGPU_GLOBAL const int32_t* in, XGPU_GLOBAL int32_t* out) {
            XGPU_LOCAL int32_t scratch[WG];
            const size_t l = XGPU_LOCAL_ID(0);
            scratch[l] = in[XGPU_GLOBAL_ID(0)];
            XGPU_BARRIER();
            for (size_t s = WG / 2; s > 0; s /= 2) {
                if (l < s) scratch[l] += scratch[l + s];
                XGPU_BARRIER();
            }
            if (l == 0) out[XGPU_GROUP_ID(0)] = scratch[0];
        }
        XGPU_KERNEL void reverse_groups(XGPU_GLOBAL const float* in, XGPU_GLOBAL float* out,
                                        XGPU_LOCAL_PARAM(float, tile), XGPU_LOCAL_PARAM(int32_t, tag)) {
            const size_t l = XGPU_LOCAL_ID(0), n = XGPU_LOCAL_SIZE(0);
            tile[l] = in[XGPU_GLOBAL_ID(0)];
            tag[l] = (int32_t)l;
            XGPU_LOCAL_BARRIER();
            out[XGPU_GLOBAL_ID(0)] = tile[n - 1 - l] + (float)(tag[n - 1 - l] - (int32_t)(n - 1 - l));
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        auto prog = ctx.compile(src);
        const std::size_t groups = 37, wg = 128, n = groups * wg;
        const auto in = random_vector<std::int32_t>(n, -1000, 1000);
        auto din = ctx.alloc(n * 4), dout = ctx.alloc(groups * 4);
        q.write(din, in.data(), n * 4);
        prog.kernel("group_sums").launch(q, Grid{n, wg}, din, dout);
        std::vector<std::int32_t> sums(groups);
        q.read(dout, sums.data(), groups * 4);
        for (std::size_t g = 0; g < groups; ++g)
            REQUIRE(sums[g] == std::accumulate(in.begin() + g * wg, in.begin() + (g + 1) * wg, 0));

        const std::size_t lw = 64;
        const auto f = random_vector<float>(n, -1, 1);
        auto fin = ctx.alloc(n * 4), fout = ctx.alloc(n * 4);
        q.write(fin, f.data(), n * 4);
        prog.kernel("reverse_groups").launch(q, Grid{n, lw}, fin, fout, Local{lw * 4}, Local{lw * 4});
        std::vector<float> got(n);
        q.read(fout, got.data(), n * 4);
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(got[i] == f[(i / lw) * lw + (lw - 1 - i % lw)]);
    }
}

TEST_CASE("events time work and queues are independent") {
    static const char* src = R"(
        XGPU_KERNEL void inc(XGPU_GLOBAL uint32_t* a) { a[XGPU_GLOBAL_ID(0)] += 1u; }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q1 = ctx.queue(), q2 = ctx.new_queue();
        auto k = ctx.compile(src).kernel("inc");
        const std::size_t n = 1 << 16;
        auto a = random_vector<std::uint32_t>(n, 0, 1000);
        auto b = random_vector<std::uint32_t>(n, 0, 1000);
        auto da = ctx.alloc(n * 4), db = ctx.alloc(n * 4);
        q1.write(da, a.data(), n * 4);
        q2.write(db, b.data(), n * 4);
        auto start = q1.marker();
        for (int r = 0; r < 5; ++r)
            k.launch(q1, Grid{n}, da);
        auto stop = q1.marker();
        for (int r = 0; r < 3; ++r)
            k.launch(q2, Grid{n}, db);
        q2.finish();
        stop.wait();
        CHECK(stop.is_complete());
        CHECK(start.elapsed_ms(stop) >= 0.0);
        std::vector<std::uint32_t> ga(n), gb(n);
        q1.read(da, ga.data(), n * 4);
        q2.read(db, gb.data(), n * 4);
        for (std::size_t i = 0; i < n; ++i) {
            REQUIRE(ga[i] == a[i] + 5);
            REQUIRE(gb[i] == b[i] + 3);
        }
    }
}

TEST_CASE("the in-memory cache returns the same kernel objects") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::string src =
            "XGPU_KERNEL void noop(XGPU_GLOBAL int32_t* a) { (void)a; }\n// " + std::to_string(test::rng()());
        auto p1 = ctx.compile(src);
        auto p2 = ctx.compile(src);
        CHECK(p2.origin() == ProgramOrigin::memory_cache);
        CHECK(p1.impl() == p2.impl());
        CHECK(p1.kernel("noop").impl() == p2.kernel("noop").impl());
        CHECK(p1.kernel_names() == std::vector<std::string>{"noop"});
    }
}

TEST_CASE("pinned host memory round trip") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q = ctx.queue();
        const std::size_t n = 1 << 18;
        auto h = ctx.alloc_host(n * 8);
        REQUIRE(h.size() == n * 8);
        const auto src = random_vector<double>(n, -1, 1);
        std::memcpy(h.data(), src.data(), n * 8);
        auto d = ctx.alloc(n * 8);
        q.write_async(d, h.data(), n * 8).wait();
        auto h2 = ctx.alloc_host(n * 8);
        q.read_async(d, h2.data(), n * 8).wait();
        CHECK(std::memcmp(h2.data(), src.data(), n * 8) == 0);
    }
}

TEST_CASE("contexts coexist in one process") {
    // Every available backend at once, plus a second context on the first backend's device.
    std::vector<Context> ctxs;
    for (const auto& b : backends())
        if (b.available) ctxs.push_back(Context::create(b.name));
    REQUIRE(!ctxs.empty());
    ctxs.push_back(Context::create(ctxs.front().device()));
    static const char* src =
        "XGPU_KERNEL void sq(XGPU_GLOBAL float* a) { size_t i = XGPU_GLOBAL_ID(0); a[i] = a[i] * a[i]; }";
    const std::size_t n = 4096;
    const auto host = random_vector<float>(n, -4, 4);
    std::vector<std::vector<float>> results;
    for (auto& ctx : ctxs) {
        auto d = ctx.alloc(n * 4);
        ctx.queue().write(d, host.data(), n * 4);
        ctx.compile(src).kernel("sq").launch(ctx.queue(), Grid{n}, d);
        results.emplace_back(n);
        ctx.queue().read(d, results.back().data(), n * 4);
    }
    for (const auto& r : results)
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(r[i] == Approx(host[i] * host[i]).epsilon(1e-6));
}

TEST_CASE("a context is released when its last handle goes, caches and all") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        std::weak_ptr<detail::ContextImpl> weak;
        {
            auto c = Context::create(ctx.device());
            weak = c.impl();
            auto d = c.alloc(64 * 4);
            auto k =
                c.compile("XGPU_KERNEL void one(XGPU_GLOBAL int32_t* a) { a[XGPU_GLOBAL_ID(0)] = 1; }").kernel("one");
            k.launch(c.queue(), Grid{64}, d);
            auto pooled = c.pool().allocate(1000);
            std::int32_t got[64];
            c.queue().read(d, got, sizeof got);
            CHECK(got[63] == 1);
            CHECK(!weak.expired());
        }
        CHECK(weak.expired());
    }
}

TEST_CASE("XGPU_DUMP_KERNELS writes each program a context builds, as the compiler sees it") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto dir = std::filesystem::temp_directory_path() / ("xgpu-dump-" + std::to_string(test::rng()()));
        ::setenv("XGPU_DUMP_KERNELS", dir.c_str(), 1);
        const std::string marker = "dump_me_" + std::to_string(test::rng()());
        auto k = ctx.compile("XGPU_KERNEL void " + marker + "(XGPU_GLOBAL int* x) { x[XGPU_GLOBAL_ID(0)] = 1; }",
                             {"-DXGPU_TEST_OPTION=3"})
                     .kernel(marker);
        ::unsetenv("XGPU_DUMP_KERNELS");
        std::size_t found = 0;
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            std::ifstream in(entry.path());
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (text.find(marker) == std::string::npos) continue;
            ++found;
            CHECK(text.find("-DXGPU_TEST_OPTION=3") != std::string::npos);
            CHECK(text.find("XGPU_KERNEL") != std::string::npos); // the preamble's macros, as compiled
        }
        CHECK(found == 1);
        std::filesystem::remove_all(dir);
    }
}
