// The benchmarks' device timing: the median of `reps` runs of `work` between two queue markers,
// after `warmups` runs (compiles, pools, caches).
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include <xgpu/xgpu.hpp>

namespace xgpu::bench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median device milliseconds of `work` on q.
inline double median_ms(const Queue& q, int reps, const std::function<void()>& work, int warmups = 3) {
    for (int r = 0; r < warmups; ++r)
        work();
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        auto e0 = q.marker();
        work();
        auto e1 = q.marker();
        ms.push_back(e0.elapsed_ms(e1));
    }
    return median(ms);
}

} // namespace xgpu::bench
