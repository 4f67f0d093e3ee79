// Sorting (xgpu/sort.hpp): every sort is of C-contiguous rows along the last axis, the axis asked
// for moved there first. Rows that fit a work-group's local memory are sorted there in one launch
// (a bitonic network over (key bits, index), kernels/sort.kernel's xgpu_sort_local); longer rows
// by an LSD radix sort of 8 bits a pass, each pass a count of every tile's digits, an exclusive
// scan of the counts (the scan layer) and a stable scatter. Keys and values go back and forth
// between the input, two temporaries and the output.
#include "xgpu/sort.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "xgpu/algorithm.hpp"
#include "xgpu/scan.hpp"

namespace xgpu::detail {

namespace {

// Rows of up to this many keys are sorted inside a work-group, of the radix tile's work-items
// (and no more than a radix tile holds, so that a small tile sends short rows through the radix
// passes too).
constexpr std::uint64_t local_capacity = 2048;

enum class Values { none, carried, indices };

// The tiles a work-group of the one-sweep form's histogram counts.
constexpr std::uint32_t histogram_tiles = 16;

// The unsigned bits whose order is numpy's order of `t` (kernels/sort.kernel).
std::string to_bits(DType t) {
    switch (t) {
    case DType::int8: return "    return (uint32_t)(uint8_t)k ^ 0x80u;";
    case DType::int16: return "    return (uint32_t)(uint16_t)k ^ 0x8000u;";
    case DType::int32: return "    return (uint32_t)k ^ 0x80000000u;";
    case DType::int64: return "    return (uint64_t)k ^ ((uint64_t)1 << 63);";
    case DType::uint64: return "    return k;";
    case DType::float32:
        return "    const uint32_t u = XGPU_FLOAT_BITS(k), m = u & 0x7fffffffu;\n"
               "    if (m > 0x7f800000u) return 0xffffffffu; /* NaN */\n"
               "    if (m == 0u) return 0x80000000u;         /* -0.0 as 0.0 */\n"
               "    return (u >> 31) ? ~u : (u | 0x80000000u);";
    case DType::float64:
        return "    const uint64_t u = XGPU_DOUBLE_BITS(k), m = u & 0x7fffffffffffffffUL, s = (uint64_t)1 << 63;\n"
               "    if (m > 0x7ff0000000000000UL) return ~(uint64_t)0; /* NaN */\n"
               "    if (m == 0u) return s;                            /* -0.0 as 0.0 */\n"
               "    return (u >> 63) ? ~u : (u | s);";
    default: return "    return (uint32_t)k;"; // bool and the narrower unsigned types
    }
}

// The type that carries a value of `size` bytes through the sort.
const char* carry_type(std::size_t size) {
    switch (size) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint32_t";
    case 8: return "uint64_t";
    default: return "uint4";
    }
}

bool wide_bits(DType t) {
    return info(t).size == 8;
}

// What one sort kernel is: the keys, the values, the places' width and the tile or row length.
struct SortKernelSpec {
    DType key;
    Values values;
    std::size_t value_size; // carried values
    bool wide_places;       // uint64_t places (more than 2^32 - 1 keys)
    LaunchShape shape;
};

// The bytes a key or a value takes through a pass.
std::uint64_t value_bytes(const SortKernelSpec& s) {
    return s.values == Values::none ? 0 : s.values == Values::indices ? 8 : s.value_size;
}

// The 16-byte words of local memory in which the one-sweep pass stages a tile of keys, then of
// values (kernels/sort.kernel; 0 in the program where they do not fit).
std::uint64_t stage_words(const SortKernelSpec& s) {
    const std::uint64_t bytes = std::max<std::uint64_t>(info(s.key).size, value_bytes(s));
    return std::max<std::uint64_t>((std::uint64_t(s.shape.group_size) * s.shape.items * bytes + 15) / 16, 1);
}

// Whether the one-sweep pass's locals (kernels/sort.kernel) fit a tile of whole warps: the
// warps' digit counts, the tile's digit places, and its keys or values staged; in the device's
// static local memory and CUDA's 48 KiB.
bool sweep_fits(const DeviceInfo& d, const SortKernelSpec& s) {
    const std::uint64_t bytes = s.shape.group_size / 32 * 256 * 4 + 2 * 256 * 4 + 256 * 8 + 16 * stage_words(s) + 16;
    return s.shape.group_size % 32 == 0 && bytes <= std::min<std::uint64_t>(codegen::static_local_limit(d), 48 * 1024);
}

// Whether a radix sort takes the one-sweep passes: on devices with warp votes (CUDA, and NVIDIA's
// OpenCL from compute capability 7.0) where the locals fit, for rows of fewer than 2^30 keys and
// fewer than 2^32 - 1 tiles a launch.
bool one_sweep(const Context& ctx, const SortKernelSpec& s, std::uint64_t len, std::uint64_t groups) {
    const DeviceInfo& d = ctx.device().info();
    const bool votes = ctx.backend() == "cuda" || d.nv_compute_capability >= 70;
    return votes && sweep_fits(d, s) && len < (std::uint64_t(1) << 30) && groups < 0xffffffffu;
}

Kernel sort_kernel(const Context& ctx, const SortKernelSpec& s, const char* name) {
    const std::string key = fmt::format("sort|{}|{}|{}|{}|{}|{}", int(s.key), int(s.values), s.value_size,
                                        int(s.wide_places), s.shape.key(), name);
    return generated_kernel(
        ctx, key,
        [&] {
            const char* v = s.values == Values::indices ? "int64_t" : carry_type(s.value_size);
            const std::string defines = fmt::format(
                "#define XGPU_SORT_K {}\n#define XGPU_SORT_U {}\n#define XGPU_SORT_VALUES {}\n#define XGPU_SORT_V {}\n"
                "#define XGPU_SORT_OFF {}\n#define XGPU_SORT_WG {}\n#define XGPU_SORT_ITEMS {}\n"
                "#define XGPU_SORT_CAP {}\n#define XGPU_SORT_PASSES {}\n#define XGPU_SORT_STAGE {}",
                info(s.key).device_name, wide_bits(s.key) ? "uint64_t" : "uint32_t", int(s.values), v,
                s.wide_places ? "uint64_t" : "uint32_t", s.shape.group_size, s.shape.items, local_capacity,
                info(s.key).size, sweep_fits(ctx.device().info(), s) ? stage_words(s) : 0);
            return codegen::fill("sort.kernel", {{"defines", defines}, {"to_bits", to_bits(s.key)}});
        },
        name);
}

void launch(const Context& ctx, const Kernel& k, std::uint64_t groups, unsigned wg,
            const std::vector<KernelArg>& args) {
    k.launch_args(ctx.current_queue(), codegen::groups_grid(groups, wg, std::uint64_t(1) << 16), args);
}

// A buffer's arguments: the buffer and its offset in elements.
void push(std::vector<KernelArg>& args, const ArrayDesc& a) {
    args.push_back(make_arg(a.buffer));
    args.push_back(make_arg(std::int64_t(a.offset)));
}

void check_key_type(DType t, const char* what) {
    if (kind(t) == Kind::complex)
        throw InvalidArgument(
            fmt::format("xgpu: {}: {} keys cannot be sorted (only integer, bool and floating keys)", what, name(t)));
}

// `a` with `axis` moved last, as a view.
ArrayDesc axis_last(const ArrayDesc& a, std::size_t axis) {
    if (axis + 1 == a.shape.size()) return a;
    std::vector<std::size_t> perm;
    for (std::size_t d = 0; d < a.shape.size(); ++d)
        if (d != axis) perm.push_back(d);
    perm.push_back(axis);
    return transpose(a, perm);
}

// The inverse: a view of `moved` (axis last) in the original order of the dimensions.
ArrayDesc axis_back(const ArrayDesc& moved, std::size_t axis) {
    const std::size_t nd = moved.shape.size();
    if (axis + 1 == nd) return moved;
    std::vector<std::size_t> perm(nd);
    for (std::size_t d = 0, k = 0; d < nd; ++d)
        perm[d] = d == axis ? nd - 1 : k++;
    return transpose(moved, perm);
}

ArrayDesc contiguous(const ArrayDesc& a) {
    if (a.is_c_contiguous()) return a;
    ArrayDesc c = make_array(a.context, a.dtype, a.shape, Order::C);
    assign(c, a);
    return c;
}

ArrayDesc copy_of(const ArrayDesc& a) {
    ArrayDesc c = make_array(a.context, a.dtype, a.shape, Order::C);
    assign(c, a);
    return c;
}

// Sorts `rows` rows of `len` keys of keys_in into keys_out (both C-contiguous, distinct), with
// the values as `values` says: vals_in into vals_out, or each key's index in its row into vals_out.
void sort_rows(const ArrayDesc& keys_in, const ArrayDesc& keys_out, Values values, const ArrayDesc* vals_in,
               const ArrayDesc* vals_out, std::uint64_t rows, std::uint64_t len) {
    const Context& ctx = keys_in.context;
    const std::uint64_t n = rows * len;
    if (n == 0) return;
    const LaunchShape shape = codegen::sized_launch_shape(ctx, KernelFamily::sort, keys_in.dtype, n);
    const std::uint64_t tile = std::uint64_t(shape.group_size) * shape.items;
    SortKernelSpec spec{keys_in.dtype, values, vals_out ? info(vals_out->dtype).size : 0, n > 0xffffffffu, shape};
    const auto with_values = [&](std::vector<KernelArg>& args, const ArrayDesc* in, const ArrayDesc* out, Values v) {
        if (v == Values::carried) push(args, *in);
        if (v != Values::none) push(args, *out);
    };

    if (len <= std::min(local_capacity, tile)) {
        std::uint32_t p = 1;
        while (p < len)
            p *= 2;
        const std::uint64_t per_group = local_capacity / p, groups = (rows + per_group - 1) / per_group;
        std::vector<KernelArg> args;
        push(args, keys_in);
        push(args, keys_out);
        with_values(args, vals_in, vals_out, values);
        args.push_back(make_arg(rows));
        args.push_back(make_arg(len));
        args.push_back(make_arg(p));
        args.push_back(make_arg(groups));
        launch(ctx, sort_kernel(ctx, spec, "xgpu_sort_local"), groups, shape.group_size, args);
        return;
    }

    const unsigned passes = unsigned(info(keys_in.dtype).size);
    const std::uint64_t tiles = (len + tile - 1) / tile, groups = rows * tiles;
    const bool sweep = one_sweep(ctx, spec, len, groups);
    const DType place_type = spec.wide_places ? DType::uint64 : DType::uint32;
    ArrayDesc ktmp[2], vtmp[2];
    const DType vtype = values == Values::indices   ? DType::int64
                        : values == Values::carried ? vals_in->dtype
                                                    : DType::uint8;
    for (unsigned t = 0; t < std::min(passes - 1, 2u); ++t) {
        ktmp[t] = make_array(ctx, keys_in.dtype, {std::size_t(n)}, Order::C);
        if (values != Values::none) vtmp[t] = make_array(ctx, vtype, {std::size_t(n)}, Order::C);
    }
    // The one-sweep form: every pass's digit counts of each row at once, their first places in
    // the row, and then a launch a pass that publishes and looks back at its tiles' counts
    // (status, a word a tile and digit, and the groups' ticket after them).
    ArrayDesc counts, status;
    const std::uint32_t zero = 0;
    if (sweep) {
        counts = make_array(ctx, DType::uint32, {std::size_t(rows * passes * 256)}, Order::C);
        fill(counts, &zero);
        const std::uint32_t per = histogram_tiles;
        const std::uint64_t hist_groups = rows * ((tiles + per - 1) / per);
        std::vector<KernelArg> args;
        push(args, keys_in);
        args.push_back(make_arg(len));
        args.push_back(make_arg(tiles));
        args.push_back(make_arg(per));
        args.push_back(make_arg(hist_groups));
        args.push_back(make_arg(counts.buffer));
        launch(ctx, sort_kernel(ctx, spec, "xgpu_sort_histogram"), hist_groups, shape.group_size, args);
        const std::uint64_t scans = rows * passes;
        launch(ctx, sort_kernel(ctx, spec, "xgpu_sort_bases"), scans, shape.group_size,
               {make_arg(counts.buffer), make_arg(scans)});
        status = make_array(ctx, DType::uint32, {std::size_t(groups * 256 + 1)}, Order::C);
    } else {
        counts = make_array(ctx, place_type, {std::size_t(groups * 256)}, Order::C);
    }
    const std::optional<ScanOp> sum = sweep ? std::nullopt : std::optional<ScanOp>(sum_op(ctx, place_type));
    for (unsigned pass = 0; pass < passes; ++pass) {
        const bool last = pass + 1 == passes;
        const ArrayDesc& ksrc = pass == 0 ? keys_in : ktmp[(pass - 1) % 2];
        const ArrayDesc& kdst = last ? keys_out : ktmp[pass % 2];
        const ArrayDesc* vsrc = pass == 0 ? vals_in : &vtmp[(pass - 1) % 2];
        const ArrayDesc* vdst = last ? vals_out : &vtmp[pass % 2];
        // After the first pass, indices are values like any other.
        SortKernelSpec s = spec;
        if (pass > 0 && values == Values::indices) {
            s.values = Values::carried;
            s.value_size = 8;
        }
        const std::uint32_t shift = 8 * pass;
        std::vector<KernelArg> args;
        push(args, ksrc);
        push(args, kdst);
        with_values(args, vsrc, vdst, s.values);
        for (const std::uint64_t v : {len, tiles, std::uint64_t(groups)})
            args.push_back(make_arg(v));
        args.push_back(make_arg(shift));
        if (sweep) {
            fill(status, &zero);
            args.push_back(make_arg(counts.buffer));
            args.push_back(make_arg(status.buffer));
            launch(ctx, sort_kernel(ctx, s, "xgpu_sort_onesweep"), groups, shape.group_size, args);
            continue;
        }
        // Both kernels end with the rows' geometry, the digit's shift and the counts.
        args.push_back(make_arg(counts.buffer));
        std::vector<KernelArg> count_args;
        push(count_args, ksrc);
        count_args.insert(count_args.end(), args.end() - 5, args.end());
        launch(ctx, sort_kernel(ctx, s, "xgpu_sort_count"), groups, shape.group_size, count_args);
        scan(*sum, *array_node(counts), counts, nullptr, false);
        launch(ctx, sort_kernel(ctx, s, "xgpu_sort_scatter"), groups, shape.group_size, args);
    }
}

// An elementwise launch of the sort program's kernels that take any work-group size.
void launch_items(const Context& ctx, const Kernel& k, std::uint64_t items, const std::vector<KernelArg>& args) {
    const unsigned wg = codegen::stream_group(ctx.device().info());
    launch(ctx, k, (items + wg - 1) / wg, wg, args);
}

SortKernelSpec keys_only(const Context& ctx, DType key, std::uint64_t n) {
    return {key, Values::none, 0, n > 0xffffffffu, codegen::sized_launch_shape(ctx, KernelFamily::sort, key, n)};
}

std::int64_t read_last(const ArrayDesc& a) {
    std::int64_t v = 0;
    to_host(view(a, std::vector<Index>{std::int64_t(a.size()) - 1}), &v);
    return v;
}

// Whether sort_rows may read `in` while writing `out`: only through the radix passes' temporaries.
bool must_copy(const ArrayDesc& in, const ArrayDesc& out, std::uint64_t len) {
    const Context& ctx = in.context;
    const LaunchShape shape = codegen::sized_launch_shape(ctx, KernelFamily::sort, in.dtype, in.size());
    const bool local = len <= std::min(local_capacity, std::uint64_t(shape.group_size) * shape.items);
    return may_share_memory(in, out) && (local || info(in.dtype).size == 1);
}

struct Moved {
    std::size_t axis;
    ArrayDesc keys; // C-contiguous, the axis last
    std::uint64_t rows, len;
};

Moved prepare(const ArrayDesc& a, std::int64_t axis, const char* what) {
    if (!a.buffer) throw InvalidArgument(fmt::format("xgpu: {} of an empty Array", what));
    check_key_type(a.dtype, what);
    if (a.shape.empty())
        throw ShapeError(fmt::format("xgpu: {}: axis {} is out of bounds for an array of dimension 0", what, axis));
    require_fp64(a.context, a.dtype);
    Moved m;
    m.axis = normalise_axis(axis, a.shape.size(), what);
    m.keys = contiguous(axis_last(a, m.axis));
    m.len = a.shape[m.axis];
    m.rows = m.len ? a.size() / m.len : 0;
    return m;
}

// A C-contiguous array of `a`'s shape holding `moved` (the axis last).
ArrayDesc restore(const ArrayDesc& moved, std::size_t axis) {
    if (axis + 1 == moved.shape.size()) return moved;
    const ArrayDesc back = axis_back(moved, axis);
    ArrayDesc out = make_array(moved.context, moved.dtype, back.shape, Order::C);
    assign(out, back);
    return out;
}

ArrayDesc as_type(const ArrayDesc& a, DType t) {
    if (a.dtype == t) return contiguous(a);
    ArrayDesc c = make_array(a.context, t, a.shape, Order::C);
    assign(c, a);
    return c;
}

} // namespace

ArrayDesc sort(const ArrayDesc& a, std::int64_t axis) {
    const Moved m = prepare(a, axis, "sort");
    const ArrayDesc out = make_array(a.context, a.dtype, m.keys.shape, Order::C);
    sort_rows(m.keys, out, Values::none, nullptr, nullptr, m.rows, m.len);
    return restore(out, m.axis);
}

ArrayDesc argsort(const ArrayDesc& a, std::int64_t axis) {
    const Moved m = prepare(a, axis, "argsort");
    const ArrayDesc keys = make_array(a.context, a.dtype, m.keys.shape, Order::C),
                    out = make_array(a.context, DType::int64, m.keys.shape, Order::C);
    sort_rows(m.keys, keys, Values::indices, nullptr, &out, m.rows, m.len);
    return restore(out, m.axis);
}

void sort_inplace(const ArrayDesc& a, std::int64_t axis) {
    const ArrayDesc sorted = sort(a, axis);
    assign(a, sorted);
}

void sort_by_key(const ArrayDesc& keys, const ArrayDesc& values) {
    if (!keys.buffer || !values.buffer) throw InvalidArgument("xgpu: sort_by_key with an empty Array");
    check_key_type(keys.dtype, "sort_by_key");
    if (!(values.context == keys.context))
        throw InvalidArgument("xgpu: sort_by_key: the keys and the values belong to different contexts");
    if (keys.shape.size() != 1 || values.shape.size() != 1 || keys.size() != values.size())
        throw ShapeError(fmt::format("xgpu: sort_by_key: the keys (shape {}) and the values (shape {}) must be 1-D "
                                     "arrays of one size",
                                     to_string(keys.shape), to_string(values.shape)));
    if (may_share_memory(keys, values))
        throw InvalidArgument("xgpu: sort_by_key: the keys and the values share memory");
    require_fp64(keys.context, keys.dtype);
    require_fp64(keys.context, values.dtype);
    const std::uint64_t n = keys.size();
    if (n < 2) return;
    const ArrayDesc k = contiguous(keys), v = contiguous(values);
    const bool copy = must_copy(k, k, n);
    const ArrayDesc kin = copy ? copy_of(k) : k, vin = copy ? copy_of(v) : v;
    sort_rows(kin, k, Values::carried, &vin, &v, 1, n);
    if (k.buffer != keys.buffer || k.offset != keys.offset) assign(keys, k);
    if (v.buffer != values.buffer || v.offset != values.offset) assign(values, v);
}

ArrayDesc searchsorted(const ArrayDesc& a, const ArrayDesc& v, Side side) {
    if (!a.buffer || !v.buffer) throw InvalidArgument("xgpu: searchsorted with an empty Array");
    if (!(a.context == v.context))
        throw InvalidArgument("xgpu: searchsorted: the sorted array and the keys belong to different contexts");
    if (a.shape.size() != 1)
        throw ShapeError(
            fmt::format("xgpu: searchsorted: the sorted array must be 1-D, not of shape {}", to_string(a.shape)));
    const DType t = promote(a.dtype, v.dtype);
    check_key_type(t, "searchsorted");
    require_fp64(a.context, t);
    const Context& ctx = a.context;
    ArrayDesc out = make_array(ctx, DType::int64, v.shape, Order::C);
    if (v.size() == 0) return out;
    const ArrayDesc sa = as_type(a, t), sv = as_type(v, t);
    std::vector<KernelArg> args;
    push(args, sa);
    args.push_back(make_arg(std::uint64_t(sa.size())));
    push(args, sv);
    args.push_back(make_arg(std::uint64_t(sv.size())));
    args.push_back(make_arg(std::uint32_t(side == Side::right)));
    push(args, out);
    launch_items(ctx, sort_kernel(ctx, keys_only(ctx, t, sa.size()), "xgpu_searchsorted"), sv.size(), args);
    return out;
}

UniqueDesc unique(const ArrayDesc& a, bool want_index, bool want_inverse, bool want_counts) {
    if (!a.buffer) throw InvalidArgument("xgpu: unique of an empty Array");
    check_key_type(a.dtype, "unique");
    require_fp64(a.context, a.dtype);
    const Context& ctx = a.context;
    const std::uint64_t n = a.size();
    const ArrayDesc flat = contiguous(reshape(contiguous(a), {std::size_t(n)}));
    UniqueDesc u;
    const auto none = [&](DType t) { return make_array(ctx, t, {0}, Order::C); };
    if (n == 0) {
        u.values = none(a.dtype);
        if (want_index) u.index = none(DType::int64);
        if (want_inverse) u.inverse = none(DType::int64);
        if (want_counts) u.counts = none(DType::int64);
        return u;
    }
    // The sorted keys and, for the indices, the stable permutation that sorts them.
    const ArrayDesc sorted = make_array(ctx, a.dtype, {std::size_t(n)}, Order::C);
    ArrayDesc perm = sorted;
    if (want_index || want_inverse) {
        perm = make_array(ctx, DType::int64, {std::size_t(n)}, Order::C);
        sort_rows(flat, sorted, Values::indices, nullptr, &perm, 1, n);
    } else {
        sort_rows(flat, sorted, Values::none, nullptr, nullptr, 1, n);
    }
    const SortKernelSpec spec = keys_only(ctx, a.dtype, n);
    const ArrayDesc flag = make_array(ctx, DType::int64, {std::size_t(n)}, Order::C),
                    at = make_array(ctx, DType::int64, {std::size_t(n)}, Order::C);
    std::vector<KernelArg> args;
    args.push_back(make_arg(sorted.buffer)); // fresh arrays: no offsets
    args.push_back(make_arg(n));
    args.push_back(make_arg(flag.buffer));
    launch_items(ctx, sort_kernel(ctx, spec, "xgpu_unique_flags"), n, args);
    scan(sum_op(ctx, DType::int64), *array_node(flag), at, nullptr, true);
    const std::int64_t runs = read_last(at);
    u.values = make_array(ctx, a.dtype, {std::size_t(runs)}, Order::C);
    const ArrayDesc start = make_array(ctx, DType::int64, {std::size_t(runs)}, Order::C);
    if (want_index) u.index = make_array(ctx, DType::int64, {std::size_t(runs)}, Order::C);
    if (want_inverse) u.inverse = make_array(ctx, DType::int64, {std::size_t(n)}, Order::C);
    args.clear();
    args.push_back(make_arg(sorted.buffer));
    args.push_back(make_arg(n));
    for (const ArrayDesc* d : std::initializer_list<const ArrayDesc*>{
             &flag, &at, &perm, &u.values, &start, want_index ? &u.index : &start, want_inverse ? &u.inverse : &start})
        args.push_back(make_arg(d->buffer));
    args.push_back(make_arg(std::uint32_t(want_index)));
    args.push_back(make_arg(std::uint32_t(want_inverse)));
    launch_items(ctx, sort_kernel(ctx, spec, "xgpu_unique_runs"), n, args);
    if (want_counts) {
        u.counts = make_array(ctx, DType::int64, {std::size_t(runs)}, Order::C);
        args.clear();
        args.push_back(make_arg(start.buffer));
        args.push_back(make_arg(std::uint64_t(runs)));
        args.push_back(make_arg(n));
        args.push_back(make_arg(u.counts.buffer));
        launch_items(ctx, sort_kernel(ctx, spec, "xgpu_unique_counts"), std::uint64_t(runs), args);
    }
    return u;
}

} // namespace xgpu::detail
