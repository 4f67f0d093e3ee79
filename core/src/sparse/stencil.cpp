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
    if (x.desc().buffer == y.desc().buffer) throw InvalidArgument("xgpu: Laplacian apply: y shares memory with x");
}

// y = alpha*A*x + beta*y on the grid nx x ny (x nz when dim is 3).
template <class T>
void apply_laplacian(const Context& ctx, unsigned dim, std::uint64_t nx, std::uint64_t ny, std::uint64_t nz, T alpha,
                     const Array<T>& x, T beta, Array<T>& y) {
    const LaunchShape s = launch_shape(ctx, KernelFamily::stencil, dtype_of<T>::value);
    const std::string key =
        fmt::format("{}|d{}|{}", sparse::detail::spmv_key<T, std::int32_t>("laplacian"), dim, s.key());
    const Kernel k = detail::generated_kernel(
        ctx, key,
        [&] {
            return codegen::fill("stencil.kernel", {{"spmv_h", sparse::detail::spmv_support<T, std::int32_t>()},
                                                    {"group_size", std::to_string(s.group_size)},
                                                    {"walk", std::to_string(s.items)},
                                                    {"dim", std::to_string(dim)}});
        },
        "xgpu_laplacian");
    // Work-groups: across the fastest dimension, times the rows (3-D), times the walks.
    const std::uint64_t walk = dim == 3 ? nz : ny;
    const std::uint64_t groups =
        (nx + s.group_size - 1) / s.group_size * (dim == 3 ? ny : 1) * ((walk + s.items - 1) / s.items);
    k.launch(ctx.current_queue(), codegen::groups_grid(groups, s.group_size), y.desc().buffer,
             std::int64_t(y.desc().offset), x.desc().buffer, std::int64_t(x.desc().offset), nx, ny, nz, alpha, beta,
             std::uint32_t(beta == T(0)));
}

} // namespace

template <class T>
Laplacian2D<T>::Laplacian2D(const Context& ctx, std::int64_t nx, std::int64_t ny)
    : ctx_(ctx), nx_((check_grid({nx, ny}), nx)), ny_(ny) {}

template <class T> void Laplacian2D<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    check_vectors(rows(), x, y);
    apply_laplacian<T>(ctx_, 2, std::uint64_t(nx_), std::uint64_t(ny_), 1, alpha, x, beta, y);
}

template <class T>
Laplacian3D<T>::Laplacian3D(const Context& ctx, std::int64_t nx, std::int64_t ny, std::int64_t nz)
    : ctx_(ctx), nx_((check_grid({nx, ny, nz}), nx)), ny_(ny), nz_(nz) {}

template <class T> void Laplacian3D<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    check_vectors(rows(), x, y);
    apply_laplacian<T>(ctx_, 3, std::uint64_t(nx_), std::uint64_t(ny_), std::uint64_t(nz_), alpha, x, beta, y);
}

template class Laplacian2D<float>;
template class Laplacian2D<double>;
template class Laplacian3D<float>;
template class Laplacian3D<double>;

} // namespace xgpu
