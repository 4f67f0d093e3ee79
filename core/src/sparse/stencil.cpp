// The matrix-free Laplacians: one ElementwiseKernel each (kernels/stream.kernel through the
// codegen module), a grid point per index; neighbours past the boundary are zero.
#include <fmt/format.h>

#include "xgpu/operator.hpp"

namespace xgpu {

namespace {

const char* type_name(float) {
    return "float";
}
const char* type_name(double) {
    return "double";
}

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
    if (x.desc().buffer == y.desc().buffer) throw InvalidArgument("xgpu: Laplacian apply: y shares memory with x");
}

// The stencil's value at point i, from its neighbours (`cond` and offset of each), then the update.
std::string body(const char* centre, std::initializer_list<std::pair<const char*, const char*>> neighbours) {
    std::string s = fmt::format("T v = ({}) * x[i];", centre);
    for (const auto& [cond, offset] : neighbours)
        s += fmt::format(" if ({}) v -= x[i {}];", cond, offset);
    return s + " y[i] = beta_zero ? alpha * v : alpha * v + beta * y[i]";
}

// The grid coordinates of point i: in 32-bit arithmetic when the grid allows (a 64-bit division
// costs the GPU several times a 32-bit one, and the stencil is otherwise a streaming kernel).
std::string coordinates(std::uint64_t points, const char* code) {
    const bool narrow = points <= 0xffffffffu;
    return fmt::format("typedef {0} U; const U j = (U)i, ux = (U)nx, uy = (U)ny; {1}", narrow ? "uint32_t" : "uint64_t",
                       code);
}

} // namespace

template <class T>
Laplacian2D<T>::Laplacian2D(const Context& ctx, std::int64_t nx, std::int64_t ny)
    : nx_((check_grid({nx, ny}), nx)), ny_(ny),
      kernel_(
          ctx,
          fmt::format("{0}* y, const {0}* x, const int64_t nx, const int64_t ny, const {0} alpha, const {0} beta, "
                      "const int32_t beta_zero",
                      type_name(T())),
          fmt::format("typedef {} T; {} {}", type_name(T()),
                      coordinates(std::uint64_t(nx) * std::uint64_t(ny), "const U c = j % ux, r = j / ux;"),
                      body("4", {{"c > 0", "- 1"}, {"c + 1 < ux", "+ 1"}, {"r > 0", "- nx"}, {"r + 1 < uy", "+ nx"}})),
          "xgpu_laplacian2d") {}

template <class T> void Laplacian2D<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    check_vectors(rows(), x, y);
    kernel_(y, x, nx_, ny_, alpha, beta, std::int32_t(beta == T(0)));
}

template <class T>
Laplacian3D<T>::Laplacian3D(const Context& ctx, std::int64_t nx, std::int64_t ny, std::int64_t nz)
    : nx_((check_grid({nx, ny, nz}), nx)), ny_(ny), nz_(nz),
      kernel_(
          ctx,
          fmt::format("{0}* y, const {0}* x, const int64_t nx, const int64_t ny, const int64_t nz, const {0} alpha, "
                      "const {0} beta, const int32_t beta_zero",
                      type_name(T())),
          fmt::format("typedef {} T; {} {}", type_name(T()),
                      coordinates(std::uint64_t(nx) * std::uint64_t(ny) * std::uint64_t(nz),
                                  "const U q = j / ux, c = j - q * ux, r = q % uy, p = q / uy;"),
                      body("6", {{"c > 0", "- 1"},
                                 {"c + 1 < ux", "+ 1"},
                                 {"r > 0", "- nx"},
                                 {"r + 1 < uy", "+ nx"},
                                 {"p > 0", "- nx * ny"},
                                 {"p + 1 < (U)nz", "+ nx * ny"}})),
          "xgpu_laplacian3d") {}

template <class T> void Laplacian3D<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    check_vectors(rows(), x, y);
    kernel_(y, x, nx_, ny_, nz_, alpha, beta, std::int32_t(beta == T(0)));
}

template class Laplacian2D<float>;
template class Laplacian2D<double>;
template class Laplacian3D<float>;
template class Laplacian3D<double>;

} // namespace xgpu
