// The memory pool's ordering by queue (a freed block is not handed to another queue while work
// that used it may still run), QueueScope, and the thread safety docs/errors.md promises.
#include <atomic>
#include <thread>

#include <xgpu/array.hpp>
#include <xgpu/reduction.hpp>

#include "support.hpp"

using namespace xgpu;
using test::random_vector;

namespace {

// A kernel that takes a while and then writes 42 everywhere: long enough that work enqueued on
// another queue after it runs first, when nothing orders the two.
struct Slow {
    Kernel kernel;
    std::uint64_t n;
    std::int32_t iterations;
    explicit Slow(const Context& ctx) {
        kernel = ctx.compile(R"(
            XGPU_KERNEL void slow(XGPU_GLOBAL float* x, const uint64_t n, const int32_t iterations) {
                const size_t i = XGPU_GLOBAL_ID(0);
                if (i >= n) return;
                float v = (float)i;
                for (int32_t k = 0; k < iterations; ++k) v = v * 0.999999f + 1.0f;
                x[i] = v > -1e30f ? 42.0f : v;
            })")
                     .kernel("slow");
        const bool cpu = ctx.device().type() == DeviceType::cpu;
        n = cpu ? 1 << 14 : 1 << 22;
        iterations = cpu ? 20000 : 200000;
    }
    void run(const Queue& q, const Buffer& b) const {
        kernel.launch(q, Grid{(n + 63) / 64 * 64, 64}, b, n, iterations);
    }
};

bool all_equal(const std::vector<float>& v, float x) {
    return std::all_of(v.begin(), v.end(), [&](float e) { return e == x; });
}

} // namespace

TEST_CASE("a block freed while another queue still uses it is not handed out (PyOpenCL issue 447)") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.pool().enabled()) return;
        const Slow slow(ctx);
        auto q1 = ctx.new_queue(), q2 = ctx.new_queue();
        ctx.pool().free_held();
        const auto before = ctx.pool().stats();
        {
            auto x = empty<float>(ctx, {slow.n});
            slow.run(q1, x.buffer()); // x is written on q1 long after this returns
        }                             // x dropped: its block is held with an event on q1
        auto y = empty<float>(ctx, {slow.n});
        q2.fill(y.buffer(), 1.0f);
        q2.finish();
        q1.finish();
        CHECK(all_equal(y.get(), 1.0f));
        CHECK(ctx.pool().stats().hits == before.hits); // y got fresh memory
        // Once q1's work is done, the block is handed out again.
        auto z = empty<float>(ctx, {slow.n});
        CHECK(ctx.pool().stats().hits == before.hits + 1);
    }
}

TEST_CASE("a block reused in order on its queue is waited for when another queue takes it up") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.pool().enabled()) return;
        const Slow slow(ctx);
        auto q2 = ctx.new_queue();
        ctx.pool().free_held();
        const auto before = ctx.pool().stats();
        {
            auto x = empty<float>(ctx, {slow.n});
            slow.run(ctx.queue(), x.buffer()); // on the default queue, the pool's home queue here
        }
        auto y = empty<float>(ctx, {slow.n}); // reused at once: the default queue runs in order
        CHECK(ctx.pool().stats().hits == before.hits + 1);
        q2.fill(y.buffer(), 3.0f); // another queue: waits for the default queue's earlier work
        q2.finish();
        CHECK(all_equal(y.get(), 3.0f));
    }
}

TEST_CASE("QueueScope runs array work on the scope's queue; arrays move between queues safely") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        auto q2 = ctx.new_queue();
        CHECK(ctx.current_queue().impl() == ctx.queue().impl());
        const auto h = random_vector<float>(100000, -1.0f, 1.0f);
        auto x = to_device(ctx, h);
        ctx.queue().finish();
        Array<float> y;
        double s = 0;
        {
            QueueScope on(q2);
            CHECK(ctx.current_queue().impl() == q2.impl());
            {
                auto q3 = ctx.new_queue();
                QueueScope inner(q3);
                CHECK(ctx.current_queue().impl() == q3.impl());
            }
            CHECK(ctx.current_queue().impl() == q2.impl());
            const auto launches = ctx.launch_count();
            y = 2.0f * x + 1.0f;
            s = sum(y).get();
            CHECK(ctx.launch_count() > launches);
            // Another thread has no scope: its work goes to the default queue.
            std::thread([&] { CHECK(ctx.current_queue().impl() == ctx.queue().impl()); }).join();
        }
        CHECK(ctx.current_queue().impl() == ctx.queue().impl());
        q2.finish();
        const auto got = y.get();
        double want = 0;
        for (std::size_t i = 0; i < h.size(); ++i) {
            REQUIRE(got[i] == 2.0f * h[i] + 1.0f);
            want += got[i];
        }
        CHECK(s == Approx(want).epsilon(1e-4));
        CHECK_THROWS_AS(QueueScope(Queue()), InvalidArgument);
    }
}

TEST_CASE("several threads on one context compile, launch and allocate at once") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        constexpr int threads = 4;
        std::atomic<int> failures{0};
        std::vector<std::thread> pool;
        const std::uint64_t salt = test::rng()();
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                try {
                    // A kernel no other thread or run has compiled (a cache miss on every backend).
                    const auto src = "XGPU_KERNEL void add_k(XGPU_GLOBAL int32_t* x, const uint64_t n) {\n"
                                     "    const size_t i = XGPU_GLOBAL_ID(0);\n"
                                     "    if (i < n) x[i] += " +
                                     std::to_string(t + 1) + "; /* " + std::to_string(salt) + " */\n}\n";
                    auto k = ctx.compile(src).kernel("add_k");
                    auto q = t % 2 ? ctx.new_queue() : ctx.queue();
                    for (int round = 0; round < 5; ++round) {
                        const std::size_t n = 1000 + 37 * std::size_t(t) + std::size_t(round);
                        auto a = zeros<std::int32_t>(ctx, {n}); // the default queue
                        ctx.queue().finish();
                        k.launch(q, Grid{(n + 63) / 64 * 64, 64}, a.buffer(), std::uint64_t(n));
                        q.finish();
                        auto b = a * 2; // array work from several threads on the default queue
                        const auto got = b.get();
                        if (!std::all_of(got.begin(), got.end(), [&](std::int32_t v) { return v == 2 * (t + 1); }))
                            failures++;
                    }
                } catch (const std::exception& e) {
                    UNSCOPED_INFO("thread " << t << ": " << e.what());
                    failures++;
                }
            });
        for (auto& th : pool)
            th.join();
        CHECK(failures == 0);
    }
}

TEST_CASE("one context per thread") {
    const std::string backend = test::contexts().front().backend();
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 3; ++t)
        pool.emplace_back([&, t] {
            try {
                auto ctx = Context::create(backend, test::contexts().front().device().name());
                const auto h = random_vector<double>(5000, -1.0, 1.0);
                auto x = to_device(ctx, h);
                const double got = dot(x, x).get();
                double want = 0;
                for (double v : h)
                    want += v * v;
                if (std::abs(got - want) > 1e-9 * want) failures++;
                (void)t;
            } catch (const std::exception& e) {
                UNSCOPED_INFO(e.what());
                failures++;
            }
        });
    for (auto& th : pool)
        th.join();
    CHECK(failures == 0);
}
