// Launch shapes: the default chooser of every generated kernel family (the choices that
// `array-bench --sweep` measures, in one place), the thread's overrides, and the checks a shape must pass
// before a kernel is generated for it.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "../env.hpp"
#include "../tune/database.hpp"
#include "launch.hpp"
#include "xgpu/error.hpp"

namespace xgpu {

const char* name(KernelFamily f) {
    switch (f) {
    case KernelFamily::elementwise: return "elementwise";
    case KernelFamily::reduction: return "reduction";
    case KernelFamily::stencil: return "stencil";
    case KernelFamily::merge: return "merge";
    case KernelFamily::sort: return "sort";
    default: return "scan";
    }
}

std::string LaunchShape::key() const {
    std::string k = "g";
    k += fmt::format_int(group_size).c_str();
    k += 'i';
    k += fmt::format_int(items).c_str();
    if (staged) k += 's';
    if (blocked) k += 'b';
    if (whole_groups) k += 'w';
    if (vector != 1) {
        k += 'v';
        k += fmt::format_int(vector).c_str();
    }
    return k;
}

namespace {

std::size_t floor_pow2(std::size_t v) {
    std::size_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

bool is_pow2(std::size_t v) {
    return v && !(v & (v - 1));
}

// Local memory a scan tile declares (kernels/scan.kernel): staged, the tile and its flags (one
// byte when unsegmented); always, the run totals and their flags.
std::size_t scan_local_bytes(std::size_t wg, std::size_t k, bool staged, DType type, bool segmented) {
    const std::size_t size = info(type).size, stage = wg * k + wg;
    return (staged ? stage * size + (segmented ? stage : 1) : 0) + wg * (size + 1);
}

// Elementwise. GPUs: guarded work-items, each computing `items` elements a work-group apart before
// storing any, so that every load of a work-item is in flight at once: 16 bytes loaded per
// work-item (counting each streamed input once, or the result when nothing is loaded) and at least
// two elements: in `array-bench --sweep` on GPUs that count was the fastest for each kind of
// statement (fewer items leave too few loads in flight; more gain nothing). CPUs: one element per
// work-item in whole guard-free work-groups (PoCL vectorises across work-items; a per-item guard
// costs much of the bandwidth).
LaunchShape elementwise(const DeviceInfo& d, std::size_t result_size, std::size_t loaded_bytes) {
    LaunchShape s;
    s.group_size = codegen::stream_group(d);
    if (d.type == DeviceType::cpu) {
        s.whole_groups = true;
        return s;
    }
    const std::size_t per_element = std::max<std::size_t>(loaded_bytes ? loaded_bytes : result_size, 1);
    s.items = unsigned(std::clamp<std::size_t>(floor_pow2(std::max<std::size_t>(16 / per_element, 1)), 2, 8));
    return s;
}

// Reductions. GPUs: a grid-stride loop (coalesced) with four accumulators in flight per
// work-item; CPUs: a contiguous block per work-item with eight accumulators (a single one makes
// the loop wait on each addition's latency).
LaunchShape reduction(const DeviceInfo& d) {
    LaunchShape s;
    s.group_size = unsigned(floor_pow2(codegen::stream_group(d)));
    s.blocked = d.type == DeviceType::cpu;
    s.items = s.blocked ? 8 : 4;
    return s;
}

// Stencils (kernels/stencil.kernel). GPUs: a work-item walks 4 points along the slowest dimension,
// every load issued before any is used (on both backends walks of 4 and 8 run alike, longer and
// shorter ones slower; work-groups of 128 to 512 alike). CPUs: one point per work-item (the
// work-item loop PoCL vectorises then has no inner loop; the neighbours are cache hits anyway).
LaunchShape stencil(const DeviceInfo& d) {
    LaunchShape s;
    s.group_size = codegen::stream_group(d);
    s.items = d.type == DeviceType::cpu ? 1 : 4;
    return s;
}

// SpMV along the merge path (kernels/spmv_merge.kernel). GPUs: tiles of 2048 steps, 16 a
// work-item in work-groups of 128 (Merrill and Garland use 7 a work-item), staged through local
// memory (core/src/sparse/merge.cpp unstages a tile too large for it): against 256 x 8, faster on
// the locality-ordered power-law matrix and about as fast on the uniform one (spmv-bench). CPUs:
// long shares, so that each work-item streams its entries and the binary searches (about
// log2(rows) scattered reads each) are few: on PoCL 512 steps come near CSR scalar on 2-D Poisson,
// where far fewer steps are much slower.
LaunchShape merge(const DeviceInfo& d) {
    LaunchShape s;
    const bool cpu = d.type == DeviceType::cpu;
    s.group_size = cpu ? codegen::stream_group(d) : std::min(128u, codegen::stream_group(d));
    s.items = cpu ? 512 : 16;
    s.staged = !cpu;
    return s;
}

// Scans. GPUs: staged through local memory, 256 work-items and a tile of about 16 KiB, so that
// several work-groups fit a multiprocessor. CPUs: direct, 2 work-items with runs of 8192 (long
// streams for the prefetchers; on PoCL the fastest of 1-64 work-items and runs of 256-16384).
// XGPU_SCAN_TILE=<wg>x<k>[s|d] overrides the default.
LaunchShape scan(const DeviceInfo& d, DType type, bool segmented) {
    const std::size_t size = info(type).size;
    bool staged = d.type != DeviceType::cpu;
    std::size_t wg = staged ? 256 : 2, k = staged ? std::clamp<std::size_t>(16384 / (wg * size), 1, 16) : 8192;
    if (const auto tile = detail::env::scan_tile()) {
        wg = tile->wg;
        k = tile->k;
        staged = tile->staged.value_or(staged);
    }
    if (d.max_work_group_size) wg = std::min(wg, floor_pow2(d.max_work_group_size));
    // Static local memory: within what the device allows a kernel to declare.
    const std::size_t limit = codegen::static_local_limit(d);
    auto bytes = [&] { return scan_local_bytes(wg, k, staged, type, segmented); };
    while (bytes() > limit && k > 1)
        k /= 2;
    while (bytes() > limit && wg > 2)
        wg /= 2; // a tile of one would never shrink the totals
    LaunchShape s;
    s.group_size = unsigned(wg);
    s.items = unsigned(k);
    s.staged = staged;
    return s;
}

// Radix sorts (kernels/sort.kernel). GPUs: tiles of 256 work-items, 16 keys each (8 for 8-byte
// keys), ranked by warp votes where the device has them. CPUs: a work-group of one walking a tile
// of 8192 keys in order (no ranking between work-items at all).
LaunchShape sort(const DeviceInfo& d, DType type) {
    LaunchShape s;
    if (d.type == DeviceType::cpu) {
        s.group_size = 1;
        s.items = 8192;
        return s;
    }
    s.group_size = codegen::stream_group(d);
    s.items = info(type).size > 4 ? 8 : 16;
    return s;
}

// The local memory of a sort's scatter: a count of each digit a warp (of 32, or the work-group),
// in 8-byte places, and the lanes' digits.
std::size_t sort_local_bytes(std::size_t wg) {
    const std::size_t warps = wg % 32 == 0 ? wg / 32 : 1;
    return std::max<std::size_t>(warps * 256 * 8 + 4 * wg, 256 * 8);
}

thread_local std::array<std::optional<LaunchShape>, 6> overrides;

[[noreturn]] void bad_shape(KernelFamily f, const LaunchShape& s, const std::string& why) {
    throw InvalidArgument(fmt::format("xgpu: launch shape {} for {} kernels: {}", s.key(), name(f), why));
}

void check(const DeviceInfo& d, KernelFamily f, const LaunchShape& s, DType type, bool segmented) {
    if (s.group_size == 0) bad_shape(f, s, "the work-group size is 0");
    if (d.max_work_group_size && s.group_size > d.max_work_group_size)
        bad_shape(f, s, fmt::format("the device allows work-groups of at most {}", d.max_work_group_size));
    if (s.items == 0) bad_shape(f, s, "no elements per work-item");
    // Reductions and scans combine their work-items in halving steps; the other families take any size.
    if ((f == KernelFamily::reduction || f == KernelFamily::scan) && !is_pow2(s.group_size))
        bad_shape(f, s, "the work-group size must be a power of two");
    if (f == KernelFamily::elementwise && (s.items > 16 || s.staged || s.blocked))
        bad_shape(f, s, "elementwise kernels take 1 to 16 items per work-item, neither staged nor blocked");
    if (f == KernelFamily::elementwise && s.whole_groups && s.items != 1)
        bad_shape(f, s, "whole guard-free work-groups take one item per work-item");
    if (f == KernelFamily::elementwise && s.vector != 1 && s.vector != 2 && s.vector != 4 && s.vector != 8)
        bad_shape(f, s, "the vector width of an elementwise kernel is 1, 2, 4 or 8");
    if (f != KernelFamily::elementwise && s.vector != 1)
        bad_shape(f, s, "only elementwise kernels take a vector width");
    if (f == KernelFamily::reduction && (s.items > 16 || s.staged || s.whole_groups))
        bad_shape(f, s, "reductions take 1 to 16 accumulators per work-item, neither staged nor whole_groups");
    if (f == KernelFamily::scan && (s.group_size < 2 || s.group_size > 1024 || s.blocked || s.whole_groups ||
                                    std::uint64_t(s.group_size) * s.items > (std::uint64_t(1) << 20)))
        bad_shape(f, s,
                  "scan tiles take 2 to 1024 work-items and 2^20 elements at most, neither blocked nor "
                  "whole_groups");
    if (f == KernelFamily::stencil && (s.items > 64 || s.blocked || s.whole_groups))
        bad_shape(f, s, "stencils walk 1 to 64 points per work-item, neither blocked nor whole_groups");
    if (f == KernelFamily::merge && (s.items > 4096 || s.blocked || s.whole_groups))
        bad_shape(f, s, "merge-path tiles take 1 to 4096 steps per work-item, neither blocked nor whole_groups");
    if (f == KernelFamily::merge && s.staged && s.items > 32)
        bad_shape(f, s, "staged merge-path tiles take at most 32 steps per work-item");
    if (f == KernelFamily::sort && (s.items > 16384 || s.staged || s.blocked || s.whole_groups ||
                                    std::uint64_t(s.group_size) * s.items > (std::uint64_t(1) << 20)))
        bad_shape(f, s,
                  "sort tiles take 1 to 16384 keys per work-item and 2^20 keys at most, neither staged, "
                  "blocked nor whole_groups");
    if (f == KernelFamily::sort && sort_local_bytes(s.group_size) > codegen::static_local_limit(d))
        bad_shape(f, s,
                  fmt::format("the tile needs {} bytes of local memory, the device allows {}",
                              sort_local_bytes(s.group_size), codegen::static_local_limit(d)));
    if (f == KernelFamily::scan) {
        const std::size_t limit = codegen::static_local_limit(d),
                          bytes = scan_local_bytes(s.group_size, s.items, s.staged, type, segmented);
        if (bytes > limit)
            bad_shape(f, s, fmt::format("the tile needs {} bytes of local memory, the device allows {}", bytes, limit));
    }
}

} // namespace

LaunchShape default_launch_shape(const Context& ctx, KernelFamily family, DType type, bool segmented) {
    const DeviceInfo& d = ctx.device().info();
    switch (family) {
    case KernelFamily::elementwise: return elementwise(d, info(type).size, info(type).size); // as a copy
    case KernelFamily::reduction: return reduction(d);
    case KernelFamily::stencil: return stencil(d);
    case KernelFamily::merge: return merge(d);
    case KernelFamily::sort: return sort(d, type);
    default: return scan(d, type, segmented);
    }
}

LaunchShape launch_shape(const Context& ctx, KernelFamily family, DType type, bool segmented) {
    return codegen::sized_launch_shape(ctx, family, type, 0, segmented);
}

LaunchShape codegen::sized_launch_shape(const Context& ctx, KernelFamily family, DType type, std::uint64_t n,
                                        bool segmented) {
    if (auto s = codegen::scoped_shape(ctx, family, type, segmented)) return *s;
    // XGPU_SCAN_TILE, an explicit choice, goes before the database; segmented scans keep a flag
    // per element (other local memory) and are not tuned.
    const bool untuned = family == KernelFamily::scan && (segmented || detail::env::scan_tile());
    if (!untuned)
        if (auto s = tune::detail::database_shape(ctx, family, type, n)) return *s;
    return default_launch_shape(ctx, family, type, segmented);
}

bool codegen::shape_fits(const DeviceInfo& d, KernelFamily family, const LaunchShape& shape, DType type,
                         bool segmented) {
    try {
        check(d, family, shape, type, segmented);
        return true;
    } catch (const InvalidArgument&) {
        return false;
    }
}

LaunchShape codegen::default_elementwise_shape(const DeviceInfo& d, std::size_t result_size, std::size_t loaded_bytes) {
    return elementwise(d, result_size, loaded_bytes);
}

std::size_t codegen::static_local_limit(const DeviceInfo& d) {
    return d.static_local_memory ? std::size_t(d.static_local_memory) : 32768;
}

unsigned codegen::stream_group(const DeviceInfo& d) {
    return d.max_work_group_size && d.max_work_group_size < 256 ? unsigned(d.max_work_group_size) : 256u;
}

namespace {
thread_local std::uint64_t grid_rows_override = 0;
}

codegen::GridRowsScope::GridRowsScope(std::uint64_t row_groups) : previous_(grid_rows_override) {
    grid_rows_override = row_groups;
}

codegen::GridRowsScope::~GridRowsScope() {
    grid_rows_override = previous_;
}

Grid codegen::groups_grid(std::uint64_t groups, std::size_t wg, std::uint64_t row_groups) {
    if (!row_groups) row_groups = grid_rows_override ? grid_rows_override : (std::uint64_t(1) << 30) / wg;
    if (groups <= row_groups) return Grid{Range(std::size_t(groups) * wg, 1), Range(wg, 1)};
    return Grid{Range(std::size_t(row_groups) * wg, std::size_t((groups + row_groups - 1) / row_groups)), Range(wg, 1)};
}

LaunchShape codegen::elementwise_shape(const Context& ctx, DType result, std::size_t loaded_bytes, std::uint64_t n) {
    if (auto s = scoped_shape(ctx, KernelFamily::elementwise, result)) return *s;
    if (auto s = tune::detail::database_shape(ctx, KernelFamily::elementwise, result, n)) return *s;
    return elementwise(ctx.device().info(), info(result).size, loaded_bytes);
}

std::optional<LaunchShape> codegen::scoped_shape(const Context& ctx, KernelFamily family, DType type, bool segmented) {
    const auto& o = overrides[std::size_t(family)];
    if (o) check(ctx.device().info(), family, *o, type, segmented);
    return o;
}

LaunchShapeScope::LaunchShapeScope(KernelFamily family, LaunchShape shape)
    : family_(family), previous_(overrides[std::size_t(family)]) {
    overrides[std::size_t(family)] = shape;
}

LaunchShapeScope::~LaunchShapeScope() {
    overrides[std::size_t(family_)] = previous_;
}

} // namespace xgpu
