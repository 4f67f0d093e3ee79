// The matrix-free Laplacians: kernels/stencil.kernel, one work-item per point of a line (2-D) or
// plane (3-D) walking the slowest dimension; neighbours past the boundary are zero.
#include <fmt/format.h>

#include "../codegen/generated.hpp"
#include "../codegen/launch.hpp"
#include "../codegen/skeleton.hpp"
#include "spmv.hpp"
#include "xgpu/codegen.hpp"
#include "xgpu/operator.hpp"

namespace xgpu {

namespace {

void check_grid(std::initializer_list<std::int64_t> n) {
    std::uint64_t total = 1;
    for (auto d : n) {
        if (d < 1)
            throw InvalidArgument(fmt::format("xgpu: a Laplacian needs at least one point per dimension, not {}", d));
        if (total > (std::uint64_t(1) << 62) / std::uint64_t(d))
            throw InvalidArgument("xgpu: the Laplacian's grid is too big");
        total *= std::uint64_t(d);
    }
}

template <class T> void check_vectors(std::int64_t n, const Array<T>& x, const Array<T>& y) {
    if (x.empty() || y.empty()) throw InvalidArgument("xgpu: Laplacian apply with an empty Array");
    if (x.size() != std::size_t(n) || y.size() != std::size_t(n))
        throw ShapeError(fmt::format("xgpu: the Laplacian of {} points needs x and y of {} elements, not {} and {}", n,
                                     n, x.size(), y.size()));
    if (!x.is_contiguous() || !y.is_contiguous())
        throw InvalidArgument("xgpu: Laplacian apply needs contiguous x and y");
    if (detail::may_share_memory(x.desc(), y.desc()))
        throw InvalidArgument("xgpu: Laplacian apply: y shares memory with x");
}

// Half the work-group size rounded up to a power of two: the first step of a tree sum over it.
std::uint64_t half_of(std::uint64_t wg) {
    std::uint64_t p = 1;
    while (p < wg)
        p *= 2;
    return p / 2;
}

// y = alpha*A*x + beta*y on the grid nx x ny (x nz when dim is 3); with `partial`, over a launch
// of partial.size() work-groups, each writing its partial sum of x.y there.
template <class T>
void apply_laplacian(const Context& ctx, unsigned dim, std::uint64_t nx, std::uint64_t ny, std::uint64_t nz, T alpha,
                     const Array<T>& x, T beta, Array<T>& y, Array<T>* partial = nullptr) {
    const LaunchShape s = launch_shape(ctx, KernelFamily::stencil, dtype_of<T>::value);
    // CPUs: the fused product takes a contiguous run of points per work-item (stencil.kernel).
    const bool runs = ctx.device().type() == DeviceType::cpu;
    // Built by appends: a solver calls this every iteration.
    static const std::string family = sparse::detail::spmv_key<T, std::int32_t>("laplacian");
    // Staged: the tile of XGPU_WALK lines beside the fused product's tree of partial sums.
    if (s.staged) {
        const std::size_t bytes = (std::size_t(s.items) * (s.group_size + 2) + s.group_size) * sizeof(T);
        if (bytes > codegen::static_local_limit(ctx.device().info()))
            throw InvalidArgument(fmt::format("xgpu: launch shape {} for stencil kernels needs {} bytes of local "
                                              "memory, more than the {} of {}",
                                              s.key(), bytes, codegen::static_local_limit(ctx.device().info()),
                                              ctx.device().name()));
    }
    const char* name = partial ? "xgpu_laplacian_dot" : "xgpu_laplacian";
    std::string key = family;
    key.append("|d").append(std::to_string(dim)).append("|").append(s.key()).append(runs ? "|runs|" : "|").append(name);
    const Kernel k = detail::generated_kernel(
        ctx, key,
        [&] {
            return codegen::fill("stencil.kernel", {{"spmv_h", sparse::detail::spmv_support<T, std::int32_t>()},
                                                    {"group_size", std::to_string(s.group_size)},
                                                    {"walk", std::to_string(s.items)},
                                                    {"dim", std::to_string(dim)},
                                                    {"half", std::to_string(half_of(s.group_size))},
                                                    {"runs", runs ? "1" : "0"},
                                                    {"staged", s.staged ? "1" : "0"}});
        },
        name);
    // Work-groups: across the fastest dimension, times the rows (3-D), times the walks.
    const std::uint64_t walk = dim == 3 ? nz : ny;
    const std::uint64_t groups =
        (nx + s.group_size - 1) / s.group_size * (dim == 3 ? ny : 1) * ((walk + s.items - 1) / s.items);
    const Queue q = ctx.current_queue();
    const std::uint32_t beta_zero = beta == T(0);
    if (!partial) {
        k.launch(q, codegen::groups_grid(groups, s.group_size), y, x, nx, ny, nz, alpha, beta, beta_zero);
        return;
    }
    k.launch(q, Grid{partial->size() * s.group_size, s.group_size}, y, x, nx, ny, nz, alpha, beta, beta_zero, groups,
             *partial);
}

// The checks of a fused product's partial sums: one per work-group, contiguous, on the context,
// apart from x and y.
template <class T>
void check_partial(const Context& ctx, const Array<T>& x, const Array<T>& y, const Array<T>& partial) {
    if (partial.empty()) throw InvalidArgument("xgpu: apply_dot: partial is an empty Array");
    if (!partial.is_contiguous()) throw InvalidArgument("xgpu: apply_dot: partial must be contiguous");
    if (partial.size() > (std::size_t(1) << 20))
        throw InvalidArgument(
            fmt::format("xgpu: apply_dot: {} partial sums asked for; at most 2^20 work-groups", partial.size()));
    if (!(partial.context() == ctx)) throw InvalidArgument("xgpu: apply_dot: partial belongs to another context");
    if (detail::may_share_memory(partial.desc(), x.desc()) || detail::may_share_memory(partial.desc(), y.desc()))
        throw InvalidArgument("xgpu: apply_dot: partial shares memory with x or y");
}

} // namespace

template <class T>
Laplacian2D<T>::Laplacian2D(const Context& ctx, std::int64_t nx, std::int64_t ny)
    : ctx_(ctx), nx_((check_grid({nx, ny}), nx)), ny_(ny) {}

template <class T> void Laplacian2D<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    check_vectors(rows(), x, y);
    apply_laplacian<T>(ctx_, 2, std::uint64_t(nx_), std::uint64_t(ny_), 1, alpha, x, beta, y);
}

template <class T> bool Laplacian2D<T>::apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial) const {
    check_vectors(rows(), x, y);
    check_partial(ctx_, x, y, partial);
    apply_laplacian<T>(ctx_, 2, std::uint64_t(nx_), std::uint64_t(ny_), 1, T(1), x, T(0), y, &partial);
    return true;
}

template <class T>
Laplacian3D<T>::Laplacian3D(const Context& ctx, std::int64_t nx, std::int64_t ny, std::int64_t nz)
    : ctx_(ctx), nx_((check_grid({nx, ny, nz}), nx)), ny_(ny), nz_(nz) {}

template <class T> void Laplacian3D<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    check_vectors(rows(), x, y);
    apply_laplacian<T>(ctx_, 3, std::uint64_t(nx_), std::uint64_t(ny_), std::uint64_t(nz_), alpha, x, beta, y);
}

template <class T> bool Laplacian3D<T>::apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial) const {
    check_vectors(rows(), x, y);
    check_partial(ctx_, x, y, partial);
    apply_laplacian<T>(ctx_, 3, std::uint64_t(nx_), std::uint64_t(ny_), std::uint64_t(nz_), T(1), x, T(0), y, &partial);
    return true;
}

template class Laplacian2D<float>;
template class Laplacian2D<double>;
template class Laplacian3D<float>;
template class Laplacian3D<double>;

} // namespace xgpu
