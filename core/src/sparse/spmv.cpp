// SpMV in CSR: one generated kernel per (value type, index type, lanes, work-group size) from
// kernels/spmv_csr.kernel; the format (scalar or vector, and the vector's width) is chosen from
// the matrix's row statistics and the device type.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "../codegen/elementwise.hpp"
#include "../codegen/generated.hpp"
#include "../codegen/operations.hpp"
#include "../codegen/skeleton.hpp"
#include "../env.hpp"
#include "xgpu/sparse.hpp"

namespace xgpu::sparse {

const char* name(Format f) {
    switch (f) {
    case Format::automatic: return "automatic";
    case Format::csr_scalar: return "csr_scalar";
    default: return "csr_vector";
    }
}

Format parse_format(std::string_view value) {
    for (Format f : {Format::automatic, Format::csr_scalar, Format::csr_vector}) {
        const std::string_view n = name(f);
        if (n.size() == value.size() && std::equal(n.begin(), n.end(), value.begin(), [](char a, char b) {
                return a == (b >= 'A' && b <= 'Z' ? char(b - 'A' + 'a') : b);
            }))
            return f;
    }
    throw InvalidArgument(fmt::format("xgpu: '{}' is not an SpMV format: automatic, csr_scalar or csr_vector", value));
}

namespace {

// The vector width for rows of `mean` entries: the power of two at or above it, 2 to 32.
unsigned lanes_for(double mean) {
    unsigned lanes = 2;
    while (lanes < 32 && lanes < mean)
        lanes *= 2;
    return lanes;
}

unsigned group_size(const Context& ctx) {
    const std::size_t max = ctx.device().info().max_work_group_size;
    return max && max < 256 ? unsigned(max) : 256u;
}

template <class T> std::string ops(const char* what) {
    constexpr DType t = dtype_v<T>;
    const char* d = codegen::device_type(t);
    if constexpr (std::is_arithmetic_v<T>) {
        const std::string_view w = what;
        return w == "zero" ? fmt::format("({})0", d) : w == "add" ? "a + b" : "a * b";
    } else {
        const std::string_view w = what;
        return w == "zero" ? fmt::format("{}_make(0, 0)", d) : fmt::format("{}_{}(a, b)", d, what);
    }
}

// Whether two arrays may touch the same bytes.
bool may_overlap(const detail::ArrayDesc& a, const detail::ArrayDesc& b) {
    return a.buffer && a.buffer == b.buffer;
}

template <Value T> Array<T> contiguous(const Array<T>& a) {
    return a.desc().is_c_contiguous() ? a : a.copy();
}

} // namespace

template <Value T, Index I> SpmvPlan plan_spmv(const Csr<T, I>& a, Format f) {
    if (f == Format::automatic) {
        if (const auto v = detail::env::value("XGPU_SPMV_FORMAT")) {
            try {
                f = parse_format(*v);
            } catch (const InvalidArgument&) {
                throw InvalidArgument(fmt::format("xgpu: XGPU_SPMV_FORMAT='{}' is not valid: automatic, csr_scalar "
                                                  "or csr_vector",
                                                  *v));
            }
        }
    }
    const bool cpu = a.context().device().type() == DeviceType::cpu;
    if (f == Format::automatic) {
        // CPUs run blocks of rows per work-item fastest. GPUs: a row per work-item while rows are
        // short and even (on the H200, 2-D Poisson 4096^2 f64: 3714 GB/s against 1317 for 8 lanes
        // a row); lanes share a row once rows are long or uneven, where one work-item's row would
        // hold up its neighbours.
        const RowStats& s = a.row_stats();
        const bool short_even = s.mean <= 12 && double(s.max) <= 4 * s.mean + 16;
        f = cpu || short_even || s.mean < 1.5 ? Format::csr_scalar : Format::csr_vector;
    }
    if (f == Format::csr_vector) return {f, lanes_for(a.row_stats().mean), 1u};
    // A row per work-item; on CPUs a block of rows, so that each work-item streams its entries.
    return {f, 1u, cpu ? 32u : 1u};
}

template <Value T, Index I>
void spmv(const Csr<T, I>& a, const Array<T>& x_in, Array<T>& y, T alpha, T beta, Format f) {
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
    if (may_overlap(x_in.desc(), y.desc()))
        throw InvalidArgument("xgpu: spmv: y shares memory with x; pass a separate output");
    if (may_overlap(a.values().desc(), y.desc()) || may_overlap(a.row_ptr().desc(), y.desc()))
        throw InvalidArgument("xgpu: spmv: y shares memory with the matrix");
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
    const unsigned wg = std::max(group_size(ctx), plan.lanes);
    const std::string key =
        fmt::format("spmv_csr|{}|{}|g{}l{}r{}", name(dtype_v<T>), name(dtype_v<I>), wg, plan.lanes, plan.rows);
    const Kernel k = detail::generated_kernel(
        ctx, key,
        [&] {
            const std::string g = std::to_string(wg), l = std::to_string(plan.lanes), r = std::to_string(plan.rows);
            return codegen::fill("spmv_csr.kernel", {{"array_h", codegen::kernel_file("array.h")},
                                                     {"group_size", g},
                                                     {"lanes", l},
                                                     {"rows", r},
                                                     {"value", codegen::device_type(dtype_v<T>)},
                                                     {"index", codegen::device_type(dtype_v<I>)},
                                                     {"zero", ops<T>("zero")},
                                                     {"add", ops<T>("add")},
                                                     {"mul", ops<T>("mul")}});
        },
        "xgpu_spmv_csr");
    const std::uint64_t rows = std::uint64_t(a.rows()), per_group = std::uint64_t(wg) / plan.lanes * plan.rows,
                        groups = (rows + per_group - 1) / per_group;
    const std::size_t row_groups = (std::size_t(1) << 30) / wg;
    const Grid grid =
        groups <= row_groups
            ? Grid{Range(std::size_t(groups) * wg, 1), Range(wg, 1)}
            : Grid{Range(row_groups * wg, std::size_t((groups + row_groups - 1) / row_groups)), Range(wg, 1)};
    const auto& d = [](const auto& arr) { return arr.desc(); };
    const std::uint32_t beta_zero = beta == T(0) ? 1 : 0;
    k.launch(ctx.current_queue(), grid, d(a.row_ptr()).buffer, std::int64_t(d(a.row_ptr()).offset),
             d(a.col_idx()).buffer, std::int64_t(d(a.col_idx()).offset), d(a.values()).buffer,
             std::int64_t(d(a.values()).offset), d(x).buffer, std::int64_t(d(x).offset), d(out).buffer,
             std::int64_t(d(out).offset), alpha, beta, beta_zero, rows);
    if (!(out.desc().buffer == y.desc().buffer)) y.assign(out);
}

template <Value T, Index I> void Csr<T, I>::apply(const Array<T>& x, Array<T>& y) const {
    spmv(*this, x, y);
}
template <Value T, Index I> void Csr<T, I>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    spmv(*this, x, y, alpha, beta);
}

#define XGPU_SPMV_INSTANTIATE(T, I)                                                                                    \
    template SpmvPlan plan_spmv(const Csr<T, I>&, Format);                                                             \
    template void spmv(const Csr<T, I>&, const Array<T>&, Array<T>&, T, T, Format);                                    \
    template void Csr<T, I>::apply(const Array<T>&, Array<T>&) const;                                                  \
    template void Csr<T, I>::apply(T, const Array<T>&, T, Array<T>&) const;
XGPU_SPARSE_TEMPLATES(XGPU_SPMV_INSTANTIATE)
#undef XGPU_SPMV_INSTANTIATE

} // namespace xgpu::sparse
