// The library's own tunable families: elementwise, reduction and scan launch shapes. Their spaces
// and the in-memory table that keeps the launch path free of file I/O and JSON: each (device,
// family, type, size bucket, mode) is resolved once per process. The problems they are timed on
// are the array layer's (core/src/array/tuning.cpp), registered from above.
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <atomic>

#include "../tune/database.hpp"
#include "launch.hpp"
#include "xgpu/error.hpp"

namespace xgpu::tune {
namespace {

// Bumped when the family's kernels change in a way that makes older timings meaningless.
int version(KernelFamily f) {
    // elementwise 2: the vector width joined its space.
    return f == KernelFamily::elementwise ? 2 : 1;
}

// XGPU_AUTOTUNE=on tunes in a launch only from this size on: below it launches are
// latency-bound and the shape hardly matters; and it tunes on at most `tune_max` elements.
constexpr std::uint64_t tune_min = std::uint64_t(1) << 16, tune_max = std::uint64_t(1) << 22;

// The size bucket of a call whose size the caller does not know (a ReductionKernel's shape is
// fixed when it is built): a large streaming call.
constexpr std::uint64_t unknown_n = std::uint64_t(1) << 22;

// Set while this thread tunes: the problems' own set-up launches take default shapes.
thread_local bool tuning = false;

Key key_for(KernelFamily f, DType type, std::uint64_t n) {
    return {name(f), version(f), xgpu::name(type), n};
}

// The problems the families' shapes are timed on: the array layer's own kernels on arrays, which
// that layer registers (core/src/array/tuning.cpp) before it first asks for a shape.
std::atomic<detail::ShapeProblems> registered{nullptr};

std::function<Problem()> problem_for(const Context& ctx, KernelFamily f, DType type, std::uint64_t n) {
    const detail::ShapeProblems make = registered.load();
    if (!make)
        throw InvalidArgument(std::string("xgpu: tune: no problems to time the ") + name(f) +
                              " family's shapes on (the array layer registers them)");
    return [make, ctx, f, type, n] { return make(ctx, f, type, n); };
}

Point start_point(const Context& ctx, KernelFamily f, DType type) {
    const DeviceInfo& d = ctx.device().info();
    const std::size_t size = info(type).size;
    return to_point(f, f == KernelFamily::elementwise ? codegen::default_elementwise_shape(d, size, 2 * size)
                                                      : default_launch_shape(ctx, f, type));
}

// The space, widened where needed so that it holds the start point.
Space space_with(const Context& ctx, KernelFamily f, DType type, const Point& start) {
    Space s = shape_space(ctx, f, type);
    for (auto& prm : s.params)
        if (std::find(prm.values.begin(), prm.values.end(), start.at(prm.name)) == prm.values.end()) {
            prm.values.push_back(start.at(prm.name));
            std::sort(prm.values.begin(), prm.values.end());
        }
    return s;
}

struct Memo {
    std::mutex mutex;
    std::map<std::tuple<const DeviceInfo*, int, int, int, int>, std::optional<LaunchShape>> shapes;
    std::vector<Device> devices; // keeps the DeviceInfo the keys point at alive
};
Memo& memo() {
    static Memo m;
    return m;
}

} // namespace

bool tunable(KernelFamily family, DType type) {
    return (family == KernelFamily::elementwise || family == KernelFamily::reduction || family == KernelFamily::scan) &&
           (type == DType::float32 || type == DType::float64);
}

Space shape_space(const Context& ctx, KernelFamily family, DType type) {
    const DeviceInfo& d = ctx.device().info();
    const std::size_t max_wg = d.max_work_group_size ? d.max_work_group_size : 256;
    Param groups{"group_size", {}};
    const std::int64_t smallest = family == KernelFamily::scan ? 2 : family == KernelFamily::reduction ? 32 : 64;
    for (std::int64_t g = smallest; g <= 1024; g *= 2)
        if (std::size_t(g) <= max_wg) groups.values.push_back(g);
    Space s;
    if (family == KernelFamily::scan) {
        // Tiles of work-items x runs: the direct form's long runs (CPUs) and the staged form's
        // short ones (GPUs), within the local memory the device allows.
        Param items{"items", {}};
        for (std::int64_t k = 1; k <= 8192; k *= 2)
            items.values.push_back(k);
        s.params = {groups, items, {"staged", {0, 1}}};
        s.valid = [d, type](const Point& p) { return codegen::shape_fits(d, KernelFamily::scan, to_shape(p), type); };
    } else if (family == KernelFamily::elementwise) {
        s.params = {groups, {"items", {1, 2, 4, 8}}, {"whole_groups", {0, 1}}, {"vector", {1, 2, 4}}};
        s.valid = [max_wg](const Point& p) {
            return std::size_t(p.at("group_size")) <= max_wg && (p.at("whole_groups") == 0 || p.at("items") == 1);
        };
    } else if (family == KernelFamily::reduction) {
        s.params = {groups, {"items", {1, 2, 4, 8, 16}}, {"blocked", {0, 1}}};
        s.valid = [max_wg](const Point& p) {
            const auto g = p.at("group_size");
            return std::size_t(g) <= max_wg && g > 0 && (g & (g - 1)) == 0;
        };
    } else {
        throw InvalidArgument(std::string("xgpu: tune: the ") + name(family) + " family's shapes are not tuned");
    }
    return s;
}

Point to_point(KernelFamily family, const LaunchShape& s) {
    Point p{{"group_size", s.group_size}, {"items", s.items}};
    if (family == KernelFamily::elementwise) {
        p["whole_groups"] = s.whole_groups;
        p["vector"] = s.vector;
    }
    if (family == KernelFamily::reduction) p["blocked"] = s.blocked;
    if (family == KernelFamily::scan) p["staged"] = s.staged;
    return p;
}

LaunchShape to_shape(const Point& p) {
    LaunchShape s;
    auto get = [&](const char* k, std::int64_t fallback) {
        const auto it = p.find(k);
        return it == p.end() ? fallback : it->second;
    };
    s.group_size = unsigned(get("group_size", 256));
    s.items = unsigned(get("items", 1));
    s.whole_groups = get("whole_groups", 0) != 0;
    s.blocked = get("blocked", 0) != 0;
    s.staged = get("staged", 0) != 0;
    s.vector = unsigned(get("vector", 1));
    return s;
}

void detail::set_shape_problems(ShapeProblems make) {
    registered.store(make);
}

ShapeTuning detail::tune_library_shape(const Context& ctx, KernelFamily family, DType type, std::uint64_t n,
                                       const Options& options) {
    if (!tunable(family, type))
        throw InvalidArgument(std::string("xgpu: tune: the ") + name(family) + " family is not tuned for " +
                              xgpu::name(type));
    const Point start = start_point(ctx, family, type);
    const Space space = space_with(ctx, family, type, start);
    ShapeTuning t;
    t.key = key_for(family, type, n);
    const bool was = tuning;
    tuning = true;
    try {
        t.result = tune(ctx, space, start, problem_for(ctx, family, type, n)(), options);
    } catch (...) {
        tuning = was;
        throw;
    }
    tuning = was;
    store(ctx, t.key, t.result);
    detail::forget_shapes(); // launches see the new entry
    // z = a*x + b*y: two inputs and the output; dot: two inputs; cumsum: the input and the output.
    t.bytes = double(n) * double(info(type).size) * (family == KernelFamily::elementwise ? 3 : 2);
    return t;
}

std::optional<LaunchShape> detail::database_shape(const Context& ctx, KernelFamily family, DType type,
                                                  std::uint64_t n) {
    if (tuning || !tunable(family, type)) return std::nullopt;
    const Mode m = mode();
    if (m == Mode::off) return std::nullopt;
    if (!n) n = unknown_n;
    const DeviceInfo* d = &ctx.device().info();
    const auto key = std::tuple{d, int(family), int(type), size_bucket(n), int(m)};
    Memo& mm = memo();
    {
        std::lock_guard lock(mm.mutex);
        if (auto it = mm.shapes.find(key); it != mm.shapes.end()) return it->second;
    }
    const Point start = start_point(ctx, family, type);
    const Space space = space_with(ctx, family, type, start);
    tuning = true;
    Selection sel;
    try {
        // Small calls are not worth tuning for: they take what the database has; so does a
        // program whose array layer has registered no problems yet.
        const bool can_tune = n >= tune_min && registered.load();
        const Mode effective = (m == Mode::on || m == Mode::force) && !can_tune ? Mode::cached : m;
        sel = select(effective, ctx, key_for(family, type, n), space, start,
                     can_tune ? problem_for(ctx, family, type, std::min(n, tune_max)) : std::function<Problem()>{},
                     Options{});
    } catch (...) {
        tuning = false;
        throw;
    }
    tuning = false;
    std::optional<LaunchShape> shape;
    if (sel.source != Source::start) shape = to_shape(sel.point);
    std::lock_guard lock(mm.mutex);
    mm.shapes[key] = shape;
    mm.devices.push_back(ctx.device());
    return shape;
}

void detail::forget_shapes() {
    Memo& mm = memo();
    std::lock_guard lock(mm.mutex);
    mm.shapes.clear();
    mm.devices.clear();
}

} // namespace xgpu::tune
