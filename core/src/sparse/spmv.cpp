// SpMV: the format names, the planner (which format and launch shape for a matrix on its device),
// the checks every product passes, the dispatch to a format's launcher, and the CSR launcher
// (scalar and vector, kernels/spmv_csr.kernel). The other formats launch from their own files
// (merge.cpp, sell.cpp, packeted.cpp) through the pieces in spmv.hpp.
#include "spmv.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "../codegen/elementwise.hpp"
#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/operations.hpp"
#include "../codegen/skeleton.hpp"
#include "../env.hpp"
#include "../tune/database.hpp"
#include "packeted.hpp"
#include "xgpu/random.hpp"
#include "xgpu/tune.hpp"

namespace xgpu::sparse {

namespace {

// Every format with its name, in the enum's order.
constexpr std::array<Format, 6> all_formats = {Format::automatic,  Format::csr_scalar, Format::csr_vector,
                                               Format::merge_path, Format::sell,       Format::packeted};
constexpr std::array<std::string_view, 6> format_names = {"automatic",  "csr_scalar", "csr_vector",
                                                          "merge_path", "sell",       "packeted"};

} // namespace

std::span<const Format> formats() {
    return all_formats;
}

const char* name(Format f) {
    const auto i = std::size_t(f);
    return i < format_names.size() ? format_names[i].data() : "unknown";
}

Format parse_format(std::string_view value) {
    for (std::size_t i = 0; i < format_names.size(); ++i)
        if (xgpu::detail::env::equal_nocase(value, format_names[i])) return all_formats[i];
    throw InvalidArgument(
        fmt::format("xgpu: '{}' is not an SpMV format: {} (in any case)", value, fmt::join(format_names, ", ")));
}

namespace detail {

namespace {

template <class T> std::string ops(std::string_view what) {
    constexpr DType t = dtype_v<T>;
    const char* d = codegen::device_type(t);
    if constexpr (std::is_arithmetic_v<T>) {
        if (what == "shuffle") return fmt::format("XGPU_SHUFFLE_DOWN_T({}, v, o)", d);
        return what == "zero" ? fmt::format("({})0", d) : what == "add" ? "a + b" : "a * b";
    } else {
        if (what == "shuffle") {
            const char* r = codegen::device_type(dtype_v<typename T::value_type>);
            return fmt::format("{0}_make(XGPU_SHUFFLE_DOWN_T({1}, v.re, o), XGPU_SHUFFLE_DOWN_T({1}, v.im, o))", d, r);
        }
        return what == "zero" ? fmt::format("{}_make(0, 0)", d) : fmt::format("{}_{}(a, b)", d, what);
    }
}

} // namespace

template <Value T, Index I> std::string spmv_support() {
    return codegen::fill("spmv.h", {{"array_h", codegen::kernel_file("array.h")},
                                    {"value", codegen::device_type(dtype_v<T>)},
                                    {"index", codegen::device_type(dtype_v<I>)},
                                    {"zero", ops<T>("zero")},
                                    {"add", ops<T>("add")},
                                    {"mul", ops<T>("mul")},
                                    {"shuffle", ops<T>("shuffle")}});
}

template <Value T, Index I> std::string spmv_key(const char* family) {
    return fmt::format("spmv_{}|{}|{}", family, name(dtype_v<T>), name(dtype_v<I>));
}

unsigned group_size(const Context& ctx) {
    return codegen::stream_group(ctx.device().info());
}

// Kernel `name` of the CSR program (kernels/spmv_csr.kernel) for work-groups of wg, `lanes`
// work-items a row and `rows` rows a work-item. Its key is built by appends: a solver asks for it
// every iteration (formatting took a good part of the host's time per call).
template <Value T, Index I>
Kernel csr_kernel(const Context& ctx, unsigned wg, unsigned lanes, unsigned rows, const char* name) {
    // The fused dot product's kernels are in the program where they can be: real values, one lane.
    const bool dot = std::is_floating_point_v<T> && lanes == 1;
    unsigned half = 1;
    while (half < wg)
        half *= 2;
    static const std::string family = spmv_key<T, I>("csr");
    std::string key = family;
    key.append("|g").append(std::to_string(wg)).append("l").append(std::to_string(lanes));
    key.append("r").append(std::to_string(rows)).append(dot ? "d|" : "|").append(name);
    return xgpu::detail::generated_kernel(
        ctx, key,
        [&] {
            return codegen::fill("spmv_csr.kernel", {{"spmv_h", spmv_support<T, I>()},
                                                     {"group_size", std::to_string(wg)},
                                                     {"lanes", std::to_string(lanes)},
                                                     {"rows", std::to_string(rows)},
                                                     {"dot", dot ? "1" : "0"},
                                                     {"half", std::to_string(half / 2)}});
        },
        name);
}

template <Value T, Index I> void spmv_csr(const SpmvCall<T, I>& c, Array<T>* partial) {
    const Context& ctx = c.a.context();
    const SpmvPlan& plan = c.plan;
    const unsigned wg = std::max(group_size(ctx), plan.lanes);
    const Kernel k = csr_kernel<T, I>(ctx, wg, plan.lanes, plan.rows, partial ? "xgpu_spmv_csr_dot" : "xgpu_spmv_csr");
    const std::uint64_t rows = std::uint64_t(c.a.rows()), per_group = std::uint64_t(wg) / plan.lanes * plan.rows;
    const std::uint32_t beta_zero = c.beta == T(0) ? 1 : 0;
    const Grid grid =
        partial ? Grid{partial->size() * wg, wg} : codegen::groups_grid((rows + per_group - 1) / per_group, wg);
    const auto& a = c.a;
    if (partial)
        k.launch(ctx.current_queue(), grid, a.row_ptr(), a.col_idx(), a.values(), c.x, c.y, c.alpha, c.beta, beta_zero,
                 rows, *partial);
    else
        k.launch(ctx.current_queue(), grid, a.row_ptr(), a.col_idx(), a.values(), c.x, c.y, c.alpha, c.beta, beta_zero,
                 rows);
}

template <Value T, Index I>
void spmv_csr_rows(const Csr<T, I>& a, const Array<I>& at, const Array<T>& x, Array<T>& y, T alpha, T beta,
                   const Array<T>* d, Array<T>* partial) {
    const Context& ctx = a.context();
    const unsigned wg = group_size(ctx);
    const Kernel k = csr_kernel<T, I>(ctx, wg, 1, 1, "xgpu_spmv_csr_rows");
    const auto rows = std::uint64_t(a.rows());
    // With the dot: the work-groups of the fused product that wrote `partial`, one each.
    const std::uint64_t groups =
        partial ? partial->size() : std::clamp<std::uint64_t>((rows + wg - 1) / wg, 1, std::uint64_t(1) << 16);
    // A matrix without entries has no arrays to pass: its row pointers stand in (never read past).
    const Array<I>& col = a.nnz() > 0 ? a.col_idx() : a.row_ptr();
    const Array<T>& val = a.nnz() > 0 ? a.values() : x;
    k.launch(ctx.current_queue(), Grid{groups * wg, wg}, a.row_ptr(), col, val, at.size() > 0 ? at : a.row_ptr(), x, y,
             alpha, beta, std::uint32_t(beta == T(0) ? 1 : 0), rows, d ? *d : y, partial ? *partial : y,
             std::uint32_t(partial ? 1 : 0));
}

} // namespace detail

namespace {

// The vector width for rows of `mean` entries: the power of two at or above it, 2 to 32.
unsigned lanes_for(double mean) {
    unsigned lanes = 2;
    while (lanes < 32 && lanes < mean)
        lanes *= 2;
    return lanes;
}

template <Value T> Array<T> contiguous(const Array<T>& a) {
    return a.desc().is_c_contiguous() ? a : a.copy();
}

// Rows far longer than the mean (power-law degree distributions): what the automatic rule sends
// to the merge path, and one of the classes the tuning database files formats under.
bool uneven_rows(const RowStats& s) {
    return double(s.max) > 16 * s.mean && s.max > 64;
}

// Set while this thread tunes a format (its products name their format: no lookups).
thread_local bool tuning_format = false;

// The format the tuning database gives (family "spmv_format") per XGPU_AUTOTUNE, for matrices of
// these value and index types, this size bucket (nnz), mean row length (as a power of two), even
// or uneven rows and squareness; none: the automatic rule's `start`. Real values only. Looked up
// once per class, device and mode, and again only when the database changes.
template <Value T, Index I> std::optional<Format> tuned_format(const Csr<T, I>& a, Format start) {
    if constexpr (!std::is_floating_point_v<T>) {
        return std::nullopt;
    } else {
        const tune::Mode m = tune::mode();
        if (m == tune::Mode::off || tuning_format || a.nnz() == 0) return std::nullopt;
        const RowStats& s = a.row_stats();
        const bool square = a.rows() == a.cols();
        tune::Key key{"spmv_format", 1,
                      fmt::format("{},{},mean2^{},{}{}", xgpu::name(dtype_v<T>), xgpu::name(dtype_v<I>),
                                  tune::detail::size_bucket(std::uint64_t(std::max(1.0, std::round(s.mean)))),
                                  uneven_rows(s) ? "uneven" : "even", square ? "" : ",rectangular"),
                      std::uint64_t(a.nnz())};
        const Context& ctx = a.context();
        using MemoKey = std::tuple<const DeviceInfo*, std::string, int, int>;
        struct Memo {
            std::mutex mutex;
            std::map<MemoKey, std::pair<std::uint64_t, std::optional<Format>>> formats;
            std::vector<Device> devices; // keeps the DeviceInfo the keys point at alive
        };
        static Memo memo;
        const MemoKey mk{&ctx.device().info(), key.types, tune::detail::size_bucket(key.n), int(m)};
        const std::uint64_t generation = tune::detail::generation();
        {
            std::lock_guard lock(memo.mutex);
            const auto it = memo.formats.find(mk);
            if (it != memo.formats.end() && it->second.first == generation) return it->second.second;
        }
        tune::Space space;
        space.params = {{"format", {}}};
        for (Format f : formats())
            if (f != Format::automatic) space.params[0].values.push_back(std::int64_t(f));
        space.valid = [square](const tune::Point& p) { return square || Format(p.at("format")) != Format::packeted; };
        auto problem = [&a] {
            Philox gen(a.context(), 20261201);
            auto x = std::make_shared<Array<T>>(gen.uniform<T>({std::size_t(a.cols())}, T(-1), T(1)));
            auto y = std::make_shared<Array<T>>(empty<T>(a.context(), {std::size_t(a.rows())}));
            tune::Problem p;
            p.prepare = [&a, x, y](const tune::Point& pt) {
                const Format f = Format(pt.at("format"));
                return std::function<void()>([&a, x, y, f] { spmv(a, *x, *y, T(1), T(0), f); });
            };
            p.result = [y] {
                const std::vector<T> h = y->get();
                return std::vector<double>(h.begin(), h.end());
            };
            p.tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-10; // sums in another order
            return p;
        };
        // Small matrices are not worth tuning for: they take what the database has.
        const tune::Mode effective =
            (m == tune::Mode::on || m == tune::Mode::force) && a.nnz() < (1 << 16) ? tune::Mode::cached : m;
        tuning_format = true;
        tune::Selection sel;
        try {
            sel = tune::detail::select(effective, ctx, key, space, {{"format", std::int64_t(start)}}, problem, {});
        } catch (...) {
            tuning_format = false;
            throw;
        }
        tuning_format = false;
        std::optional<Format> f;
        if (sel.source != tune::Source::start) f = Format(sel.point.at("format"));
        std::lock_guard lock(memo.mutex);
        memo.formats[mk] = {tune::detail::generation(), f};
        memo.devices.push_back(ctx.device());
        return f;
    }
}

} // namespace

bool detail::format_forced() {
    return xgpu::detail::env::spmv_format(format_names).has_value();
}

template <Value T, Index I> SpmvPlan plan_spmv(const Csr<T, I>& a, Format f) {
    if (f == Format::automatic)
        if (const auto v = xgpu::detail::env::spmv_format(format_names)) f = parse_format(*v);
    const Context& ctx = a.context();
    const bool cpu = ctx.device().type() == DeviceType::cpu;
    const auto automatic = [&] {
        // CPUs run blocks of rows per work-item fastest. GPUs: a row per work-item while rows are
        // short and even (on 2-D Poisson far faster than 8 lanes a row; docs/performance.md has the
        // formats' measurements). Uneven rows, where a few rows are far longer than the mean
        // (power-law degree distributions: the longest row over 16 times the mean and over 64
        // entries): the merge path, whose work-items all do the same work however long the rows (a
        // vector of lanes sized from the mean would leave one warp walking the longest row while
        // the rest idle). Otherwise lanes share a row once rows are long, so each row's entries
        // stream in. (The uneven rule is Merrill and Garland's observation, not yet measured here
        // on a GPU.)
        const RowStats& s = a.row_stats();
        const bool short_even = s.mean <= 12 && double(s.max) <= 4 * s.mean + 16;
        const bool uneven = uneven_rows(s);
        return cpu || short_even || s.mean < 1.5 ? Format::csr_scalar
               : uneven                          ? Format::merge_path
                                                 : Format::csr_vector;
    };
    // Automatic: the tuning database's format for this class of matrix (per XGPU_AUTOTUNE; an
    // XGPU_SPMV_FORMAT set above goes first), else the rule.
    if (f == Format::automatic) {
        const Format rule = automatic();
        f = tuned_format(a, rule).value_or(rule);
    }
    // Packets hold a row's x entry beside its y entry: only square matrices have packets. Any
    // other runs what automatic picks for it, which the plan shows.
    if (f == Format::packeted && a.rows() != a.cols()) f = automatic();
    switch (f) {
    case Format::csr_vector: return {f, lanes_for(a.row_stats().mean), 1u};
    case Format::merge_path: return {f, 1u, 1u, detail::merge_shape<T, I>(ctx).items};
    case Format::sell: {
        SpmvPlan p{f, 1u, 1u};
        detail::sell_shape(ctx, p.chunk, p.sigma);
        return p;
    }
    case Format::packeted: {
        SpmvPlan p{f, 1u, 1u};
        const PacketOptions o = detail::packet_options(ctx, sizeof(T));
        p.threads = o.threads;
        p.packet_rows = std::int64_t(o.local_bytes / (2 * sizeof(T)));
        return p;
    }
    default: // A row per work-item; on CPUs a block of rows, so that each work-item streams its entries.
        return {Format::csr_scalar, 1u, cpu ? 32u : 1u};
    }
}

namespace {
// Every check of an spmv's operands, before any work: the matrix, the shapes, one context, no
// sharing of memory between y and x or the matrix.
template <Value T, Index I> void check_operands(const Csr<T, I>& a, const Array<T>& x_in, const Array<T>& y) {
    const Context& ctx = a.context();
    if (!ctx.impl()) throw InvalidArgument("xgpu: spmv with an empty matrix");
    if (x_in.empty() && a.cols() > 0) throw InvalidArgument("xgpu: spmv: x is an empty Array");
    if (y.empty() && a.rows() > 0) throw InvalidArgument("xgpu: spmv: y is an empty Array");
    if (x_in.size() != std::size_t(a.cols()) || y.size() != std::size_t(a.rows()))
        throw ShapeError(fmt::format("xgpu: spmv: a {}x{} matrix needs x of {} and y of {} elements; x has shape {} "
                                     "and y {}",
                                     a.rows(), a.cols(), a.cols(), a.rows(), to_string(x_in.shape()),
                                     to_string(y.shape())));
    if (a.rows() == 0) return;
    if (!(y.context() == ctx) || (a.cols() > 0 && !(x_in.context() == ctx)))
        throw InvalidArgument("xgpu: spmv: the matrix and the vectors belong to different contexts");
    if (xgpu::detail::may_share_memory(x_in.desc(), y.desc()))
        throw InvalidArgument("xgpu: spmv: y shares memory with x; pass a separate output");
    if (xgpu::detail::may_share_memory(a.values().desc(), y.desc()) ||
        xgpu::detail::may_share_memory(a.row_ptr().desc(), y.desc()))
        throw InvalidArgument("xgpu: spmv: y shares memory with the matrix");
}
} // namespace

template <Value T, Index I>
void spmv(const Csr<T, I>& a, const Array<T>& x_in, Array<T>& y, T alpha, T beta, Format f) {
    check_operands(a, x_in, y);
    if (a.rows() == 0) return;
    const Context& ctx = a.context();
    const SpmvPlan plan = plan_spmv(a, f);
    if (a.nnz() == 0) { // no entries: y = beta * y
        if (beta == T(0))
            y.fill(T(0));
        else
            y *= beta;
        return;
    }
    const Array<T> x = contiguous(x_in);
    Array<T> out = y.desc().is_c_contiguous() ? y : empty<T>(ctx, y.shape());
    if (beta != T(0) && !(out.desc().buffer == y.desc().buffer)) out.assign(y); // beta * y reads it
    const detail::SpmvCall<T, I> call{a, x, out, alpha, beta, plan};
    switch (plan.format) {
    case Format::merge_path: detail::spmv_merge(call); break;
    case Format::sell: detail::spmv_sell(call); break;
    case Format::packeted: detail::spmv_packeted(call); break;
    default: detail::spmv_csr<T, I>(call, nullptr); break;
    }
    if (!(out.desc().buffer == y.desc().buffer)) y.assign(out);
}

template <Value T, Index I>
void spmv(const Csr<T, I>& a, const Array<T>& x, Array<T>& y, const Array<T>& alpha, const Array<T>& beta, Format f) {
    check_operands(a, x, y);
    for (const auto& [s, what] : {std::pair{&alpha, "alpha"}, std::pair{&beta, "beta"}}) {
        if (s->empty() || s->size() != 1)
            throw InvalidArgument(fmt::format("xgpu: spmv: {} must be a device scalar (one element), not an array of "
                                              "shape {}",
                                              what, s->empty() ? std::string("(empty)") : to_string(s->shape())));
        if (!(s->context() == a.context()))
            throw InvalidArgument(fmt::format("xgpu: spmv: {} belongs to another context than the matrix", what));
    }
    if (a.rows() == 0) return;
    const Array<T> al = alpha.reshape({}), be = beta.reshape({});
    Array<T> t = empty<T>(a.context(), y.shape());
    spmv(a, x, t, T(1), T(0), f);
    // Where beta is 0, y is not part of the value (a NaN in it does not propagate).
    y.assign(where(be == T(0), al * t, al * t + be * y));
}

template <Value T, Index I> void Csr<T, I>::apply(const Array<T>& x, Array<T>& y) const {
    spmv(*this, x, y);
}
template <Value T, Index I> void Csr<T, I>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    spmv(*this, x, y, alpha, beta);
}

template <Value T, Index I> bool Csr<T, I>::fuses_dot(Format f) const {
    if constexpr (!std::is_floating_point_v<T>) {
        return false; // a solver's dot of complex vectors conjugates: not this kernel's
    } else {
        if (nnz() == 0) return false;
        const SpmvPlan plan = plan_spmv(*this, f);
        return plan.format == Format::csr_scalar && plan.lanes == 1;
    }
}

template <Value T, Index I>
bool Csr<T, I>::apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial, Format f) const {
    check_operands(*this, x, y);
    if (rows() != cols() || !fuses_dot(f) || !x.desc().is_c_contiguous() || !y.desc().is_c_contiguous()) return false;
    if (partial.empty() || !partial.desc().is_c_contiguous() || !(partial.context() == context()))
        throw InvalidArgument("xgpu: apply_dot: partial must be a contiguous Array on the matrix's context");
    if (partial.size() > (std::size_t(1) << 20))
        throw InvalidArgument(
            fmt::format("xgpu: apply_dot: {} partial sums asked for; at most 2^20 work-groups", partial.size()));
    if (xgpu::detail::may_share_memory(partial.desc(), x.desc()) ||
        xgpu::detail::may_share_memory(partial.desc(), y.desc()))
        throw InvalidArgument("xgpu: apply_dot: partial shares memory with x or y");
    const SpmvPlan plan = plan_spmv(*this, f);
    const detail::SpmvCall<T, I> call{*this, x, y, T(1), T(0), plan};
    detail::spmv_csr(call, &partial);
    return true;
}

template <Value T, Index I>
void spmv_rows(const Csr<T, I>& a, const Array<I>& at, const Array<T>& x, Array<T>& y, T alpha, T beta,
               const Array<T>* d, Array<T>* partial) {
    const auto fail = [](const std::string& why) { throw InvalidArgument("xgpu: spmv_rows: " + why); };
    if (at.size() != std::size_t(a.rows()) || x.size() != std::size_t(a.cols()))
        throw ShapeError(fmt::format("xgpu: spmv_rows: A is {} x {}: `at` needs {} elements (got {}) and x {} (got {})",
                                     a.rows(), a.cols(), a.rows(), at.size(), a.cols(), x.size()));
    if (bool(d) != bool(partial)) fail("d and partial come together");
    for (const xgpu::detail::ArrayDesc* v : {&at.desc(), &x.desc(), &y.desc()})
        if (!v->is_c_contiguous() || !(v->context == a.context()))
            fail("at, x and y must be contiguous and on the matrix's context");
    if (d) {
        if (!std::is_floating_point_v<T>) fail("the fused dot takes real values");
        if (d->size() != y.size() || !d->desc().is_c_contiguous() || !(d->context() == a.context()))
            fail(fmt::format("d must be contiguous, on the matrix's context, with y's {} elements", y.size()));
        if (partial->empty() || partial->size() > (std::size_t(1) << 20) || !partial->desc().is_c_contiguous() ||
            !(partial->context() == a.context()))
            fail("partial must be a contiguous Array of 1 to 2^20 elements on the matrix's context");
        if (xgpu::detail::may_share_memory(partial->desc(), y.desc())) fail("partial shares memory with y");
    }
    if (xgpu::detail::may_share_memory(x.desc(), y.desc())) fail("x and y share memory");
    if (a.rows() == 0 && !partial) return;
    detail::spmv_csr_rows(a, at, x, y, alpha, beta, d, partial);
}

template <Value T, Index I> OperatorForms<T> Csr<T, I>::forms() const {
    const Format first = plan_spmv(*this).format;
    std::vector<Format> chosen{first};
    for (const Format f : formats()) {
        const bool free = f == Format::csr_scalar || f == Format::csr_vector || f == Format::merge_path ||
                          (f != Format::automatic && build_ms(f));
        if (free && f != first && plan_spmv(*this, f).format == f) chosen.push_back(f);
    }
    OperatorForms<T> out;
    out.fixed = detail::format_forced();
    for (const Format f : chosen)
        out.forms.push_back({name(f), [a = *this, f](const Array<T>& x, Array<T>& y) { spmv(a, x, y, T(1), T(0), f); },
                             [a = *this, f](const Array<T>& x, Array<T>& y, Array<T>& partial) {
                                 return a.apply_dot(x, y, partial, f);
                             }});
    return out;
}

#define XGPU_SPMV_INSTANTIATE(T, I)                                                                                    \
    template SpmvPlan plan_spmv(const Csr<T, I>&, Format);                                                             \
    template void spmv(const Csr<T, I>&, const Array<T>&, Array<T>&, T, T, Format);                                    \
    template void spmv(const Csr<T, I>&, const Array<T>&, Array<T>&, const Array<T>&, const Array<T>&, Format);        \
    template void Csr<T, I>::apply(const Array<T>&, Array<T>&) const;                                                  \
    template void Csr<T, I>::apply(T, const Array<T>&, T, Array<T>&) const;                                            \
    template bool Csr<T, I>::apply_dot(const Array<T>&, Array<T>&, Array<T>&, Format) const;                           \
    template void spmv_rows(const Csr<T, I>&, const Array<I>&, const Array<T>&, Array<T>&, T, T, const Array<T>*,      \
                            Array<T>*);                                                                                \
    template bool Csr<T, I>::fuses_dot(Format) const;                                                                  \
    template OperatorForms<T> Csr<T, I>::forms() const;                                                                \
    template std::string detail::spmv_support<T, I>();                                                                 \
    template std::string detail::spmv_key<T, I>(const char*);                                                          \
    template void detail::spmv_csr(const detail::SpmvCall<T, I>&, Array<T>*);
XGPU_SPARSE_TEMPLATES(XGPU_SPMV_INSTANTIATE)
#undef XGPU_SPMV_INSTANTIATE

} // namespace xgpu::sparse
