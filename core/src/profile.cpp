#include "profile.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "env.hpp"

namespace xgpu::detail {
namespace {

struct Pending {
    std::string kernel;
    std::shared_ptr<QueueImpl> queue; // keeps the context alive until the events are read
    std::shared_ptr<EventImpl> before, after;
};

struct Totals {
    std::uint64_t launches = 0;
    double ms = 0;
};

struct Profiler {
    std::mutex mutex;
    std::vector<Pending> pending;
    std::map<std::string, Totals> totals;

    // Reads the events of every pending launch (waiting for them).
    void resolve() {
        for (auto& p : pending) {
            auto& t = totals[p.kernel];
            t.launches++;
            try {
                t.ms += p.before->elapsed_ms(*p.after);
            } catch (const std::exception&) {
                // a failed launch was reported to its caller; it adds no time
            }
        }
        pending.clear();
    }

    void report() {
        std::lock_guard lock(mutex);
        resolve();
        if (totals.empty()) return;
        std::fprintf(stderr, "\nxgpu profile (XGPU_PROFILE=1): device time per kernel\n%-40s %10s %12s %12s\n",
                     "kernel", "launches", "total ms", "mean us");
        for (const auto& [name, t] : totals)
            std::fprintf(stderr, "%-40s %10llu %12.3f %12.2f\n", name.c_str(),
                         static_cast<unsigned long long>(t.launches), t.ms,
                         t.launches ? 1e3 * t.ms / double(t.launches) : 0.0);
    }
};

Profiler& profiler() {
    static Profiler* p = new Profiler; // never destroyed: the exit handler may run after statics
    return *p;
}

} // namespace

bool profiling() {
    static const bool on = env::profile_enabled();
    return on;
}

void profile_launch(const std::string& kernel, std::shared_ptr<QueueImpl> queue, std::shared_ptr<EventImpl> before,
                    std::shared_ptr<EventImpl> after) {
    static std::once_flag once;
    std::call_once(once, [] { std::atexit([] { profiler().report(); }); });
    auto& p = profiler();
    std::lock_guard lock(p.mutex);
    p.pending.push_back({kernel, std::move(queue), std::move(before), std::move(after)});
    if (p.pending.size() >= 4096) p.resolve();
}

} // namespace xgpu::detail
