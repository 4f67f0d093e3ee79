// The problems the library's tunable launch-shape families are timed on (the tuner and its
// database sit in the code-generation layer below, which cannot build arrays): z = 2.5 x - 0.5 y
// for the elementwise loop, dot(x, y) for reductions and cumsum(x) for scans, each under a
// LaunchShapeScope of the point being timed, on seeded random data. Registered with the tuner
// before the array layer first asks for a shape, and by tune_shape.
#include <memory>
#include <mutex>

#include "tuning.hpp"

#include "../tune/database.hpp"
#include "xgpu/array.hpp"
#include "xgpu/random.hpp"
#include "xgpu/reduction.hpp"
#include "xgpu/scan.hpp"
#include "xgpu/tune.hpp"

namespace xgpu::tune {
namespace {

// Prepares a run of `run` under the launch shape of the point being timed, for family `f`.
template <class Run> auto under_shape(KernelFamily f, Run run) {
    return [f, run](const Point& pt) {
        const LaunchShape s = to_shape(pt);
        return std::function<void()>([f, s, run] {
            LaunchShapeScope scope(f, s);
            run();
        });
    };
}

// The values of `z` on the host, as the tuner compares them.
template <class T> auto values_of(std::shared_ptr<Array<T>> z) {
    return [z] {
        const std::vector<T> h = z->get();
        return std::vector<double>(h.begin(), h.end());
    };
}

template <class T> Problem make_problem(const Context& ctx, KernelFamily f, std::uint64_t n) {
    Philox gen(ctx, 20261201);
    // Scans: positive values, whose running sums keep their relative precision in any order.
    const T lo = f == KernelFamily::scan ? T(0) : T(-1);
    auto x = std::make_shared<Array<T>>(gen.uniform<T>({n}, lo, T(1)));
    auto y = std::make_shared<Array<T>>(gen.uniform<T>({n}, lo, T(1)));
    Problem p;
    if (f == KernelFamily::scan) {
        auto z = std::make_shared<Array<T>>(empty<T>(ctx, {n}));
        p.prepare = under_shape(f, [=] { *z = cumsum(*x); });
        p.result = values_of(z);
        // Runs of up to 8192 sequential additions, in another order.
        p.tolerance = std::is_same_v<T, float> ? 1e-3 : 1e-9;
    } else if (f == KernelFamily::elementwise) {
        auto z = std::make_shared<Array<T>>(empty<T>(ctx, {n}));
        p.prepare = under_shape(f, [=] { *z = T(2.5) * *x - T(0.5) * *y; });
        p.result = values_of(z);
        p.tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-15; // a contracted multiply-add or not
    } else {
        auto r = std::make_shared<DeviceScalar<T>>();
        p.prepare = under_shape(KernelFamily::reduction, [=] { *r = dot(*x, *y); });
        p.result = [r] { return std::vector<double>{double(r->get())}; };
        // Another order of additions: about sqrt(n) roundings of sums of size sqrt(n).
        p.tolerance = std::is_same_v<T, float> ? 1e-3 : 1e-9;
    }
    return p;
}

Problem shape_problem(const Context& ctx, KernelFamily f, DType type, std::uint64_t n) {
    return type == DType::float32 ? make_problem<float>(ctx, f, n) : make_problem<double>(ctx, f, n);
}

} // namespace

ShapeTuning tune_shape(const Context& ctx, KernelFamily family, DType type, std::uint64_t n, const Options& options) {
    xgpu::detail::register_shape_problems();
    return detail::tune_library_shape(ctx, family, type, n, options);
}

} // namespace xgpu::tune

namespace xgpu::detail {

void register_shape_problems() {
    static std::once_flag once;
    std::call_once(once, [] { tune::detail::set_shape_problems(&tune::shape_problem); });
}

} // namespace xgpu::detail
