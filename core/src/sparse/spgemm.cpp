// Sparse products on the device (kernels/spgemm.kernel): C = A * B by a symbolic pass (each row's
// entries counted), a scan to row pointers, and a numeric pass; transpose(A) by counts, tickets
// and a sort of each row; and a Csr made from device arrays, its diagonal, row statistics and
// checks computed there. Nothing of a matrix goes to the host: only sizes and counts come back.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "build.hpp"
#include "layout.hpp"
#include "spmv.hpp"
#include "xgpu/reduction.hpp"
#include "xgpu/scan.hpp"

namespace xgpu::sparse {

namespace detail {
namespace {

// Rows of A with more entries than this go to a work-group each (a step of a work-item's merge
// reads every cursor of its row).
constexpr std::int64_t long_row = 256;
// Rows with at least this many entries (cursors, each read by every step of a work-item's merge)
// and no more products than the sorting kernel holds are sorted by a work-group instead.
constexpr std::int64_t sort_min = 24;
// Rows with at least this many entries go to a team of work-items, where teams are warps (shorter
// rows leave most of a warp idle: the 5-point Laplacian's A * A is slower with this at 4).
constexpr std::int64_t team_min = 8;
std::atomic<ProductPath> product_path{ProductPath::automatic};
// The sorting kernel's slots per work-item (its keys and values stay within 48 KB of local memory).
template <Value T> constexpr unsigned sort_units = sizeof(T) > 8 ? 4 : 8;

// A power of two: the trees of the long rows' kernel halve it.
unsigned spgemm_group(const Context& ctx) {
    unsigned wg = 1;
    while (wg * 2 <= std::min(group_size(ctx), 256u))
        wg *= 2;
    return wg;
}

template <Value T, Index I> Kernel spgemm_kernel(const Context& ctx, const char* name) {
    const unsigned wg = spgemm_group(ctx);
    return xgpu::detail::generated_kernel(
        ctx, fmt::format("{}|g{}|{}", spmv_key<T, I>("spgemm"), wg, name),
        [&] {
            return codegen::fill("spgemm.kernel", {{"spmv_h", spmv_support<T, I>()},
                                                   {"group_size", std::to_string(wg)},
                                                   {"sort_units", std::to_string(sort_units<T>)},
                                                   {"imax", std::to_string(std::numeric_limits<I>::max())}});
        },
        name);
}

Grid rows_grid(const Context& ctx, std::uint64_t rows) {
    const unsigned wg = spgemm_group(ctx);
    return codegen::groups_grid((rows + wg - 1) / wg, wg);
}

// An exclusive scan of counts[0 .. rows) (counts has rows + 1 elements, the last ignored) into
// row pointers of type I; the total is returned, refused (naming `what`) where it does not fit I.
template <Index I> Array<I> row_pointers(const Array<std::int64_t>& counts, std::int64_t& total, const char* what) {
    const Context& ctx = counts.context();
    const std::size_t rows = counts.size() - 1;
    Array<std::int64_t> ptr = empty<std::int64_t>(ctx, {rows + 1});
    ScanKernel<std::int64_t>(ctx, "a + b", "0").exclusive(counts, ptr);
    total = read_one(ptr, rows);
    if (total > std::int64_t(std::numeric_limits<I>::max()))
        throw InvalidArgument(
            fmt::format("xgpu: sparse: {} has {} entries, more than {} indices hold: use int64 indices", what, total,
                        index_name<I>()));
    if constexpr (std::is_same_v<I, std::int64_t>)
        return ptr;
    else
        return ptr.template astype<I>();
}

// The rows whose flag is 1 (flags has rows + 1 elements, the last 0), listed in order.
template <Value T, Index I> Array<I> flagged_rows(const Array<std::int64_t>& flags) {
    const Context& ctx = flags.context();
    const auto rows = std::uint64_t(flags.size() - 1);
    std::int64_t n = 0;
    const Array<std::int64_t> at = row_pointers<std::int64_t>(flags, n, "the rows listed");
    Array<I> out = empty<I>(ctx, {std::size_t(n)});
    if (n > 0)
        spgemm_kernel<T, I>(ctx, "xgpu_long_list")
            .launch(ctx.current_queue(), rows_grid(ctx, rows), flags, at, out, rows);
    return out;
}

struct Facts {
    std::uint32_t unsorted = 0, invalid = 0;
};

} // namespace

void set_product_path(ProductPath p) {
    product_path.store(p);
}

// Each row's method (a work-item's merge, a work-group's merge, a work-group's sort, a team's
// merge) and the rows of the last three listed: made once, for both passes. Without the sort
// (cap 0) only rows without products are marked for it, and they need no work (their count is
// the zero it starts from).
template <Index I> struct Plan {
    Array<std::uint8_t> method;
    Array<I> long_rows, sorted_rows, team_rows, team8_rows, half_rows;
};

// Whether the dialect has a warp barrier and warp shuffles (XGPU_WARP_SYNC and
// XGPU_HAS_TYPED_SHUFFLE): CUDA's __syncwarp, and on OpenCL NVIDIA's from compute capability 7.0.
bool warp_shuffles(const Context& ctx) {
    return ctx.backend() == "cuda" || ctx.device().info().nv_compute_capability >= 70;
}
// The team kernel's work-items per row: a warp where there are warp barriers, else the
// work-group: as kernels/spgemm.kernel's XGPU_TEAM. Teams run by default only where they are
// warps of devices with independent thread scheduling (7.0 on).
unsigned team_size(const Context& ctx) {
    return warp_shuffles(ctx) && spgemm_group(ctx) % 32 == 0 ? 32 : spgemm_group(ctx);
}
// The longest rows whose cursors a work-item keeps in registers (at most 8): on GPUs (the 2-D
// Laplacian's A * A and A * P run much faster that way than with the cursors in global memory),
// not on CPUs (slower on PoCL), unless the tests ask for the work-item's merge everywhere.
std::int64_t short_rows(const Context& ctx) {
    return ctx.device().type() == DeviceType::cpu && product_path.load() != ProductPath::merge ? 0 : 8;
}
// Each of its work-items holds up to this many cursors (xgpu_spgemm_team), or twice as many
// (xgpu_spgemm_team8: rows of 129 to 256 entries, as 3-D Poisson's coarse Galerkin products have;
// a work-group's merge of each took far longer).
constexpr std::int64_t team_cursors = 4;

// The transpose's batch window (a quarter of the sorting kernel's capacity, which the product
// fills with one row's products), or 0 where rows are not sorted in local memory: on CPUs a
// work-group's barriers cost more than a work-item's merge or sort (PoCL: a Galerkin setup much
// slower), unless the tests ask for every row.
template <Value T> std::int64_t sort_window(const Context& ctx) {
    const ProductPath path = product_path.load();
    if (path == ProductPath::team || path == ProductPath::merge ||
        (path != ProductPath::sort && ctx.device().type() == DeviceType::cpu))
        return 0;
    return std::int64_t(sort_units<T> * spgemm_group(ctx)) / 4;
}

template <Value T, Index I> Plan<I> spgemm_plan(const Csr<T, I>& a, const Csr<T, I>& b) {
    const Context& ctx = a.context();
    const Queue q = ctx.current_queue();
    const auto rows = std::uint64_t(a.rows());
    Plan<I> plan;
    plan.method = empty<std::uint8_t>(ctx, {std::max<std::size_t>(rows, 1)});
    // The sort's keys hold a column in 32 bits.
    const ProductPath path = product_path.load();
    const std::int64_t cap = b.cols() < (std::int64_t(1) << 32) ? 4 * sort_window<T>(ctx) : 0;
    // Teams where a warp is one (a work-group's barriers cost more than they save elsewhere), or
    // everywhere for the tests.
    const bool teams =
        path == ProductPath::team ||
        (path == ProductPath::automatic && ctx.device().info().nv_compute_capability >= 70 && team_size(ctx) == 32);
    // The tests' teams take rows of up to one cursor a work-item with 4 and the longer ones with 8,
    // so that both kernels run on every device (and half warps, where they exist, the shortest).
    const std::int64_t team_max = !teams                      ? 0
                                  : path == ProductPath::team ? team_size(ctx)
                                                              : team_cursors * team_size(ctx);
    const std::int64_t team8_max = teams ? 2 * team_cursors * team_size(ctx) : 0;
    // Half a warp for rows of up to 24 entries where teams are warps with shuffles (2-D Poisson's
    // R * (A P) has rows of 9 to 24; 3-D's longer ones run faster a warp each); the tests' up to 16,
    // leaving the team of 4 the next ones.
    const std::int64_t half_max =
        teams && team_size(ctx) == 32 && warp_shuffles(ctx) ? (path == ProductPath::team ? 16 : 24) : 0;
    // Rows longer than a team holds go to a work-group's merge (a work-item's would read all their
    // cursors every step).
    const std::int64_t long_len = teams ? std::min(long_row, team8_max) : long_row;
    spgemm_kernel<T, I>(ctx, "xgpu_spgemm_method")
        .launch(q, rows_grid(ctx, rows), a.row_ptr(), a.col_idx(), b.row_ptr(), plan.method, rows, long_len,
                path == ProductPath::sort ? std::int64_t(1) : sort_min, cap,
                path == ProductPath::team ? std::int64_t(2) : team_min, team_max, team8_max, half_max);
    const auto list = [&](std::uint32_t which) {
        Array<std::int64_t> flags = empty<std::int64_t>(ctx, {std::size_t(rows) + 1});
        spgemm_kernel<T, I>(ctx, "xgpu_method_flags")
            .launch(q, rows_grid(ctx, rows + 1), plan.method, flags, rows, which);
        return flagged_rows<T, I>(flags);
    };
    if (a.row_stats().max > long_len) plan.long_rows = list(1);
    if (cap > 0) plan.sorted_rows = list(2);
    if (team_max > 0) plan.team_rows = list(3);
    if (team8_max > team_max && a.row_stats().max > team_max) plan.team8_rows = list(4);
    if (half_max > 0) plan.half_rows = list(5);
    return plan;
}

// The product's passes: counts (numeric false) or C's columns and values from its row pointers.
template <Value T, Index I>
void spgemm_pass(const Csr<T, I>& a, const Csr<T, I>& b, const Plan<I>& plan, const Array<I>& c_ptr,
                 const Array<I>& c_col, const Array<T>& c_val, const Array<std::int64_t>& count, bool numeric) {
    const Context& ctx = a.context();
    const Queue q = ctx.current_queue();
    const auto rows = std::uint64_t(a.rows());
    // One cursor and the column under it per entry of A (an element stands in where A has none).
    Array<I> cur = empty<I>(ctx, {std::max<std::size_t>(a.nnz(), 1)}), head = empty<I>(ctx, {cur.size()});
    const std::uint32_t pass = numeric ? 1 : 0;
    spgemm_kernel<T, I>(ctx, "xgpu_spgemm_rows")
        .launch(q, rows_grid(ctx, rows), a.row_ptr(), a.col_idx(), a.values(), b.row_ptr(), b.col_idx(), b.values(),
                cur, head, c_ptr, c_col, c_val, count, plan.method, rows, pass, short_rows(ctx));
    if (!plan.sorted_rows.empty())
        spgemm_kernel<T, I>(ctx, "xgpu_spgemm_sorted")
            .launch(q, codegen::groups_grid(std::uint64_t(plan.sorted_rows.size()), spgemm_group(ctx)), a.row_ptr(),
                    a.col_idx(), a.values(), b.row_ptr(), b.col_idx(), b.values(), c_ptr, c_col, c_val, count,
                    plan.sorted_rows, pass);
    const auto team_pass = [&](const Array<I>& list, const char* kernel, unsigned width) {
        if (list.empty()) return;
        const auto teams = std::uint64_t(spgemm_group(ctx) / width), listed = std::uint64_t(list.size());
        spgemm_kernel<T, I>(ctx, kernel)
            .launch(q, codegen::groups_grid((listed + teams - 1) / teams, spgemm_group(ctx)), a.row_ptr(), a.col_idx(),
                    a.values(), b.row_ptr(), b.col_idx(), b.values(), c_ptr, c_col, c_val, count, list, listed, pass);
    };
    team_pass(plan.half_rows, "xgpu_spgemm_half", 16);
    team_pass(plan.team_rows, "xgpu_spgemm_team", team_size(ctx));
    team_pass(plan.team8_rows, "xgpu_spgemm_team8", team_size(ctx));
    if (!plan.long_rows.empty())
        spgemm_kernel<T, I>(ctx, "xgpu_spgemm_long")
            .launch(q, codegen::groups_grid(std::uint64_t(plan.long_rows.size()), spgemm_group(ctx)), a.row_ptr(),
                    a.col_idx(), a.values(), b.row_ptr(), b.col_idx(), b.values(), cur, head, c_ptr, c_col, c_val,
                    count, plan.long_rows, pass);
}

} // namespace detail

template <Value T, Index I>
Csr<T, I>::Csr(const Context& ctx, std::int64_t rows, std::int64_t cols, Array<I> row_ptr, Array<I> col_idx,
               Array<T> values) {
    detail::check_fits<I>(rows, cols, values.size());
    if (row_ptr.size() != std::size_t(rows) + 1 || col_idx.size() != values.size())
        throw ShapeError(fmt::format("xgpu: sparse: Csr from device arrays: {} rows need {} row pointers (got {}), and "
                                     "columns and values must match ({} and {})",
                                     rows, rows + 1, row_ptr.size(), col_idx.size(), values.size()));
    for (const auto* a : {&row_ptr.desc(), &col_idx.desc()})
        if (!a->is_c_contiguous() || !(a->context == ctx))
            throw InvalidArgument("xgpu: sparse: Csr from device arrays: the arrays must be contiguous and on the "
                                  "matrix's context");
    if (!values.desc().is_c_contiguous() || !(values.context() == ctx))
        throw InvalidArgument("xgpu: sparse: Csr from device arrays: the arrays must be contiguous and on the "
                              "matrix's context");
    const auto first = detail::read_one(row_ptr, 0), last = detail::read_one(row_ptr, std::size_t(rows));
    if (first != 0 || std::size_t(last) != values.size())
        throw InvalidArgument(fmt::format("xgpu: sparse: Csr from device arrays: row pointers run from {} to {}; they "
                                          "must run from 0 to the {} entries",
                                          first, last, values.size()));
    // An array without elements has no buffer to pass: one element, never read, stands in.
    if (values.size() == 0) {
        col_idx = empty<I>(ctx, {1});
        values = empty<T>(ctx, {1});
    }
    const std::size_t nd = std::size_t(std::min(rows, cols));
    Array<T> diagonal = empty<T>(ctx, {std::max<std::size_t>(nd, 1)});
    Array<std::int64_t> len = empty<std::int64_t>(ctx, {std::max<std::size_t>(std::size_t(rows), 1)});
    Array<std::uint32_t> bad = zeros<std::uint32_t>(ctx, {2});
    if (rows > 0)
        detail::spgemm_kernel<T, I>(ctx, "xgpu_csr_facts")
            .launch(ctx.current_queue(), detail::rows_grid(ctx, std::uint64_t(rows)), row_ptr, col_idx, values,
                    diagonal, len, bad, std::uint64_t(rows), std::uint64_t(nd), std::int64_t(cols));
    const std::vector<std::uint32_t> facts = bad.get();
    if (facts[1])
        throw InvalidArgument(fmt::format("xgpu: sparse: Csr from device arrays: {} rows have falling row pointers or "
                                          "columns outside 0 .. {}",
                                          facts[1], cols - 1));
    if (rows > 0) {
        const Array<std::int64_t> l = len(Slice{0, rows});
        stats_.min = std::int64_t(min(l).get());
        stats_.max = std::int64_t(max(l).get());
        stats_.mean = double(last) / double(rows);
        const double squares = double(sum(l.astype<double>() * l.astype<double>()).get());
        stats_.stddev = std::sqrt(std::max(0.0, squares / double(rows) - stats_.mean * stats_.mean));
    }
    ctx_ = ctx;
    rows_ = rows;
    cols_ = cols;
    row_ptr_ = std::move(row_ptr);
    col_idx_ = last == 0 ? empty<I>(ctx, {0}) : std::move(col_idx);
    values_ = last == 0 ? empty<T>(ctx, {0}) : std::move(values);
    diagonal_ = nd == 0 ? empty<T>(ctx, {0}) : std::move(diagonal);
    canonical_ = facts[0] == 0;
    layouts_ = std::make_shared<detail::LayoutCache>();
}

template <Value T, Index I> Csr<T, I> multiply(const Csr<T, I>& a, const Csr<T, I>& b) {
    if (a.cols() != b.rows())
        throw ShapeError(
            fmt::format("xgpu: sparse: multiply: A is {} x {} and B {} x {}: A's columns must match B's rows", a.rows(),
                        a.cols(), b.rows(), b.cols()));
    if (!(a.context() == b.context()))
        throw InvalidArgument("xgpu: sparse: multiply: A and B live on different contexts");
    if (!b.canonical())
        throw InvalidArgument("xgpu: sparse: multiply: B's columns must rise strictly within every row (canonical "
                              "CSR, as the builders and the device products give)");
    const Context& ctx = a.context();
    const auto rows = std::size_t(a.rows());
    if (a.nnz() == 0 || b.nnz() == 0 || rows == 0)
        return Csr<T, I>(ctx, a.rows(), b.cols(), zeros<I>(ctx, {rows + 1}), empty<I>(ctx, {0}), empty<T>(ctx, {0}));
    Array<std::int64_t> count = zeros<std::int64_t>(ctx, {rows + 1});
    const Array<I> none_i = empty<I>(ctx, {1});
    const Array<T> none_t = empty<T>(ctx, {1});
    const detail::Plan<I> plan = detail::spgemm_plan(a, b);
    detail::spgemm_pass(a, b, plan, none_i, none_i, none_t, count, false);
    std::int64_t nnz = 0;
    Array<I> ptr = detail::row_pointers<I>(count, nnz, "the product A * B");
    Array<I> col = empty<I>(ctx, {std::max<std::size_t>(std::size_t(nnz), 1)});
    Array<T> val = empty<T>(ctx, {std::max<std::size_t>(std::size_t(nnz), 1)});
    if (nnz > 0) detail::spgemm_pass(a, b, plan, ptr, col, val, count, true);
    if (nnz == 0) {
        col = empty<I>(ctx, {0});
        val = empty<T>(ctx, {0});
    }
    return Csr<T, I>(ctx, a.rows(), b.cols(), std::move(ptr), std::move(col), std::move(val));
}

template <Value T, Index I> Csr<T, I> multiply_values(const Csr<T, I>& a, const Csr<T, I>& b, const Csr<T, I>& c) {
    if (a.cols() != b.rows() || c.rows() != a.rows() || c.cols() != b.cols())
        throw ShapeError(fmt::format("xgpu: sparse: multiply_values: A {} x {}, B {} x {} and C {} x {} do not match",
                                     a.rows(), a.cols(), b.rows(), b.cols(), c.rows(), c.cols()));
    const Context& ctx = a.context();
    Array<T> val = empty<T>(ctx, {c.nnz()});
    if (c.nnz() > 0) {
        Array<std::int64_t> count = empty<std::int64_t>(ctx, {std::size_t(a.rows()) + 1});
        Array<I> col = empty<I>(ctx, {c.nnz()}); // the same columns again
        detail::spgemm_pass(a, b, detail::spgemm_plan(a, b), c.row_ptr(), col, val, count, true);
    }
    return Csr<T, I>(ctx, c.rows(), c.cols(), c.row_ptr(), c.col_idx(), std::move(val));
}

template <Value T, Index I> Csr<T, I> transpose(const Csr<T, I>& a) {
    const Context& ctx = a.context();
    const auto rows = std::uint64_t(a.rows()), cols = std::size_t(a.cols());
    if (a.nnz() == 0)
        return Csr<T, I>(ctx, a.cols(), a.rows(), zeros<I>(ctx, {cols + 1}), empty<I>(ctx, {0}), empty<T>(ctx, {0}));
    const Queue q = ctx.current_queue();
    Array<std::uint32_t> cnt = zeros<std::uint32_t>(ctx, {cols + 1});
    detail::spgemm_kernel<T, I>(ctx, "xgpu_transpose_count")
        .launch(q, detail::rows_grid(ctx, rows), a.row_ptr(), a.col_idx(), cnt, rows);
    std::int64_t nnz = 0;
    Array<I> ptr = detail::row_pointers<I>(cnt.astype<std::int64_t>(), nnz, "the transpose");
    Array<I> col = empty<I>(ctx, {a.nnz()});
    Array<T> val = empty<T>(ctx, {a.nnz()});
    cnt.fill(0);
    detail::spgemm_kernel<T, I>(ctx, "xgpu_transpose_fill")
        .launch(q, detail::rows_grid(ctx, rows), a.row_ptr(), a.col_idx(), a.values(), ptr, col, val, cnt, rows);
    // Each row sorted by column: on GPUs in batches of rows (a work-group each, in local memory)
    // and a work-group for each row longer than a batch's window, else a work-item per row.
    const std::int64_t window = detail::sort_window<T>(ctx);
    if (window > 0 && a.rows() < (std::int64_t(1) << 32)) {
        const auto batches = std::uint64_t((nnz + window - 1) / window);
        Array<std::int64_t> start = empty<std::int64_t>(ctx, {batches + 1});
        detail::spgemm_kernel<T, I>(ctx, "xgpu_sort_starts")
            .launch(q, detail::rows_grid(ctx, batches + 1), ptr, start, std::uint64_t(cols), batches, window);
        detail::spgemm_kernel<T, I>(ctx, "xgpu_sort_batched")
            .launch(q, codegen::groups_grid(batches, detail::spgemm_group(ctx)), ptr, col, val, start, window);
        if (std::int64_t(max(cnt(Slice{0, std::int64_t(cols)})).get()) > window) {
            const Array<I> list =
                detail::flagged_rows<T, I>(where(cnt > std::uint32_t(window), std::int64_t(1), std::int64_t(0)));
            detail::spgemm_kernel<T, I>(ctx, "xgpu_sort_long")
                .launch(q, codegen::groups_grid(std::uint64_t(list.size()), detail::spgemm_group(ctx)), ptr, col, val,
                        list);
        }
    } else {
        detail::spgemm_kernel<T, I>(ctx, "xgpu_sort_rows")
            .launch(q, detail::rows_grid(ctx, cols), ptr, col, val, std::uint64_t(cols));
    }
    return Csr<T, I>(ctx, a.cols(), a.rows(), std::move(ptr), std::move(col), std::move(val));
}

#define XGPU_SPGEMM_INSTANTIATE(T, I)                                                                                  \
    template Csr<T, I>::Csr(const Context&, std::int64_t, std::int64_t, Array<I>, Array<I>, Array<T>);                 \
    template Csr<T, I> multiply(const Csr<T, I>&, const Csr<T, I>&);                                                   \
    template Csr<T, I> multiply_values(const Csr<T, I>&, const Csr<T, I>&, const Csr<T, I>&);                          \
    template Csr<T, I> transpose(const Csr<T, I>&);
XGPU_SPARSE_TEMPLATES(XGPU_SPGEMM_INSTANTIATE)
#undef XGPU_SPGEMM_INSTANTIATE

} // namespace xgpu::sparse
