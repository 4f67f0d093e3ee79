// Reductions: a map (an array expression, or a user's code) and an associative, commutative
// combine, in two stages: each work-group reduces its share to one partial, then one group reduces
// the partials (one stage where one group suffices). GPUs read with a grid-stride loop (coalesced,
// four loads in flight per work-item); CPUs give each work-item a contiguous chunk, the shape PoCL
// runs fast (`array-bench --sweep` shows both shapes). The number of groups depends only on the size and the device, so
// results are deterministic. With XGPU_HAS_WARP_SHUFFLE the last 32 lanes combine by shuffles.
#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "../mirror.hpp"
#include "../queue_ticket.hpp"
#include "generator.hpp"
#include "tuning.hpp"
#include "xgpu/reduction.hpp"

namespace xgpu::detail {
namespace {

bool is_float(DType t) {
    return kind(t) == Kind::floating;
}

} // namespace

std::string extreme_value(DType t, bool largest) {
    if (is_float(t)) {
        const std::string inf = t == DType::float32 ? "XGPU_INFINITY_F" : "XGPU_INFINITY_D";
        return largest ? inf : "(-" + inf + ")";
    }
    const std::size_t bits = 8 * info(t).size;
    std::uint64_t v;
    if (t == DType::bool_)
        v = largest ? 1 : 0;
    else if (kind(t) == Kind::unsigned_int)
        v = largest ? (bits == 64 ? ~0ull : (1ull << bits) - 1) : 0;
    else
        v = largest ? (1ull << (bits - 1)) - 1 : (bits == 64 ? (1ull << 63) : ((~0ull) << (bits - 1)));
    return fmt::format("(({})(int64_t)0x{:x}ULL)", dev(t), v);
}

namespace {

bool shuffles(DType t) {
    return t == DType::int32 || t == DType::uint32 || t == DType::int64 || t == DType::uint64 || t == DType::float32 ||
           t == DType::float64;
}

// |v| of type `t` as real type `r`.
std::string magnitude(DType t, DType r) {
    if (kind(t) == Kind::complex) return fmt::format("({})hypot(v.re, v.im)", dev(r));
    return fmt::format("fabs(({})v)", dev(r));
}

std::string nan_max(const char* cmp) { // NaN propagates, as numpy's maximum/minimum
    return fmt::format("((a != a || a {} b) ? a : b)", cmp);
}

} // namespace

namespace {
ReduceSpec make_spec(ReduceOp op, DType t);
}

const ReduceSpec& cached_spec(ReduceOp op, DType t) {
    // Specs are pure functions of (op, type): each is built once (they are strings), and looked up
    // without a lock. A combination that is refused throws each time it is asked for.
    constexpr std::size_t ops = std::size_t(ReduceOp::prod) + 1, types = std::size_t(DType::complex128) + 1;
    struct Entry {
        std::once_flag once;
        std::optional<ReduceSpec> spec;
    };
    static std::array<std::array<Entry, types>, ops> table;
    Entry& e = table[std::size_t(op)][std::size_t(t)];
    std::call_once(e.once, [&] { e.spec = make_spec(op, t); });
    return *e.spec;
}

ReduceSpec reduce_spec(ReduceOp op, DType t) {
    return cached_spec(op, t);
}

namespace {
// A reduction that accumulates in `a` and returns the accumulator as it is.
void accumulate_in(ReduceSpec& s, DType a) {
    s.acc_type = dev(a);
    s.finish = "a";
    s.out = a;
    s.acc_bytes = info(a).size;
    s.shuffle = shuffles(a);
}

ReduceSpec make_spec(ReduceOp op, DType t) {
    ReduceSpec s;
    const bool cpx = kind(t) == Kind::complex;
    auto need_real = [&](const char* what) {
        if (cpx) throw InvalidArgument(fmt::format("xgpu: {} is not defined for complex arrays", what));
    };
    switch (op) {
    case ReduceOp::sum: {
        const DType a = sum_type(t);
        s.name = "sum";
        accumulate_in(s, a);
        s.neutral = cpx ? std::string(dev(a)) + "_make(0, 0)" : fmt::format("({})0", dev(a));
        s.reduce = cpx ? std::string(dev(a)) + "_add(a, b)" : "a + b";
        s.map = convert_code("v", t, a);
        break;
    }
    case ReduceOp::prod: {
        const DType a = sum_type(t);
        s.name = "prod";
        accumulate_in(s, a);
        s.neutral = cpx ? std::string(dev(a)) + "_make(1, 0)" : fmt::format("({})1", dev(a));
        s.reduce = cpx ? std::string(dev(a)) + "_mul(a, b)" : "a * b";
        s.map = convert_code("v", t, a);
        break;
    }
    case ReduceOp::min:
    case ReduceOp::max: {
        need_real(op == ReduceOp::min ? "min" : "max");
        const bool mx = op == ReduceOp::max;
        s.name = mx ? "max" : "min";
        accumulate_in(s, t);
        s.neutral = extreme_value(t, !mx);
        s.reduce = is_float(t) ? nan_max(mx ? ">" : "<") : std::string(mx ? "(a > b ? a : b)" : "(a < b ? a : b)");
        s.map = "v";
        break;
    }
    case ReduceOp::argmin:
    case ReduceOp::argmax: {
        need_real(op == ReduceOp::argmin ? "argmin" : "argmax");
        const bool mx = op == ReduceOp::argmax;
        s.name = mx ? "argmax" : "argmin";
        s.acc_type = "xgpu_arg";
        // The first extreme wins; a NaN is the extreme (numpy), the first NaN among several.
        s.declarations = fmt::format(
            "typedef struct {{ {0} v; int64_t i; }} xgpu_arg;\n"
            "XGPU_DEVICE_FN xgpu_arg xgpu_arg_make({0} v, int64_t i) {{ xgpu_arg r; r.v = v; r.i = i; return r; }}\n"
            "XGPU_DEVICE_FN xgpu_arg xgpu_arg_pick(xgpu_arg a, xgpu_arg b) {{\n"
            "    const int an = {1}, bn = {2};\n"
            "    if (an || bn) return (an && (!bn || a.i < b.i)) ? a : b;\n"
            "    if (a.v == b.v) return a.i < b.i ? a : b;\n"
            "    return a.v {3} b.v ? a : b;\n}}\n",
            dev(t), is_float(t) ? "a.v != a.v" : "0", is_float(t) ? "b.v != b.v" : "0", mx ? ">" : "<");
        s.neutral = fmt::format("xgpu_arg_make({}, (int64_t)0x7fffffffffffffffLL)", extreme_value(t, !mx));
        s.reduce = "xgpu_arg_pick(a, b)";
        s.map = "xgpu_arg_make(v, (int64_t)i)";
        s.finish = "a.i";
        s.out = DType::int64;
        s.acc_bytes = 16; // { value of at most 8 bytes, int64 } padded
        break;
    }
    case ReduceOp::any:
    case ReduceOp::all: {
        const bool an = op == ReduceOp::any;
        s.name = an ? "any" : "all";
        s.acc_type = "int32_t";
        s.neutral = an ? "0" : "1";
        s.reduce = an ? "(a | b)" : "(a & b)";
        s.map = "(int32_t)" + convert_code("v", t, DType::bool_);
        s.finish = "(uint8_t)(a != 0)";
        s.out = DType::bool_;
        s.acc_bytes = 4;
        s.shuffle = true;
        break;
    }
    case ReduceOp::norm1:
    case ReduceOp::norm2:
    case ReduceOp::norm_inf: {
        const DType r = norm_type(t);
        s.name = op == ReduceOp::norm1 ? "norm1" : op == ReduceOp::norm2 ? "norm2" : "norminf";
        s.acc_type = dev(r);
        s.neutral = fmt::format("({})0", dev(r));
        s.reduce = op == ReduceOp::norm_inf ? nan_max(">") : "a + b";
        if (op == ReduceOp::norm2)
            s.map = cpx ? fmt::format("(({0})v.re * ({0})v.re + ({0})v.im * ({0})v.im)", dev(r))
                        : fmt::format("(({0})v * ({0})v)", dev(r));
        else
            s.map = magnitude(t, r);
        s.finish = op == ReduceOp::norm2 ? "sqrt(a)" : "a";
        s.out = r;
        s.acc_bytes = info(r).size;
        s.shuffle = true;
        break;
    }
    }
    return s;
}
} // namespace

namespace {

// The launch of a reduction over n elements in `shape` (kernels/reduction.kernel): how many
// work-groups, and each work-item's chunk where the shape is blocked. The count depends only on n
// and the device, so results are deterministic.
struct Geometry {
    LaunchShape shape;
    std::size_t groups;
    std::uint64_t chunk;      // blocked: elements per work-item
    bool last_group_combines; // one launch: the last group to finish reduces the partials
};

Geometry geometry(const Context& ctx, const LaunchShape& shape, std::uint64_t n) {
    const auto& d = ctx.device().info();
    Geometry g{shape, 1, 1, false};
    const std::uint64_t wg = shape.group_size, units = std::max(1u, d.compute_units);
    // Enough work per group to be worth a group. Where the last group combines the partials
    // (group_ticket), more groups cost nothing but the combination, and one group of a small
    // reduction would read its share one load after another, paying one multiprocessor's memory
    // latency at every step: one unrolled step per work-item. Elsewhere a second stage costs a
    // launch, so on GPUs up to 64 elements per work-item go to one group.
    const bool ticket = d.group_ticket && !shape.blocked;
    const std::uint64_t per_group = wg * (shape.blocked ? 64 : ticket ? shape.items : (n <= wg * 64 ? 64 : 8));
    g.groups =
        std::size_t(std::clamp<std::uint64_t>((n + per_group - 1) / per_group, 1, units * (shape.blocked ? 4 : 8)));
    const std::uint64_t items = std::uint64_t(g.groups) * wg;
    g.chunk = (n + items - 1) / items;
    g.last_group_combines = ticket && g.groups > 1;
    return g;
}

// The accumulators beyond `acc` (a1 ...), one unrolled step per accumulator, and their pairwise
// combination into `acc`: generated for the shape's items.
std::string accumulator(unsigned a) {
    return a == 0 ? std::string("acc") : fmt::format("a{}", a);
}
std::string pairwise(unsigned lo, unsigned hi) { // accumulators lo .. hi-1
    if (hi - lo == 1) return accumulator(lo);
    const unsigned mid = lo + (hi - lo + 1) / 2;
    return fmt::format("xgpu_reduce({}, {})", pairwise(lo, mid), pairwise(mid, hi));
}

// Vectors of accumulators, for blocked shapes (CPUs) of the built-in reductions whose
// accumulator is a real or integer type (vector_type), where the dialect has vector types
// (XGPU_HAS_VECTORS: OpenCL C's built-in vectors, whose operators and ?: act per component).
// PoCL vectorises across work-items, which a work-item's loop over its own block defeats: there
// each step's elements go into vectors explicitly, `lanes` consecutive elements per vector, so
// that the loads and the reduce expression (NaN-propagating selects included) compile to
// whole-register operations instead of a scalar, branching chain (lanes: vector_lanes).
const char* vector_base(DType t) { // the OpenCL C scalar type whose vectors hold `t`
    switch (t) {
    case DType::bool_:
    case DType::uint8: return "uchar";
    case DType::int8: return "char";
    case DType::int16: return "short";
    case DType::uint16: return "ushort";
    case DType::int32: return "int";
    case DType::uint32: return "uint";
    case DType::int64: return "long";
    case DType::uint64: return "ulong";
    case DType::float32: return "float";
    case DType::float64: return "double";
    default: return nullptr;
    }
}

// What the vectors of a reduction hold: lanes of the accumulator type `acc`, for elements of
// `element_bytes` each. `complex_of`: complex sums, whose accumulator is that complex type; their
// real and imaginary parts go into two vectors of `acc`, its real type, added lane by lane.
struct VectorOf {
    DType acc;
    std::size_t element_bytes;
    std::optional<DType> complex_of = std::nullopt;
    // Sums of 8- and 16-bit integers into 64 bits: lanes of this 32-bit type take the elements for
    // a bounded run of steps (narrow_steps: no lane can overflow), then join the 64-bit lanes.
    std::optional<DType> narrow = std::nullopt;
    // Where set, the lanes compute this map in the narrow type instead (norm2 of 8-bit elements:
    // their squares as integers, exact), for runs of narrow_run steps.
    std::string narrow_map = {};
    unsigned narrow_run = 0;
};

// Steps a 32-bit lane can take of elements of `bytes` bytes (at most 2^(8 bytes) - 1 each in
// magnitude) without overflowing: 2^16 for 8-bit, 2^14 for 16-bit elements.
unsigned narrow_steps(std::size_t bytes) {
    return bytes == 1 ? 1u << 16 : 1u << 14;
}

// Every built-in reduction but argmin/argmax: their reduce expressions apply per component to
// vectors of the accumulator type; complex sums (and dots) add real and imaginary parts in two
// real vectors. (Complex lanes kept as interleaved pairs in one vector read more slowly, and
// PoCL 3.1 aborts on such a complex128 program, "Broken module found".)
std::optional<VectorOf> vector_type(ReduceOp op, DType t) {
    const std::size_t bytes = info(t).size;
    switch (op) {
    case ReduceOp::argmin:
    case ReduceOp::argmax: return std::nullopt;
    case ReduceOp::sum: {
        const DType acc = sum_type(t);
        if (kind(acc) != Kind::complex) {
            VectorOf v{acc, bytes};
            if (kind(acc) != Kind::floating && info(acc).size == 8 && bytes <= 2 && kind(t) != Kind::floating)
                v.narrow = acc == DType::uint64 ? DType::uint32 : DType::int32;
            return v;
        }
        return VectorOf{acc == DType::complex64 ? DType::float32 : DType::float64, bytes, acc};
    }
    case ReduceOp::min:
    case ReduceOp::max: return VectorOf{t, bytes};
    case ReduceOp::any:
    case ReduceOp::all: return VectorOf{DType::int32, bytes};
    case ReduceOp::norm2:
        if (bytes == 1 && kind(t) != Kind::floating) // squares of at most 2^16: 2^15 steps fit in 31 bits
            return VectorOf{norm_type(t), bytes, std::nullopt, DType::int32, "((int)v * (int)v)", 1u << 15};
        return VectorOf{norm_type(t), bytes};
    default: return VectorOf{norm_type(t), bytes};
    }
}

// 64 bytes of lanes, at most 16 (OpenCL C's widest vector; complex: 8); of the accumulator, or of the
// elements where they are narrower (int8 sums: 16 int64 lanes, two registers, for 16 bytes read).
unsigned vector_lanes(const std::optional<VectorOf>& v, const LaunchShape& shape) {
    if (!shape.blocked || !v || !vector_base(v->acc)) return 0;
    // Complex: 8 elements a step, two vectors of their parts: on PoCL complex64 dots run faster
    // with 8 than with 16 (docs/performance.md has the reductions' current figures).
    if (v->complex_of) return 8;
    return unsigned(std::min<std::size_t>(16, 64 / std::min(info(v->acc).size, v->element_bytes)));
}

// The hooks of the vector path (empty without one, so that other shapes' text is unchanged): the
// vector type and its reduce function (after xgpu_reduce), and the loop that takes most of a
// work-item's block in steps of `items` vectors of `lanes` elements (from up to four parts of the
// block side by side), then combines the vectors pairwise and their lanes in order into `acc` (the
// scalar loops after it take the rest of the block).
struct VectorPath {
    std::string functions, loop;
};

VectorPath vector_path(const ReduceSpec& s, const std::optional<VectorOf>& vector_of, const LaunchShape& shape,
                       const std::string& element) {
    const unsigned lanes = vector_lanes(vector_of, shape);
    if (!lanes) return {};
    const unsigned vectors = shape.items;
    VectorPath p;
    const bool cpx = vector_of->complex_of.has_value();
    const std::optional<DType> narrow = vector_of->narrow;
    p.functions = fmt::format("\n#if defined(XGPU_HAS_VECTORS)\n"
                              "typedef {}{} ACCV;\n"
                              "{}"
                              "XGPU_DEVICE_FN ACCV xgpu_reduce_v(ACCV a, ACCV b) {{ return {}; }}\n"
                              "#endif",
                              vector_base(vector_of->acc), lanes,
                              narrow ? fmt::format("typedef {}{} NARV;\n", vector_base(*narrow), lanes) : "",
                              cpx ? "a + b" : s.reduce);
    // Complex: vector u is the pair xgpu_v<u>r, xgpu_v<u>i (real and imaginary parts).
    const std::vector<std::string> parts = cpx ? std::vector<std::string>{"r", "i"} : std::vector<std::string>{""};
    const std::vector<std::string> fields = cpx ? std::vector<std::string>{".re", ".im"} : std::vector<std::string>{""};
    const auto vec = [](unsigned u, const std::string& part = "") { return fmt::format("xgpu_v{}{}", u, part); };
    // The block is read as `streams` parts side by side, vector u from part u % streams: a core
    // reads several streams at once faster than one (raw OpenCL f64 sums on PoCL ran faster with
    // two parts than with one, and faster still with four).
    const unsigned streams = vectors % 4 == 0 ? 4 : vectors % 2 == 0 ? 2 : 1, across = vectors / streams;
    codegen::Source loop(1);
    loop.raw("\n").line("#if defined(XGPU_HAS_VECTORS)").open();
    std::string names;
    for (unsigned u = 0; u < vectors; ++u)
        for (const auto& part : parts)
            names +=
                fmt::format("{}{} = (ACCV)({})", names.empty() ? "" : ", ", vec(u, part), cpx ? "0" : "xgpu_neutral()");
    loop.line("ACCV " + names + ";");
    loop.line(fmt::format("const uint64_t xgpu_part = last > j ? (last - j) / {0} * {1} : 0;", streams * across * lanes,
                          across * lanes));
    const unsigned step = across * lanes;
    if (narrow) {
        const std::uint64_t run =
            std::uint64_t(vector_of->narrow_run ? vector_of->narrow_run : narrow_steps(vector_of->element_bytes)) *
            step;
        loop.open(fmt::format("for (uint64_t xgpu_c = j; xgpu_c < j + xgpu_part; xgpu_c += {})", run));
        std::string narrow_names;
        for (unsigned u = 0; u < vectors; ++u)
            narrow_names += fmt::format("{}xgpu_n{} = (NARV)(0)", u ? ", " : "", u);
        loop.line("NARV " + narrow_names + ";");
        loop.line(
            fmt::format("const uint64_t xgpu_end = j + xgpu_part - xgpu_c > {0} ? xgpu_c + {0} : j + xgpu_part;", run));
        loop.open(fmt::format("for (uint64_t xgpu_k = xgpu_c; xgpu_k < xgpu_end; xgpu_k += {})", step));
    } else {
        loop.open(fmt::format("for (uint64_t xgpu_k = j; xgpu_k < j + xgpu_part; xgpu_k += {})", step));
    }
    for (unsigned u = 0; u < vectors; ++u) {
        loop.open();
        std::string lane_names;
        for (unsigned k = 0; k < lanes; ++k)
            lane_names += fmt::format("{}xgpu_l{}", k ? ", " : "", k);
        const bool narrow_lanes = !vector_of->narrow_map.empty();
        loop.line((narrow_lanes ? std::string(vector_base(*narrow)) : std::string("ACC")) + " " + lane_names + ";");
        for (unsigned k = 0; k < lanes; ++k) {
            loop.open().line(fmt::format("const uint64_t i = xgpu_k + {} * xgpu_part + {}; (void)i;", u % streams,
                                         u / streams * lanes + k));
            loop.raw(element);
            loop.line(fmt::format("xgpu_l{} = {};", k, narrow_lanes ? vector_of->narrow_map : s.map)).close();
        }
        for (std::size_t f = 0; f < parts.size(); ++f) {
            std::string lane_fields;
            for (unsigned k = 0; k < lanes; ++k)
                lane_fields += narrow ? fmt::format("{}({})xgpu_l{}", k ? ", " : "", vector_base(*narrow), k)
                                      : fmt::format("{}xgpu_l{}{}", k ? ", " : "", k, fields[f]);
            if (narrow)
                loop.line(fmt::format("xgpu_n{0} += (NARV)({1});", u, lane_fields));
            else
                loop.line(fmt::format("{0} = xgpu_reduce_v({0}, (ACCV)({1}));", vec(u, parts[f]), lane_fields));
        }
        loop.close();
    }
    if (narrow) {
        loop.close();
        for (unsigned u = 0; u < vectors; ++u)
            loop.line(fmt::format("{0} = xgpu_reduce_v({0}, convert_{1}{2}(xgpu_n{3}));", vec(u),
                                  vector_base(vector_of->acc), lanes, u));
    }
    loop.close().line(fmt::format("j += {} * xgpu_part;", streams));
    // The vectors pairwise (as the scalar accumulators below), then the lanes in order.
    std::function<std::string(unsigned, unsigned, const std::string&)> pair = [&](unsigned lo, unsigned hi,
                                                                                  const std::string& part) {
        if (hi - lo == 1) return vec(lo, part);
        const unsigned mid = lo + (hi - lo + 1) / 2;
        return fmt::format("xgpu_reduce_v({}, {})", pair(lo, mid, part), pair(mid, hi, part));
    };
    for (const auto& part : parts)
        loop.line(fmt::format("const ACCV xgpu_all{} = {};", part, pair(0, vectors, part)));
    for (unsigned k = 0; k < lanes; ++k)
        if (cpx)
            loop.line(fmt::format("acc = xgpu_reduce(acc, {}_make(xgpu_allr.s{:x}, xgpu_alli.s{:x}));",
                                  info(*vector_of->complex_of).device_name, k, k));
        else
            loop.line(fmt::format("acc = xgpu_reduce(acc, xgpu_all.s{:x});", k));
    loop.close().line("#endif");
    p.loop = loop.str();
    if (!p.loop.empty() && p.loop.back() == '\n') p.loop.pop_back();
    return p;
}

// The lines of a lowered body, leading spaces dropped, empty ones left out.
std::vector<std::string> statements(const std::string& body) {
    std::vector<std::string> out;
    std::size_t begin = 0;
    while (begin < body.size()) {
        std::size_t end = body.find('\n', begin);
        if (end == std::string::npos) end = body.size();
        std::string line = body.substr(begin, end - begin);
        begin = end + 1;
        line.erase(0, std::min(line.size(), line.find_first_not_of(' ')));
        if (!line.empty()) out.push_back(std::move(line));
    }
    return out;
}

// Complex reductions whose elements are read straight from contiguous arrays: sum(x), sum(x * y)
// (dot), either factor conjugated (vdot), and norm2(x). On blocked shapes these read each step's 8
// elements as one vector of their parts interleaved, as they lie in memory (vload16: float16 for
// complex64, double16 for complex128), and keep the sums in such vectors, splitting real and
// imaginary lanes once at the end. (Built from the elements' fields, the compiler read the parts
// through gathers, which left PoCL's complex sums, dots and norms well below the triad.)
// The map is recognised from its lowered statements: loads `pK[oK + (int64_t)i]`, `_conj` and one
// `_mul`; anything else takes the general path.
struct ComplexStream {
    enum class Kind { sum, product, norm2 } kind;
    std::string a, b; // the operands' pointer expressions (b: product only)
    bool conj_a = false, conj_b = false;
};

std::optional<ComplexStream> complex_stream(ReduceOp op, DType t, const codegen::Lowered& map) {
    if (kind(t) != Kind::complex || (op != ReduceOp::sum && op != ReduceOp::norm2) || map.type != t) return {};
    const std::string c = dev(t);
    struct Operand {
        std::string ptr;
        bool conj;
    };
    std::map<std::string, Operand> loaded;                       // t<n> -> its load
    std::map<std::string, std::pair<Operand, Operand>> products; // t<n> -> its factors
    const std::regex load("const " + c + " (t[0-9]+) = (p[0-9]+)\\[(o[0-9]+) \\+ \\(int64_t\\)i\\];");
    const std::regex conj("const " + c + " (t[0-9]+) = " + c + "_conj\\((t[0-9]+)\\);");
    const std::regex mul("const " + c + " (t[0-9]+) = " + c + "_mul\\((t[0-9]+), (t[0-9]+)\\);");
    for (const std::string& line : statements(map.body)) {
        std::smatch m;
        if (std::regex_match(line, m, load)) {
            loaded[m[1]] = {"(" + m[2].str() + " + " + m[3].str() + ")", false};
        } else if (std::regex_match(line, m, conj) && loaded.count(m[2])) {
            loaded[m[1]] = {loaded[m[2]].ptr, !loaded[m[2]].conj};
        } else if (std::regex_match(line, m, mul) && loaded.count(m[2]) && loaded.count(m[3])) {
            products[m[1]] = {loaded[m[2]], loaded[m[3]]};
        } else {
            return {};
        }
    }
    if (op == ReduceOp::norm2) {
        if (!loaded.count(map.value)) return {};
        return ComplexStream{ComplexStream::Kind::norm2, loaded[map.value].ptr, "", false, false};
    }
    if (loaded.count(map.value)) {
        const Operand& a = loaded[map.value];
        return ComplexStream{ComplexStream::Kind::sum, a.ptr, "", a.conj, false};
    }
    if (products.count(map.value)) {
        const auto& [a, b] = products[map.value];
        return ComplexStream{ComplexStream::Kind::product, a.ptr, b.ptr, a.conj, b.conj};
    }
    return {};
}

// The vector path of a complex stream (VectorPath's hooks): `items` vectors a step, each holding 8
// elements' parts interleaved; the sums S (and, for products, T of each element times its other
// factor with parts swapped) in vectors alike. For a product a*b: S's pairs are (ar*br, ai*bi) and
// T's (ar*bi, ai*br), so re = S.even - S.odd and im = T.even + T.odd (conjugates flip signs).
VectorPath complex_vector_path(const ComplexStream& cs, DType t, const LaunchShape& shape) {
    const bool f32 = t == DType::complex64;
    const std::string real = f32 ? "float" : "double", c = dev(t);
    const unsigned lanes = 8, vectors = shape.items;
    VectorPath p;
    p.functions = fmt::format("\n#if defined(XGPU_HAS_VECTORS)\ntypedef {}16 PAIRV;\n#endif", real);
    const unsigned streams = vectors % 4 == 0 ? 4 : vectors % 2 == 0 ? 2 : 1, across = vectors / streams;
    const bool product = cs.kind == ComplexStream::Kind::product;
    const auto s = [](unsigned u) { return fmt::format("xgpu_s{}", u); };
    const auto tt = [](unsigned u) { return fmt::format("xgpu_t{}", u); };
    const auto load = [&](const std::string& ptr) {
        return fmt::format("vload16(0, (XGPU_GLOBAL const {}*)({} + (int64_t)i))", real, ptr);
    };
    codegen::Source loop(1);
    loop.raw("\n").line("#if defined(XGPU_HAS_VECTORS)").open();
    std::string names;
    for (unsigned u = 0; u < vectors; ++u)
        names += fmt::format("{}{} = (PAIRV)(0){}", u ? ", " : "", s(u), product ? ", " + tt(u) + " = (PAIRV)(0)" : "");
    loop.line("PAIRV " + names + ";");
    loop.line(fmt::format("const uint64_t xgpu_part = last > j ? (last - j) / {0} * {1} : 0;", streams * across * lanes,
                          across * lanes));
    loop.open(fmt::format("for (uint64_t xgpu_k = j; xgpu_k < j + xgpu_part; xgpu_k += {})", across * lanes));
    for (unsigned u = 0; u < vectors; ++u) {
        loop.open().line(
            fmt::format("const uint64_t i = xgpu_k + {} * xgpu_part + {};", u % streams, u / streams * lanes));
        loop.line("const PAIRV xgpu_a = " + load(cs.a) + ";");
        switch (cs.kind) {
        case ComplexStream::Kind::sum: loop.line(fmt::format("{0} += xgpu_a;", s(u))); break;
        case ComplexStream::Kind::norm2: loop.line(fmt::format("{0} += xgpu_a * xgpu_a;", s(u))); break;
        case ComplexStream::Kind::product:
            loop.line("const PAIRV xgpu_b = " + (cs.b == cs.a ? std::string("xgpu_a") : load(cs.b)) + ";");
            loop.line(fmt::format("{0} += xgpu_a * xgpu_b;", s(u)));
            loop.line(fmt::format("{0} += xgpu_a * xgpu_b.s1032547698badcfe;", tt(u)));
            break;
        }
        loop.close();
    }
    loop.close().line(fmt::format("j += {} * xgpu_part;", streams));
    std::function<std::string(unsigned, unsigned, const std::function<std::string(unsigned)>&)> pair =
        [&](unsigned lo, unsigned hi, const std::function<std::string(unsigned)>& v) -> std::string {
        if (hi - lo == 1) return v(lo);
        const unsigned mid = lo + (hi - lo + 1) / 2;
        return fmt::format("({} + {})", pair(lo, mid, v), pair(mid, hi, v));
    };
    loop.line(fmt::format("const PAIRV xgpu_s = {};", pair(0, vectors, s)));
    if (product) loop.line(fmt::format("const PAIRV xgpu_t = {};", pair(0, vectors, tt)));
    // Signs of the parts: sa, sb = -1 where that factor is conjugated.
    const int sa = cs.conj_a ? -1 : 1, sb = cs.conj_b ? -1 : 1;
    const auto sign = [](int v) { return v < 0 ? "-" : "+"; };
    for (unsigned k = 0; k < lanes; ++k) {
        const unsigned e = 2 * k, o = 2 * k + 1;
        switch (cs.kind) {
        case ComplexStream::Kind::sum:
            loop.line(fmt::format("acc = xgpu_reduce(acc, {}_make(xgpu_s.s{:x}, {}xgpu_s.s{:x}));", c, e,
                                  sa < 0 ? "-" : "", o));
            break;
        case ComplexStream::Kind::norm2:
            loop.line(fmt::format("acc = xgpu_reduce(acc, xgpu_s.s{:x} + xgpu_s.s{:x});", e, o));
            break;
        case ComplexStream::Kind::product:
            loop.line(fmt::format("acc = xgpu_reduce(acc, {}_make(xgpu_s.s{:x} {} xgpu_s.s{:x}, "
                                  "{}xgpu_t.s{:x} {} xgpu_t.s{:x}));",
                                  c, e, sign(-sa * sb), o, sb < 0 ? "-" : "", e, sign(sa), o));
            break;
        }
    }
    loop.close().line("#endif");
    p.loop = loop.str();
    if (!p.loop.empty() && p.loop.back() == '\n') p.loop.pop_back();
    return p;
}

// Wide loads on grid-stride shapes (GPUs): where every array the map streams is contiguous and of
// elements narrower than 4 bytes (bool, 8- and 16-bit integers), one load of one element per
// work-item per step moves 32 to 64 bytes a warp, and the loop is bound by load instructions, not
// by memory. There each work-item loads 16 bytes of each operand at once (a uint4, XGPU_LOAD16),
// 16 / size elements, takes its lanes apart with shifts, and reduces them together (pairwise)
// into one of its accumulators. The operands must lie at the same distance from a 16-byte
// boundary (checked in the kernel; the arrays of a reduction usually start at offset 0): a head
// of at most 15 elements before the first boundary and the tail after the last whole 16 bytes
// take the general loop, and so does everything where the distances differ. complex128 elements
// (a struct of two doubles, aligned to 8 bytes, which the compilers read in two 8-byte loads)
// are read as one double2 each where they are 16-byte aligned.
// The map is recognised from its lowered statements: loads `pK[oK + (int64_t)i]` of one element
// size, loads `pK[oK + 0]` of broadcast elements (kept as they are), and anything that reads no
// array; any other load (strided, broadcast along an axis) takes the general path only.
struct WideLoad {
    std::string temp, type, ptr, offset; // `const type temp = ptr[offset + (int64_t)i];`
};
struct WideMap {
    std::size_t element_bytes = 0;
    std::vector<std::string> body; // the map's statements, loads of streamed operands marked by load index
    std::vector<int> load_of;      // per statement: the WideLoad it is, or -1
    std::vector<WideLoad> loads;
    std::vector<std::string> operands; // distinct pointers (their offsets beside), in first-load order
    std::vector<std::string> offsets;
    std::string value; // `const <type> v = <value>;`
};

std::optional<WideMap> wide_map(const codegen::Lowered& map) {
    static const std::regex load("const ([a-z0-9_]+) (t[0-9]+) = (p[0-9]+)\\[(o[0-9]+) \\+ \\(int64_t\\)i\\];");
    static const std::regex single("const [a-z0-9_]+ t[0-9]+ = p[0-9]+\\[o[0-9]+ \\+ 0\\];");
    static const std::regex any_load("p[0-9]+\\[");
    WideMap w;
    for (const std::string& line : statements(map.body)) {
        std::smatch m;
        if (std::regex_match(line, m, load)) {
            std::size_t bytes = 0;
            for (std::size_t t = 0; t <= std::size_t(DType::complex128); ++t)
                if (m[1] == dev(DType(t))) bytes = info(DType(t)).size;
            if (bytes == 0 || (bytes >= 4 && m[1] != dev(DType::complex128)) ||
                (w.element_bytes && bytes != w.element_bytes))
                return {};
            w.element_bytes = bytes;
            w.load_of.push_back(int(w.loads.size()));
            w.loads.push_back({m[2], m[1], m[3], m[4]});
            if (std::find(w.operands.begin(), w.operands.end(), m[3].str()) == w.operands.end()) {
                w.operands.push_back(m[3]);
                w.offsets.push_back(m[4]);
            }
        } else if (std::regex_search(line, any_load) && !std::regex_match(line, single)) {
            return {};
        } else {
            w.load_of.push_back(-1);
        }
        w.body.push_back(line);
    }
    if (w.loads.empty()) return {};
    w.value = fmt::format("const {} v = {};", dev(map.type), map.value);
    return w;
}

// The wide loop (the hook wide_loop of kernels/reduction.kernel, after the grid-stride loop's first
// index `j`, empty on other shapes and maps, so that their text is unchanged; it leaves `j` at the
// general loops' share of the rest): steps of `items` loads
// of 16 bytes per operand, a step's lanes reduced pairwise into accumulator u. Sums of 8- and
// 16-bit integers into 64 bits (and 8-bit norms) add a step's lanes in 32 bits first (at most
// 16 lanes: no overflow), as the CPU path does for its runs.
std::string wide_loop(const ReduceSpec& s, const WideMap& w, const LaunchShape& shape,
                      const std::optional<VectorOf>& vector_of) {
    const std::size_t bytes = w.element_bytes, lanes = 16 / bytes, per_word = bytes < 4 ? 4 / bytes : 1;
    const bool cpx = bytes == 16; // complex128: one element, as a double2
    const bool narrow_map = vector_of && !vector_of->narrow_map.empty();
    const std::optional<DType> narrow = vector_of && vector_of->narrow ? vector_of->narrow
                                        : narrow_map                   ? std::optional<DType>(DType::int32)
                                                                       : std::nullopt;
    const std::string lane_type = narrow ? dev(*narrow) : "ACC";
    const auto word = [&](const std::string& ptr) { return "xgpu_w" + ptr.substr(1); };
    codegen::Source loop(1);
    loop.raw("\n").open();
    loop.line(fmt::format("const uint xgpu_mis = (uint)((size_t)({} + {}) & 15u);", w.operands[0], w.offsets[0]));
    std::string same = cpx ? "xgpu_mis == 0" : "";
    for (std::size_t k = 1; k < w.operands.size(); ++k)
        same += fmt::format("{}(uint)((size_t)({} + {}) & 15u) == xgpu_mis", same.empty() ? "" : " && ", w.operands[k],
                            w.offsets[k]);
    if (!same.empty()) loop.open(fmt::format("if ({})", same));
    loop.line(fmt::format("const uint64_t xgpu_to16 = (uint64_t)((16u - xgpu_mis) & 15u){};",
                          bytes > 1 ? fmt::format(" / {}", bytes) : ""));
    loop.line("const uint64_t xgpu_head = xgpu_to16 < n ? xgpu_to16 : n;");
    loop.line(fmt::format("const uint64_t xgpu_wides = (n - xgpu_head) / {};", lanes));
    loop.line("uint64_t xgpu_b = j;");
    std::function<std::string(std::size_t, std::size_t, bool)> pair = [&](std::size_t lo, std::size_t hi,
                                                                          bool add) -> std::string {
        if (hi - lo == 1) return fmt::format("xgpu_l{}", lo);
        const std::size_t mid = lo + (hi - lo + 1) / 2;
        return add ? fmt::format("({} + {})", pair(lo, mid, add), pair(mid, hi, add))
                   : fmt::format("xgpu_reduce({}, {})", pair(lo, mid, add), pair(mid, hi, add));
    };
    const auto step = [&](unsigned u) {
        loop.open();
        loop.line(u == 0 ? fmt::format("const uint64_t xgpu_e = xgpu_head + xgpu_b * {};", lanes)
                         : fmt::format("const uint64_t xgpu_e = xgpu_head + (xgpu_b + {} * stride) * {};", u, lanes));
        for (std::size_t k = 0; k < w.operands.size(); ++k)
            loop.line(fmt::format("const {0} {1} = XGPU_LOAD16({0}, {2} + {3} + (int64_t)xgpu_e);",
                                  cpx ? "double2" : "uint4", word(w.operands[k]), w.operands[k], w.offsets[k]));
        std::string names;
        for (std::size_t k = 0; k < lanes; ++k)
            names += fmt::format("{}xgpu_l{}", k ? ", " : "", k);
        loop.line(lane_type + " " + names + ";");
        for (std::size_t k = 0; k < lanes; ++k) {
            loop.open().line(fmt::format("const uint64_t i = xgpu_e + {}; (void)i;", k));
            const char field = "xyzw"[k / per_word];
            const std::size_t shift = (k % per_word) * 8 * bytes;
            for (std::size_t l = 0; l < w.body.size(); ++l) {
                if (w.load_of[l] < 0) {
                    loop.line(w.body[l]);
                    continue;
                }
                const WideLoad& ld = w.loads[std::size_t(w.load_of[l])];
                if (cpx)
                    loop.line(fmt::format("const {0} {1} = {0}_make({2}.x, {2}.y);", ld.type, ld.temp, word(ld.ptr)));
                else
                    loop.line(
                        shift ? fmt::format("const {0} {1} = ({0})({2}.{3} >> {4});", ld.type, ld.temp, word(ld.ptr),
                                            field, shift)
                              : fmt::format("const {0} {1} = ({0}){2}.{3};", ld.type, ld.temp, word(ld.ptr), field));
            }
            loop.line(w.value);
            loop.line(fmt::format("xgpu_l{} = {};", k,
                                  narrow_map ? vector_of->narrow_map
                                  : narrow   ? fmt::format("({})({})", dev(*narrow), s.map)
                                             : s.map));
            loop.close();
        }
        loop.line(narrow ? fmt::format("{0} = xgpu_reduce({0}, (ACC){1});", accumulator(u), pair(0, lanes, true))
                         : fmt::format("{0} = xgpu_reduce({0}, {1});", accumulator(u), pair(0, lanes, false)));
        loop.close();
    };
    loop.open(
        fmt::format("for (; xgpu_b + {} * stride < xgpu_wides; xgpu_b += {} * stride)", shape.items - 1, shape.items));
    for (unsigned u = 0; u < shape.items; ++u)
        step(u);
    loop.close();
    if (shape.items > 1) {
        loop.open("for (; xgpu_b < xgpu_wides; xgpu_b += stride)");
        step(0);
        loop.close();
    }
    // The head before the first 16-byte boundary here; the general loops below take the tail.
    loop.open("if (j < xgpu_head)").line("const uint64_t i = j; (void)i;");
    for (const auto& l : w.body)
        loop.line(l);
    loop.line(w.value).line(fmt::format("acc = xgpu_reduce(acc, {});", s.map)).close();
    loop.line(fmt::format("j += xgpu_head + xgpu_wides * {};", lanes));
    if (!same.empty()) loop.close();
    loop.close();
    std::string text = loop.str();
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
}

// One program with three kernels (kernels/reduction.kernel): stage 1 (or the only stage), stage 2,
// and along an axis. `params` are the map's parameters (comma-terminated), `prologue` runs once per
// work-item, `element` computes `v` from `i`.
std::string reduction_source(const ReduceSpec& s, const LaunchShape& shape, const std::string& params,
                             const std::string& prologue, const std::string& element, const std::string& preamble,
                             const std::optional<VectorOf>& vector_of = std::nullopt,
                             const std::optional<ComplexStream>& stream = std::nullopt, DType stream_type = {},
                             const std::optional<WideMap>& wide = std::nullopt) {
    const std::string wg = std::to_string(shape.group_size), accs = std::to_string(shape.items);
    codegen::Source accumulators(1), steps(2);
    if (shape.items > 1) {
        std::string names;
        for (unsigned a = 1; a < shape.items; ++a)
            names += fmt::format("{}{} = xgpu_neutral()", a > 1 ? ", " : "", accumulator(a));
        accumulators.line("ACC " + names + ";");
    }
    for (unsigned a = 0; a < shape.items; ++a) {
        steps.open().line(a == 0 ? "const uint64_t i = j; (void)i;"
                                 : fmt::format("const uint64_t i = j + {} * XGPU_STEP;", a));
        steps.raw(element);
        steps.line(fmt::format("{0} = xgpu_reduce({0}, {1});", accumulator(a), s.map)).close();
    }
    const std::string combine = shape.items > 1 ? "    acc = " + pairwise(0, shape.items) + ";\n" : "";
    const VectorPath vectors = stream && shape.blocked ? complex_vector_path(*stream, stream_type, shape)
                                                       : vector_path(s, vector_of, shape, element);
    const std::string wide_text = wide && !shape.blocked ? wide_loop(s, *wide, shape, vector_of) : std::string();
    return codegen::fill("reduction.kernel", {{"array_h", codegen::kernel_file("array.h")},
                                              {"preamble", preamble},
                                              {"declarations", s.declarations},
                                              {"wg", wg},
                                              {"chunked", shape.blocked ? "1" : "0"},
                                              {"shuffle", s.shuffle ? "1" : "0"},
                                              {"accs", accs},
                                              {"accumulators", accumulators.str()},
                                              {"steps", steps.str()},
                                              {"combine", combine},
                                              {"acc", s.acc_type},
                                              {"neutral", s.neutral},
                                              {"reduce", s.reduce},
                                              {"vector_functions", vectors.functions},
                                              {"vector_loop", vectors.loop},
                                              {"wide_loop", wide_text},
                                              {"params", params},
                                              {"prologue", prologue},
                                              {"element", element},
                                              {"map", s.map},
                                              {"out", dev(s.out)},
                                              {"finish", s.finish}});
}

// The program's kernels, looked up as a launch needs them (stage 2 only when there are several
// groups): the warm path of a small reduction looks up one.
// The kernels of one generated reduction program, looked up by name: the program's key is built
// once, and each lookup appends the kernel's name to it in place.
template <class MakeSource> class Kernels {
public:
    Kernels(const Context& ctx, std::string key, MakeSource source)
        : ctx_(ctx), key_(std::move(key)), base_(key_.size()), source_(std::move(source)) {
        key_.reserve(base_ + 24);
    }
    Kernel operator()(std::string_view name) {
        key_.resize(base_);
        key_ += '|';
        key_ += name;
        return generated_kernel(ctx_, key_, source_, name);
    }

private:
    const Context& ctx_;
    std::string key_;
    std::size_t base_;
    MakeSource source_;
};

// Runs stages 1 and 2 over `n` elements with `args` (the map's arguments) into `out`.
// The result is mirrored in mapped host memory where the device has it (core/src/mirror.hpp).
template <class GetKernel>
void run_all(const Context& ctx, GetKernel&& k, const Geometry& g, const ReduceSpec& s, std::vector<KernelArg> args,
             std::uint64_t n, ArrayDesc& out) {
    const bool final = g.groups == 1;
    // One group writes the result itself and no partials (the small reductions whose latency counts).
    Buffer partial = final ? out.buffer : ctx.pool().allocate(g.groups * s.acc_bytes);
    const std::int64_t off = out.offset;
    const std::uint64_t groups = g.groups;
    const Queue q = ctx.current_queue();
    // The modes of kernels/reduction.kernel's stage 1.
    const std::uint32_t mode = final ? 1 : g.last_group_combines ? 2 : 0;
    const std::size_t out_bytes = info(s.out).size;
    std::shared_ptr<HostMirror> mirror = out_bytes <= mirror_bytes ? reserve_mirror(ctx) : nullptr;
    const Buffer& mirror_to = mirror ? mirror_buffer(*mirror) : out.buffer;
    const std::int64_t mirror_off = mirror ? std::int64_t(mirror_offset(*mirror) / out_bytes) : off;
    args.push_back(make_arg(partial));
    args.push_back(make_arg(out.buffer));
    args.push_back(make_arg(off));
    args.push_back(make_arg(mirror_to));
    args.push_back(make_arg(mirror_off));
    args.push_back(make_arg(n));
    args.push_back(make_arg(g.chunk));
    args.push_back(make_arg(mode));
    args.push_back(make_arg(mode == 2 ? group_ticket(q) : partial)); // unused unless mode 2
    const std::size_t wg = g.shape.group_size;
    k("xgpu_reduce_stage1").launch_args(q, Grid{g.groups * wg, wg}, args);
    if (mode == 0)
        k("xgpu_reduce_stage2").launch(q, Grid{wg, wg}, partial, groups, out.buffer, off, mirror_to, mirror_off);
    if (mirror) {
        seal_mirror(*mirror, out.buffer, std::size_t(off) * out_bytes, out_bytes, q);
        out.mirror = std::move(mirror);
    }
}

// A copy of the tree whose arrays are seen with their axes permuted (`perm` over the
// broadcast shape of `ndim` dimensions).
NodePtr permute(const Node& n, const std::vector<std::size_t>& perm) {
    auto c = std::make_shared<Node>(n);
    if (n.op == Node::Op::array) {
        ArrayDesc a = n.array;
        const std::size_t nd = perm.size(), missing = nd - a.shape.size();
        a.shape.insert(a.shape.begin(), missing, 1);
        a.strides.insert(a.strides.begin(), missing, 0);
        ArrayDesc p = a;
        for (std::size_t d = 0; d < nd; ++d) {
            p.shape[d] = a.shape[perm[d]];
            p.strides[d] = a.strides[perm[d]];
        }
        c->array = p;
    }
    if (n.a) c->a = permute(*n.a, perm);
    if (n.b) c->b = permute(*n.b, perm);
    if (n.c) c->c = permute(*n.c, perm);
    return c;
}

bool needs_identity(ReduceOp op) {
    return op == ReduceOp::min || op == ReduceOp::max || op == ReduceOp::argmin || op == ReduceOp::argmax;
}

} // namespace

ArrayDesc reduce_all(const Node& expr, ReduceOp op, std::optional<DType> out_type) {
    const Context& ctx = node_context(expr);
    const Shape shape = result_shape(expr);
    const std::uint64_t n = shape_size(shape);
    const ReduceSpec* spec = &cached_spec(op, expr.type);
    ReduceSpec converted;
    if (out_type && *out_type != spec->out) { // numpy.dot's type: the accumulator converted at the end
        converted = *spec;
        converted.name += fmt::format("|to_{}", name(*out_type));
        converted.finish = *out_type == DType::bool_ ? "(uint8_t)(a != 0)" : "a";
        converted.out = *out_type;
        spec = &converted;
    }
    if (n == 0 && needs_identity(op))
        throw InvalidArgument(fmt::format("xgpu: {} of an empty array: the operation has no identity", spec->name));
    register_shape_problems();
    const Geometry g = geometry(ctx, codegen::sized_launch_shape(ctx, KernelFamily::reduction, expr.type, n), n);
    ArrayDesc out = make_array(ctx, spec->out, {}, Order::C);
    codegen::Lowered map = lower_map(expr, ctx, shape, codegen::Want::key_and_arguments);
    Kernels k(ctx, "reduce|" + spec->name + '|' + map.key + '|' + g.shape.key(), [&] {
        const codegen::Lowered code = lower_map(expr, ctx, shape, codegen::Want::everything);
        return reduction_source(*spec, g.shape, code.params, "", element_code(code), "", vector_type(op, expr.type),
                                complex_stream(op, expr.type, code), expr.type,
                                g.shape.blocked ? std::nullopt : wide_map(code));
    });
    run_all(ctx, k, g, *spec, std::move(map.args), n, out);
    return out;
}

ArrayDesc reduce_axis(const Node& expr, ReduceOp op, std::size_t axis) {
    const Shape shape = result_shape(expr);
    if (axis >= shape.size())
        throw InvalidArgument(
            fmt::format("xgpu: axis {} is out of range for an array of shape {}", axis, to_string(shape)));
    return reduce_axes(expr, op, {axis}, false);
}

std::size_t normalise_axis(std::int64_t axis, std::size_t ndim, const char* what) {
    const auto n = std::int64_t(ndim);
    if (axis < -n || axis >= n)
        throw ShapeError(
            fmt::format("xgpu: {}: axis {} is out of bounds for an array of dimension {}", what, axis, ndim));
    return std::size_t(axis < 0 ? axis + n : axis);
}

std::vector<std::size_t> normalise_axes(std::span<const std::int64_t> axes, std::size_t ndim, bool all) {
    std::vector<std::size_t> out;
    if (all) {
        for (std::size_t d = 0; d < ndim; ++d)
            out.push_back(d);
        return out;
    }
    for (const std::int64_t a : axes) {
        const std::size_t d = normalise_axis(a, ndim, "a reduction");
        if (std::find(out.begin(), out.end(), d) != out.end())
            throw ShapeError(fmt::format("xgpu: axis {} is repeated", a));
        out.push_back(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

ArrayDesc reduce_axes(const Node& expr, ReduceOp op, std::vector<std::size_t> axes, bool keepdims,
                      std::optional<DType> out_type) {
    const Context& ctx = node_context(expr);
    const Shape shape = result_shape(expr);
    std::sort(axes.begin(), axes.end());
    for (std::size_t k = 0; k < axes.size(); ++k)
        if (axes[k] >= shape.size() || (k && axes[k] == axes[k - 1]))
            throw InvalidArgument(
                fmt::format("xgpu: axes out of range or repeated for an array of shape {}", to_string(shape)));
    const bool arg = op == ReduceOp::argmin || op == ReduceOp::argmax;
    if (arg && axes.size() != 1 && shape.size() != 0)
        throw InvalidArgument("xgpu: argmin and argmax take one axis (or none: of the flattened array)");
    Shape out_shape, kept;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const bool reduced = std::binary_search(axes.begin(), axes.end(), d);
        if (!reduced) kept.push_back(shape[d]);
        if (!reduced || keepdims) out_shape.push_back(reduced ? 1 : shape[d]);
    }
    if (kept.empty()) // every axis: the whole reduction
        return reshape(reduce_all(expr, op, out_type), out_shape);
    // The cached spec as it is, a copy only where the place or the result type differ.
    const ReduceSpec* cached = &cached_spec(op, expr.type);
    ReduceSpec changed;
    if (arg || (out_type && *out_type != cached->out)) {
        changed = *cached;
        if (arg) { // the place along the reduced axis, not the flat index
            changed.map = "xgpu_arg_make(v, (int64_t)XGPU_POS)";
            changed.name += "|pos";
        }
        if (out_type && *out_type != changed.out) {
            changed.name += fmt::format("|to_{}", name(*out_type));
            changed.finish = *out_type == DType::bool_ ? std::string("(uint8_t)(a != 0)")
                                                       : fmt::format("({})({})", dev(*out_type), changed.finish);
            changed.out = *out_type;
        }
        cached = &changed;
    }
    const ReduceSpec& spec = *cached;
    std::uint64_t m = 1;
    for (const std::size_t d : axes)
        m *= shape[d];
    const std::uint64_t rows = shape_size(kept);
    if (m == 0 && rows > 0 && needs_identity(op))
        throw InvalidArgument(fmt::format("xgpu: {} along an empty axis: the operation has no identity", spec.name));
    register_shape_problems();
    ArrayDesc out = make_array(ctx, spec.out, kept, Order::C);
    if (rows == 0) return reshape(out, out_shape);
    // The innermost axis reduced: a work-group a row of the kept axes, reading along the reduced
    // ones (kept axes first, then the reduced); else a work-item a column, reading the reduced axes
    // row after row (reduced first, then the kept), consecutive work-items on consecutive elements.
    const bool rows_kernel = axes.back() + 1 == shape.size();
    std::vector<std::size_t> perm;
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t d = 0; d < shape.size(); ++d)
            if (std::binary_search(axes.begin(), axes.end(), d) == (rows_kernel ? pass == 1 : pass == 0))
                perm.push_back(d);
    Shape permuted;
    for (const std::size_t d : perm)
        permuted.push_back(shape[d]);
    const LaunchShape shape_of_launch = codegen::sized_launch_shape(ctx, KernelFamily::reduction, expr.type, m);
    const NodePtr p = permute(expr, perm);
    codegen::Lowered map = lower_map(*p, ctx, permuted, codegen::Want::key_and_arguments);
    Kernels k(ctx, "reduce|" + spec.name + '|' + map.key + '|' + shape_of_launch.key(), [&] {
        const codegen::Lowered code = lower_map(*p, ctx, permuted, codegen::Want::everything);
        return reduction_source(spec, shape_of_launch, code.params, "", element_code(code), "",
                                vector_type(op, expr.type));
    });
    std::vector<KernelArg> args = std::move(map.args);
    const std::int64_t off = out.offset;
    const Queue q = ctx.current_queue();
    if (rows_kernel) {
        args.push_back(make_arg(out.buffer));
        args.push_back(make_arg(off));
        args.push_back(make_arg(m));
        const std::size_t wg = shape_of_launch.group_size;
        k("xgpu_reduce_axis").launch_args(q, Grid{std::size_t(rows) * wg, wg}, args);
    } else {
        // Enough blocks of columns (kernels/reduction.kernel's XGPU_COLUMN_BLOCK: 64 columns a
        // work-item in the chunked loop CPUs run, 1 on GPUs) and chunks of rows in flight to fill
        // the device: chunks of at least 16 rows, until blocks x chunks reach 2048 work-items per
        // compute unit on GPUs (64 on CPUs).
        const DeviceInfo& d = ctx.device().info();
        const std::uint64_t wg = codegen::stream_group(d), cols = rows, block = shape_of_launch.blocked ? 64 : 1;
        const std::uint64_t items = (cols + block - 1) / block;
        const std::uint64_t want =
            std::uint64_t(std::max(1u, d.compute_units)) * (d.type == DeviceType::cpu ? 64 : 2048);
        const std::uint64_t chunks_wanted =
            std::clamp<std::uint64_t>((want + items - 1) / items, 1, std::max<std::uint64_t>(m / 16, 1));
        const std::uint64_t per_chunk = std::max<std::uint64_t>((m + chunks_wanted - 1) / chunks_wanted, 1);
        const std::uint64_t chunks =
            std::min<std::uint64_t>(std::max<std::uint64_t>((m + per_chunk - 1) / per_chunk, 1), 65535);
        const std::uint64_t rows_per_chunk = (m + chunks - 1) / chunks;
        const Buffer partial = chunks > 1 ? ctx.pool().allocate(chunks * cols * spec.acc_bytes) : out.buffer;
        args.push_back(make_arg(partial));
        args.push_back(make_arg(out.buffer));
        args.push_back(make_arg(off));
        args.push_back(make_arg(cols));
        args.push_back(make_arg(m));
        args.push_back(make_arg(std::max<std::uint64_t>(rows_per_chunk, 1)));
        const std::size_t groups = std::size_t((items + wg - 1) / wg), final_groups = std::size_t((cols + wg - 1) / wg);
        k("xgpu_reduce_columns").launch_args(q, Grid{Range(groups * wg, std::size_t(chunks)), Range(wg, 1)}, args);
        if (chunks > 1)
            k("xgpu_reduce_columns_final")
                .launch(q, Grid{final_groups * wg, std::size_t(wg)}, partial, chunks, out.buffer, off, cols);
    }
    return keepdims ? reshape(out, out_shape) : out;
}

ArrayDesc moment(const Node& expr, Moment m, std::vector<std::size_t> axes, bool keepdims, double ddof) {
    const Shape shape = result_shape(expr);
    double count = 1;
    for (const std::size_t d : axes)
        count *= double(d < shape.size() ? shape[d] : 1);
    const DType t = expr.type, mt = mean_type(t), rt = real_type(mt);
    require_fp64(node_context(expr), mt);
    const auto divided = [&](const ArrayDesc& s, double by, DType type) {
        ArrayDesc out = make_array(s.context, type, s.shape, Order::C);
        const double v = by;
        evaluate(*op_node("div", type, array_node(s), scalar_node(type, &v, DType::float64)), out);
        return out;
    };
    if (m == Moment::mean) return divided(reduce_axes(expr, ReduceOp::sum, axes, keepdims, mt), count, mt);
    // Two passes, as numpy: the mean, then the mean square of the deviations from it.
    const ArrayDesc mean = moment(expr, Moment::mean, axes, true);
    const NodePtr x = std::make_shared<Node>(expr);
    const NodePtr dev = op_node("sub", mt, x, array_node(mean));
    const NodePtr sq = kind(mt) == Kind::complex ? op_node("mul", rt, op_node("abs", rt, dev), op_node("abs", rt, dev))
                                                 : op_node("mul", rt, dev, dev);
    const ArrayDesc var = divided(reduce_axes(*sq, ReduceOp::sum, axes, keepdims, rt), std::max(count - ddof, 0.0), rt);
    if (m == Moment::var) return var;
    ArrayDesc out = make_array(var.context, rt, var.shape, Order::C);
    evaluate(*op_node("sqrt", rt, array_node(var)), out);
    return out;
}

namespace {
// The names kernels/reduction.kernel declares where a ReductionKernel's map is evaluated (the
// kernels' parameters and locals, and the accumulators a1 ...): an argument cannot take one.
std::vector<std::string> reduction_names() {
    std::vector<std::string> names{"partial", "out",        "out_offset", "mirror", "mirror_offset", "n",
                                   "chunk",   "mode",       "ticket",     "final",  "scratch",       "lid",
                                   "acc",     "first",      "last",       "j",      "stride",        "m",
                                   "row",     "last_group", "groups",     "ACC"};
    for (unsigned a = 1; a < 16; ++a)
        names.push_back(accumulator(a));
    return names;
}
} // namespace

ReductionKernelImpl::ReductionKernelImpl(const Context& ctx, DType type, const std::string& neutral,
                                         const std::string& reduce, const std::string& map,
                                         const std::string& arguments, const std::string& name,
                                         const std::string& preamble)
    : ctx_(ctx), args_(arguments, name, reduction_names()) {
    args_.note_indexing(map);
    require_fp64(ctx, type);
    spec_.name = name;
    spec_.acc_type = dev(type);
    spec_.neutral = neutral;
    spec_.reduce = reduce;
    spec_.map = "xgpu_mapped";
    spec_.finish = "a";
    spec_.out = type;
    spec_.acc_bytes = info(type).size;
    spec_.shuffle = false; // a user's operator may not be one a shuffle can carry
    detail::register_shape_problems();
    shape_ = launch_shape(ctx, KernelFamily::reduction, type);
    const std::string source =
        reduction_source(spec_, shape_, args_.params(), args_.rebind(),
                         fmt::format("        const {} xgpu_mapped = {};\n", dev(type), map), preamble);
    auto program = ctx.compile(source);
    stage1_ = program.kernel("xgpu_reduce_stage1");
    stage2_ = program.kernel("xgpu_reduce_stage2");
}

ArrayDesc ReductionKernelImpl::run(std::int64_t n, const std::vector<BoundArg>& args) const {
    std::vector<KernelArg> kargs;
    const std::int64_t size = args_.pack(ctx_, args, kargs);
    if (n < 0) n = size;
    if (n < 0) throw InvalidArgument("xgpu: ReductionKernel without an array argument needs a size: use over(n, ...)");
    if (size >= 0 && n > size)
        throw InvalidArgument(fmt::format("xgpu: ReductionKernel '{}': over({}) runs past the end of its first array "
                                          "argument ({} elements)",
                                          spec_.name, n, size));
    args_.check_reach(args, std::uint64_t(n));
    ArrayDesc out = make_array(ctx_, spec_.out, {}, Order::C);
    const Geometry g = geometry(ctx_, shape_, std::uint64_t(n));
    run_all(
        ctx_, [this](std::string_view name) { return name == "xgpu_reduce_stage1" ? stage1_ : stage2_; }, g, spec_,
        std::move(kargs), std::uint64_t(n), out);
    return out;
}

} // namespace xgpu::detail
