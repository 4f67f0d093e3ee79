// Scans: reduce-then-scan over tiles of WG x K elements, work-item l of a tile owning the run of
// K elements from l * K. One generated kernel per (operator, type, segmented, what it reads and
// writes) runs in two modes. The first pass (tiles 0 .. G-2) totals each tile: each work-item
// totals its run, the work-group scans the run totals (kernels/scan.h). The G-1 tile totals are
// then scanned in place, inclusively, by the same machinery (recursively while they fill more
// than one tile). The final pass (all G tiles) does the same, then finishes each run from the
// carry (the scanned totals of the tiles before) and the earlier runs, and runs the output
// statement on every element. Input is read twice, output written once; an input that fits one
// tile needs the final pass alone.
//
// Kernel shape (`array-bench --sweep`: CPUs and GPUs want different shapes; no grid-stride loops):
// GPUs stage the tile through local memory, consecutive work-items on consecutive elements
// (coalesced); CPUs read each run straight from memory as long streams (codegen/launch.cpp chooses the tile;
// direct_code). The kernel's fixed text is kernels/scan.kernel.
#include "xgpu/scan.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "generator.hpp"
#include "tuning.hpp"

namespace xgpu::detail {

namespace {

// A scan tile (kernels/scan.kernel) is a launch shape of the scan family: group_size work-items
// of `items` elements each, staged through local memory (GPUs) or read straight from global
// memory as runs (CPUs); the default chooser is in codegen/launch.cpp.
using TileShape = LaunchShape;

// What one scan reads and writes, as kernel code (parameters and statements in terms of the
// element index `i`, a uint64_t).
struct ScanText {
    std::string params;     // parameter declarations, comma separated
    std::string input_body; // statements that compute the input at i
    std::string input;      // the input at i, of the scan's type
    std::string start;      // segmented: nonzero where a segment starts at i
    std::string output;     // statement run once per element, with `item` (inclusive value),
                            // `prev_item` (exclusive value) and `xgpu_n` (element count)
};
// A scan's key (which identifies its text), and its text, made only when the kernel is compiled.
struct ScanCode {
    std::string key;
    std::function<ScanText()> text;
};

// Direct tiles walk each run as this many sub-runs side by side (see tile_code).
unsigned subruns(unsigned k) {
    return k % 4 == 0 ? 4 : k % 2 == 0 ? 2 : 1;
}

// `code` (lines of statements) indented by `by`, to sit in the kernel's loop.
std::string indent(const std::string& code, const std::string& by) {
    std::string out;
    std::size_t start = 0;
    while (start < code.size()) {
        std::size_t end = code.find('\n', start);
        if (end == std::string::npos) end = code.size() - 1;
        out += by + code.substr(start, end + 1 - start);
        start = end + 1;
    }
    return out;
}

// The code of a direct tile (CPUs, where PoCL runs a work-group's work-items as a loop around each
// stretch between barriers): each work-item reads its run straight from global memory, once to
// total it and once to finish it. kernels/scan.kernel holds the loops around these pieces (and
// the whole of a staged tile).
struct DirectCode {
    std::string declarations, reduce, total, prefixes, finish;
};

DirectCode direct_code(unsigned k, bool segmented, const ScanText& c) {
    const std::string body = indent(c.input_body, "        "); // map code comes indented by 4
    const std::string start = fmt::format("(uint8_t)(({}) != 0)", c.start);
    DirectCode t;
    // Work-item l's run, K elements from xgpu_r, is `subruns` sub-runs of S = K / subruns elements,
    // walked side by side: independent chains of the operator, so that a CPU overlaps their
    // latencies (a float add takes 4 cycles). The code is written out per sub-run b (xgpu_q<b>: its
    // running value, xgpu_f<b>: whether it holds a segment start), so that the chains stay in
    // registers. The loops over j run to a bound that differs between work-items: over a uniform
    // bound PoCL puts the work-item loop innermost, with the chains in memory.
    // Element j of sub-run b: index i, value xgpu_v, flag xgpu_s; `cnt` bounds the tile.
    auto element = [&](unsigned b, const char* cnt, const std::string& then) {
        return fmt::format("        {{\n"
                           "            const uint32_t xgpu_k = xgpu_r + {b}u * XGPU_SCAN_S + xgpu_j;\n"
                           "            if (xgpu_k < {cnt}) {{\n"
                           "                const uint64_t i = xgpu_t0 + xgpu_k;\n"
                           "                XGPU_SCAN_T xgpu_v;\n"
                           "{decl_s}"
                           "                {{\n"
                           "{body}"
                           "                    xgpu_v = {input};\n"
                           "{set_s}"
                           "                }}\n"
                           "{then}"
                           "            }}\n"
                           "        }}\n",
                           fmt::arg("b", b), fmt::arg("cnt", cnt),
                           fmt::arg("decl_s", segmented ? "                uint8_t xgpu_s;\n" : ""),
                           fmt::arg("body", indent(body, "        ")), fmt::arg("input", c.input),
                           fmt::arg("set_s", segmented ? fmt::format("                    xgpu_s = {};\n", start) : ""),
                           fmt::arg("then", then));
    };
    const char* unless_start = segmented ? " && !xgpu_s" : "";
    for (unsigned b = 0; b < subruns(k); ++b) {
        t.declarations += fmt::format("    XGPU_SCAN_T xgpu_q{0} = xgpu_scan_neutral();\n{1}", b,
                                      segmented ? fmt::format("    uint8_t xgpu_f{} = 0;\n", b) : "");
        t.reduce += element(
            b, "xgpu_cnt",
            fmt::format("                xgpu_q{0} = (xgpu_j > 0{1}) ? xgpu_scan_op(xgpu_q{0}, xgpu_v) : "
                        "xgpu_v;\n{2}",
                        b, unless_start, segmented ? fmt::format("                xgpu_f{} |= xgpu_s;\n", b) : ""));
        // The run's total: its sub-runs that hold elements, in order.
        if (b > 0)
            t.total += fmt::format("        if (xgpu_r + {0}u * XGPU_SCAN_S < xgpu_cnt) {{\n"
                                   "            xgpu_run = {1}xgpu_scan_op(xgpu_run, xgpu_q{0});\n{2}"
                                   "        }}\n",
                                   b, segmented ? fmt::format("xgpu_f{} ? xgpu_q{} : ", b, b) : "",
                                   segmented ? fmt::format("            xgpu_runf |= xgpu_f{};\n", b) : "");
        // What comes before sub-run b, which becomes its running value (xgpu_h<b>: there is any).
        t.prefixes +=
            fmt::format("    const XGPU_SCAN_T xgpu_total{0} = xgpu_q{0};\n"
                        "    xgpu_q{0} = xgpu_acc;\n"
                        "    const int xgpu_h{0} = xgpu_have;\n"
                        "    if (xgpu_r + {0}u * XGPU_SCAN_S < xgpu_cnt) {{\n"
                        "        xgpu_acc = (xgpu_have{1}) ? xgpu_scan_op(xgpu_acc, xgpu_total{0}) : xgpu_total{0};\n"
                        "        xgpu_have = 1;\n"
                        "    }}\n",
                        b, segmented ? fmt::format(" && !xgpu_f{}", b) : "");
        t.finish += element(b, "xgpu_fcnt",
                            fmt::format("                const int xgpu_join = (xgpu_j > 0 || xgpu_h{0}){1};\n"
                                        "                const XGPU_SCAN_T prev_item = xgpu_join ? xgpu_q{0} : "
                                        "xgpu_scan_neutral();\n"
                                        "                const XGPU_SCAN_T item = xgpu_join ? xgpu_scan_op(xgpu_q{0}, "
                                        "xgpu_v) : xgpu_v;\n"
                                        "                xgpu_q{0} = item;\n"
                                        "                (void)prev_item;\n"
                                        "                {2}\n",
                                        b, unless_start, c.output));
    }
    return t;
}

std::string kernel_source(const ScanOp& op, bool segmented, TileShape ts, const ScanText& c) {
    const DirectCode t = ts.staged ? DirectCode{} : direct_code(ts.items, segmented, c);
    const std::string wg = std::to_string(ts.group_size), k = std::to_string(ts.items),
                      s = std::to_string(ts.items / subruns(ts.items));
    return codegen::fill("scan.kernel", {{"type", info(op.type).device_name},
                                         {"wg", wg},
                                         {"k", k},
                                         {"s", s},
                                         {"segmented", segmented ? "1" : "0"},
                                         {"staged", ts.staged ? "1" : "0"},
                                         {"array_h", codegen::kernel_file("array.h")},
                                         {"preamble", op.preamble},
                                         {"op", op.op},
                                         {"neutral", op.neutral},
                                         {"scan_h", codegen::kernel_file("scan.h")},
                                         {"params", c.params},
                                         {"input_body", indent(c.input_body, "        ")},
                                         {"input", c.input},
                                         {"start", segmented ? c.start : "0"},
                                         {"output", c.output},
                                         {"direct_declarations", t.declarations},
                                         {"direct_reduce", t.reduce},
                                         {"direct_total", t.total},
                                         {"direct_prefixes", t.prefixes},
                                         {"direct_finish", t.finish}});
}

// The scanned tile totals: read, and written back in place (inclusive).
ScanCode totals_code() {
    return {"totals", [] {
                return ScanText{"XGPU_GLOBAL XGPU_SCAN_T* xgpu_tv, XGPU_GLOBAL const uint8_t* xgpu_tf", "",
                                "xgpu_tv[i]", "xgpu_tf[i]", "xgpu_tv[i] = item;"};
            }};
}

void launch(const Context& ctx, const Kernel& k, std::vector<KernelArg> args, TileShape ts, std::uint64_t n,
            std::uint64_t groups, const Buffer& totals, const Buffer& tflags, std::uint32_t final_pass) {
    args.push_back(make_arg(n));
    args.push_back(make_arg(totals));
    args.push_back(make_arg(tflags));
    args.push_back(make_arg(final_pass));
    // Past 2^16 work-groups, rows of 2^16 (CUDA's grid is 2^31 x 65535; some OpenCL drivers
    // mishandle 1-D ranges past 2^31 work-items); the last row's extra groups find no elements.
    const std::uint64_t row = std::uint64_t(1) << 16;
    k.launch_args(ctx.current_queue(), codegen::groups_grid(groups, ts.group_size, row), args);
}

// Scans n elements as `code` says, `args` being the values of code.params.
void run(const ScanOp& op, bool segmented, const ScanCode& code, const std::vector<KernelArg>& args, std::uint64_t n) {
    if (n == 0) return;
    const Context& ctx = op.ctx;
    register_shape_problems();
    const TileShape ts = codegen::sized_launch_shape(ctx, KernelFamily::scan, op.type, n, segmented);
    const std::uint64_t tile = std::uint64_t(ts.group_size) * ts.items, groups = (n + tile - 1) / tile;
    const std::string key = fmt::format("scan|{}|{}|{}|{}|{}:{}|{}:{}|{}", int(op.type), int(segmented), ts.key(),
                                        code.key, op.op.size(), op.op, op.neutral.size(), op.neutral, op.preamble);
    const Kernel k = generated_kernel(
        ctx, key, [&] { return kernel_source(op, segmented, ts, code.text()); }, "xgpu_scan");
    const std::size_t size = info(op.type).size;
    if (groups == 1) {
        const Buffer unused = ctx.pool().allocate(size);
        launch(ctx, k, args, ts, n, 1, unused, unused, 1);
        return;
    }
    const std::uint64_t m = groups - 1;
    // Without segments the flags are never touched: any buffer will do.
    const Buffer totals = ctx.pool().allocate(m * size), tflags = segmented ? ctx.pool().allocate(m) : totals;
    launch(ctx, k, args, ts, m * tile, m, totals, tflags, 0);
    run(op, segmented, totals_code(), {make_arg(totals), make_arg(tflags)}, m);
    launch(ctx, k, args, ts, n, groups, totals, tflags, 1);
}

// Whether `a`, read while a kernel writes `out` (C-contiguous), may see elements already written:
// it shares memory with `out` and does not read element i exactly where the kernel writes it.
bool unsafe_overlap(const ArrayDesc& a, const Shape& shape, const ArrayDesc& out) {
    if (a.buffer == out.buffer && a.shape == shape && a.is_c_contiguous() && a.offset == out.offset &&
        a.dtype == out.dtype)
        return false;
    return may_share_memory(a, out);
}

bool any_unsafe_overlap(const Node& n, const Shape& shape, const ArrayDesc& out) {
    if (n.op == Node::Op::array && unsafe_overlap(n.array, shape, out)) return true;
    for (const auto* c : {n.a.get(), n.b.get(), n.c.get()})
        if (c && any_unsafe_overlap(*c, shape, out)) return true;
    return false;
}

// `a` as a C-contiguous array that the kernel writing `out` may read safely.
ArrayDesc safe_input(const ArrayDesc& a, const ArrayDesc& out) {
    if (a.is_c_contiguous() && !unsafe_overlap(a, a.shape, out)) return a;
    ArrayDesc c = make_array(a.context, a.dtype, a.shape, Order::C);
    assign(c, a);
    return c;
}

void check_context(const Context& ctx, const Context& other, const char* what) {
    if (!(other == ctx)) throw InvalidArgument(fmt::format("xgpu: {}: the arrays belong to different contexts", what));
}

} // namespace

ScanOp sum_op(const Context& ctx, DType type) {
    if (type == DType::complex64) return {ctx, type, "xgpu_cfloat_add(a, b)", "xgpu_cfloat_make(0.0f, 0.0f)", ""};
    if (type == DType::complex128) return {ctx, type, "xgpu_cdouble_add(a, b)", "xgpu_cdouble_make(0.0, 0.0)", ""};
    return {ctx, type, "a + b", "0", ""};
}

ScanOp prod_op(const Context& ctx, DType type) {
    if (type == DType::complex64) return {ctx, type, "xgpu_cfloat_mul(a, b)", "xgpu_cfloat_make(1.0f, 0.0f)", ""};
    if (type == DType::complex128) return {ctx, type, "xgpu_cdouble_mul(a, b)", "xgpu_cdouble_make(1.0, 0.0)", ""};
    return {ctx, type, "a * b", "1", ""};
}

void scan_axis(const ScanOp& op, const Node& in, const ArrayDesc& out, std::size_t axis, bool inclusive) {
    const Context& ctx = op.ctx;
    if (!out.buffer) throw InvalidArgument("xgpu: scan into an empty Array");
    check_context(ctx, node_context(in), "scan");
    check_context(ctx, out.context, "scan");
    const Shape shape = result_shape(in);
    if (axis >= shape.size())
        throw ShapeError(
            fmt::format("xgpu: scan: axis {} is out of bounds for an array of dimension {}", axis, shape.size()));
    if (out.shape != shape)
        throw ShapeError(
            fmt::format("xgpu: scan: the input has shape {}, the output {}", to_string(shape), to_string(out.shape)));
    if (out.dtype != op.type)
        throw InvalidArgument(
            fmt::format("xgpu: scan: a {} scan cannot write a {} array", name(op.type), name(out.dtype)));
    require_fp64(ctx, op.type);
    const std::uint64_t n = shape_size(shape), len = shape[axis];
    if (n == 0) return;
    // The input with the axis last, C-contiguous, in the scan's type; rows of len scanned apart.
    ArrayDesc src;
    if (in.op == Node::Op::array && in.type == op.type) {
        src = in.array;
    } else {
        src = make_array(ctx, op.type, shape, Order::C);
        evaluate(in, src);
    }
    std::vector<std::size_t> perm;
    for (std::size_t d = 0; d < shape.size(); ++d)
        if (d != axis) perm.push_back(d);
    perm.push_back(axis);
    const ArrayDesc moved = transpose(src, perm);
    ArrayDesc rows = make_array(ctx, op.type, moved.shape, Order::C);
    assign(rows, moved);
    const ArrayDesc scanned = make_array(ctx, op.type, moved.shape, Order::C);
    ScanCode c;
    c.key = fmt::format("scan_rows|{}", inclusive ? "inclusive" : "exclusive");
    c.text = [&] {
        const char* T = codegen::device_type(op.type);
        ScanText t;
        t.params = fmt::format("XGPU_GLOBAL const {0}* xgpu_in, XGPU_GLOBAL {0}* xgpu_out, const uint64_t xgpu_len", T);
        t.input = "xgpu_in[i]";
        t.start = "(i % xgpu_len) == 0";
        t.output = fmt::format("xgpu_out[i] = {};", inclusive ? "item" : "prev_item");
        return t;
    };
    run(op, true, c, {make_arg(rows.buffer), make_arg(scanned.buffer), make_arg(len)}, n);
    std::vector<std::size_t> back(shape.size());
    for (std::size_t d = 0; d < perm.size(); ++d)
        back[perm[d]] = d;
    assign(out, transpose(scanned, back));
}

void scan(const ScanOp& op, const Node& in, const ArrayDesc& out, const ArrayDesc* flags, bool inclusive) {
    // Everything is checked before anything is enqueued.
    const Context& ctx = op.ctx;
    if (!ctx.impl()) throw InvalidArgument("xgpu: scan on an empty Context");
    if (!out.buffer) throw InvalidArgument("xgpu: scan into an empty Array");
    if (flags && !flags->buffer) throw InvalidArgument("xgpu: scan: the segment flags are an empty Array");
    check_context(ctx, node_context(in), "scan");
    check_context(ctx, out.context, "scan");
    if (flags) check_context(ctx, flags->context, "scan");
    const Shape shape = result_shape(in);
    const std::size_t n = shape_size(shape);
    if (out.size() != n)
        throw ShapeError(fmt::format("xgpu: scan: the input has shape {} ({} elements), the output {} ({} elements)",
                                     to_string(shape), n, to_string(out.shape), out.size()));
    if (flags && flags->size() != n)
        throw ShapeError(
            fmt::format("xgpu: scan: the input has shape {} ({} elements), the segment flags {} ({} elements)",
                        to_string(shape), n, to_string(flags->shape), flags->size()));
    if (flags && !(flags->dtype == DType::bool_ || is_integer(flags->dtype)))
        throw InvalidArgument(
            fmt::format("xgpu: scan: segment flags must be bool or integers, not {}", name(flags->dtype)));
    if (out.dtype != op.type)
        throw InvalidArgument(
            fmt::format("xgpu: scan: a {} scan cannot write a {} array", name(op.type), name(out.dtype)));
    require_fp64(ctx, op.type);
    if (n == 0) return;

    // The kernel writes a C-contiguous output, and reads nothing it may already have written.
    if (!out.is_c_contiguous()) {
        const ArrayDesc tmp = make_array(ctx, out.dtype, out.shape, Order::C);
        scan(op, in, tmp, flags, inclusive);
        assign(out, tmp);
        return;
    }
    if (any_unsafe_overlap(in, shape, out)) {
        const ArrayDesc tmp = make_array(ctx, in.type, shape, Order::C);
        evaluate(in, tmp);
        scan(op, *array_node(tmp), out, flags, inclusive);
        return;
    }
    ArrayDesc f;
    if (flags) f = safe_input(*flags, out);

    codegen::Lowered map = lower_map(in, ctx, shape, codegen::Want::key_and_arguments);
    ScanCode c;
    c.key = fmt::format("scan|{}|{}|{}", inclusive ? "inclusive" : "exclusive", flags ? int(f.dtype) : -1, map.key);
    c.text = [&] {
        const codegen::Lowered m = lower_map(in, ctx, shape, codegen::Want::everything);
        ScanText t;
        t.params = fmt::format("{}XGPU_GLOBAL {}* xgpu_out, const int64_t xgpu_out_o", m.params,
                               codegen::device_type(op.type));
        if (flags)
            t.params +=
                fmt::format(", XGPU_GLOBAL const {}* xgpu_fl, const int64_t xgpu_fl_o", codegen::device_type(f.dtype));
        t.input_body = m.body;
        t.input = convert_code(m.value, m.type, op.type);
        t.start = "xgpu_fl[xgpu_fl_o + i]";
        t.output = fmt::format("xgpu_out[xgpu_out_o + i] = {};", inclusive ? "item" : "prev_item");
        return t;
    };

    std::vector<KernelArg> args = std::move(map.args);
    const std::int64_t out_offset = out.offset, flags_offset = f.offset;
    args.push_back(make_arg(out.buffer));
    args.push_back(make_arg(out_offset));
    if (flags) {
        args.push_back(make_arg(f.buffer));
        args.push_back(make_arg(flags_offset));
    }
    run(op, flags != nullptr, c, args, n);
}

void compact(const ArrayDesc* x_in, const Node& pred, const ArrayDesc& out, const ArrayDesc* rejected,
             const ArrayDesc& count) {
    const char* what = rejected ? "partition" : "copy_if";
    const Context& ctx = node_context(pred);
    if (!out.buffer || (x_in && !x_in->buffer) || (rejected && !rejected->buffer))
        throw InvalidArgument(fmt::format("xgpu: {} with an empty Array", what));
    if (x_in) check_context(ctx, x_in->context, what);
    check_context(ctx, out.context, what);
    if (rejected) check_context(ctx, rejected->context, what);
    const Shape shape = result_shape(pred);
    if (x_in && shape != x_in->shape)
        throw ShapeError(fmt::format("xgpu: {}: the predicate has shape {}, the array {}", what, to_string(shape),
                                     to_string(x_in->shape)));
    if (kind(pred.type) == Kind::complex)
        throw InvalidArgument(
            fmt::format("xgpu: {}: the predicate must be bool or real, not {}", what, name(pred.type)));
    const DType type = x_in ? x_in->dtype : DType::int64;
    for (const ArrayDesc* o : {&out, rejected}) {
        if (!o) continue;
        if (o->dtype != type)
            throw InvalidArgument(
                fmt::format("xgpu: {}: {} elements cannot go to a {} array", what, name(type), name(o->dtype)));
        if (!o->is_c_contiguous())
            throw InvalidArgument(
                fmt::format("xgpu: {}: the output is a non-contiguous view; pass a contiguous array", what));
    }
    require_fp64(ctx, type);
    const std::uint64_t n = shape_size(shape);
    if (n == 0) {
        const std::int64_t zero = 0;
        fill(count, &zero);
        return;
    }
    for (const ArrayDesc* o : {&out, rejected})
        if (o && any_unsafe_overlap(pred, shape, *o)) {
            const ArrayDesc tmp = make_array(ctx, pred.type, shape, Order::C);
            evaluate(pred, tmp);
            compact(x_in, *array_node(tmp), out, rejected, count);
            return;
        }
    ArrayDesc x;
    if (x_in) {
        x = safe_input(*x_in, out);
        if (rejected) x = safe_input(x, *rejected);
    }

    // A sum of 0/1 over the predicate; each kept element goes to its exclusive sum, each rejected
    // one (partition) to the count of rejected ones before it.
    const ScanOp op = sum_op(ctx, DType::int64);
    codegen::Lowered map = lower_map(pred, ctx, shape, codegen::Want::key_and_arguments);
    ScanCode c;
    c.key = fmt::format("compact|{}|{}|{}", x_in ? int(x.dtype) : -1, rejected ? 1 : 0, map.key);
    c.text = [&] {
        const codegen::Lowered m = lower_map(pred, ctx, shape, codegen::Want::everything);
        const char* T = codegen::device_type(type);
        ScanText t;
        t.params = m.params;
        if (x_in) t.params += fmt::format("XGPU_GLOBAL const {}* xgpu_x, const int64_t xgpu_x_o, ", T);
        t.params += fmt::format("XGPU_GLOBAL {}* xgpu_out, const int64_t xgpu_out_o, const int64_t xgpu_out_n, ", T);
        if (rejected)
            t.params +=
                fmt::format("XGPU_GLOBAL {}* xgpu_rej, const int64_t xgpu_rej_o, const int64_t xgpu_rej_n, ", T);
        t.params += "XGPU_GLOBAL int64_t* xgpu_count, const int64_t xgpu_count_o";
        t.input_body = m.body;
        t.input = fmt::format("(int64_t)({} != 0)", m.value);
        const std::string value = x_in ? "xgpu_x[xgpu_x_o + i]" : "(int64_t)i";
        t.output =
            fmt::format("if (item != prev_item) {{ if (prev_item < xgpu_out_n) xgpu_out[xgpu_out_o + prev_item] = "
                        "{0}; }}{1} if (i + 1 == xgpu_n) xgpu_count[xgpu_count_o] = item;",
                        value,
                        rejected ? fmt::format(" else if ((int64_t)i - prev_item < xgpu_rej_n) "
                                               "xgpu_rej[xgpu_rej_o + (int64_t)i - prev_item] = {};",
                                               value)
                                 : "");
        return t;
    };

    std::vector<KernelArg> args = std::move(map.args);
    const auto push = [&](const ArrayDesc& a, bool with_size) {
        args.push_back(make_arg(a.buffer));
        args.push_back(make_arg(std::int64_t(a.offset)));
        if (with_size) args.push_back(make_arg(std::int64_t(a.size())));
    };
    if (x_in) push(x, false);
    push(out, true);
    if (rejected) push(*rejected, true);
    push(count, false);
    run(op, false, c, args, n);
}

void copy_if(const ArrayDesc& x, const Node& pred, const ArrayDesc& out, const ArrayDesc& count) {
    compact(&x, pred, out, nullptr, count);
}

void place(const Node& mask, const ArrayDesc& values, const ArrayDesc& a) {
    const Context& ctx = a.context;
    if (!a.buffer || !values.buffer) throw InvalidArgument("xgpu: a masked assignment with an empty Array");
    check_context(ctx, node_context(mask), "a masked assignment");
    check_context(ctx, values.context, "a masked assignment");
    const Shape shape = result_shape(mask);
    if (shape != a.shape)
        throw ShapeError(fmt::format("xgpu: a masked assignment: the mask has shape {}, the array {}", to_string(shape),
                                     to_string(a.shape)));
    if (values.dtype != a.dtype)
        throw InvalidArgument(fmt::format("xgpu: a masked assignment: {} values cannot go to a {} array",
                                          name(values.dtype), name(a.dtype)));
    const std::uint64_t n = a.size();
    if (n == 0) return;
    // The kernel writes a C-contiguous array that nothing it reads overlaps.
    if (!a.is_c_contiguous() || may_share_memory(values, a) || any_unsafe_overlap(mask, shape, a)) {
        const ArrayDesc tmp = make_array(ctx, a.dtype, a.shape, Order::C);
        assign(tmp, a);
        const ArrayDesc v = may_share_memory(values, a) ? safe_input(values, tmp) : values;
        place(mask, v.is_c_contiguous() ? v : safe_input(v, tmp), tmp);
        assign(a, tmp);
        return;
    }
    const ArrayDesc v = values.is_c_contiguous() ? values : safe_input(values, a);
    const ScanOp op = sum_op(ctx, DType::int64);
    codegen::Lowered map = lower_map(mask, ctx, shape, codegen::Want::key_and_arguments);
    ScanCode c;
    c.key = fmt::format("place|{}|{}", int(a.dtype), map.key);
    c.text = [&] {
        const codegen::Lowered m = lower_map(mask, ctx, shape, codegen::Want::everything);
        const char* T = codegen::device_type(a.dtype);
        ScanText t;
        t.params = fmt::format("{}XGPU_GLOBAL const {}* xgpu_put, const int64_t xgpu_put_o, const int64_t xgpu_put_n, "
                               "XGPU_GLOBAL {}* xgpu_dst, const int64_t xgpu_dst_o",
                               m.params, T, T);
        t.input_body = m.body;
        t.input = fmt::format("(int64_t)({} != 0)", m.value);
        t.output = "if (item != prev_item && prev_item < xgpu_put_n) xgpu_dst[xgpu_dst_o + i] = xgpu_put[xgpu_put_o + "
                   "prev_item];";
        return t;
    };
    std::vector<KernelArg> args = std::move(map.args);
    args.push_back(make_arg(v.buffer));
    args.push_back(make_arg(std::int64_t(v.offset)));
    args.push_back(make_arg(std::int64_t(v.size())));
    args.push_back(make_arg(a.buffer));
    args.push_back(make_arg(std::int64_t(a.offset)));
    run(op, false, c, args, n);
}

} // namespace xgpu::detail
