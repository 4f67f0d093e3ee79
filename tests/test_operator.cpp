// Linear operators: the matrix-free Laplacians against a host stencil and against the same matrix
// in CSR through spmv, on every backend, on fresh random vectors; the concept holds for them and
// for the sparse matrices; bad vectors are refused before any work.
#include <xgpu/codegen.hpp>
#include <xgpu/operator.hpp>
#include <xgpu/sparse.hpp>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

static_assert(LinearOperator<Laplacian2D<double>, double>);
static_assert(LinearOperator<Laplacian3D<float>, float>);
static_assert(LinearOperator<sparse::Csr<double>, double>);
static_assert(LinearOperator<sparse::Csr<std::complex<float>, std::int64_t>, std::complex<float>>);
static_assert(!LinearOperator<Array<double>, double>);
static_assert(FusedDotOperator<Laplacian2D<double>, double>);
static_assert(FusedDotOperator<sparse::Csr<float, std::int64_t>, float>);

namespace {

// y = alpha * A * x + beta * y for the (2*dims)+1-point Laplacian on an n[0] x n[1] (x n[2]) grid.
std::vector<double> host_laplacian(const std::vector<std::int64_t>& n, const std::vector<double>& x,
                                   std::vector<double> y, double alpha, double beta) {
    const std::int64_t nx = n[0], ny = n[1], nz = n.size() > 2 ? n[2] : 1;
    for (std::int64_t p = 0; p < nz; ++p)
        for (std::int64_t r = 0; r < ny; ++r)
            for (std::int64_t c = 0; c < nx; ++c) {
                const std::int64_t i = (p * ny + r) * nx + c;
                double v = 2.0 * double(n.size()) * x[std::size_t(i)];
                if (c > 0) v -= x[std::size_t(i - 1)];
                if (c + 1 < nx) v -= x[std::size_t(i + 1)];
                if (r > 0) v -= x[std::size_t(i - nx)];
                if (r + 1 < ny) v -= x[std::size_t(i + nx)];
                if (n.size() > 2 && p > 0) v -= x[std::size_t(i - nx * ny)];
                if (n.size() > 2 && p + 1 < nz) v -= x[std::size_t(i + nx * ny)];
                y[std::size_t(i)] = alpha * v + (beta == 0 ? 0.0 : beta * y[std::size_t(i)]);
            }
    return y;
}

template <class Op> void check(const Context& ctx, const Op& a, const std::vector<std::int64_t>& n) {
    const auto hx = random_vector<double>(std::size_t(a.rows()), -1.0, 1.0);
    const auto hy = random_vector<double>(std::size_t(a.rows()), -1.0, 1.0);
    for (const auto& [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-0.5, 2.0}}) {
        auto x = to_device(ctx, hx), y = to_device(ctx, hy);
        a.apply(alpha, x, beta, y);
        const auto want = host_laplacian(n, hx, hy, alpha, beta);
        const auto got = y.get();
        for (std::size_t i = 0; i < got.size(); ++i)
            REQUIRE(std::abs(got[i] - want[i]) <= 1e-13);
    }
}

// The 2-D Laplacian as a CSR matrix, the same operator stored.
sparse::HostCsr<double> poisson(std::int64_t nx, std::int64_t ny) {
    std::vector<std::int32_t> r, c;
    std::vector<double> v;
    for (std::int64_t i = 0; i < nx * ny; ++i) {
        auto put = [&](std::int64_t j, double value) {
            r.push_back(std::int32_t(i));
            c.push_back(std::int32_t(j));
            v.push_back(value);
        };
        put(i, 4);
        if (i % nx > 0) put(i - 1, -1);
        if (i % nx + 1 < nx) put(i + 1, -1);
        if (i / nx > 0) put(i - nx, -1);
        if (i / nx + 1 < ny) put(i + nx, -1);
    }
    return sparse::from_coo<double, std::int32_t>(nx * ny, nx * ny, r, c, v);
}

} // namespace

TEST_CASE("matrix-free Laplacians match the host stencil and the stored matrix") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t nx = 3 + std::int64_t(test::rng()() % 60), ny = 1 + std::int64_t(test::rng()() % 50);
        check(ctx, Laplacian2D<double>(ctx, nx, ny), {nx, ny});
        check(ctx, Laplacian3D<double>(ctx, nx / 3 + 1, 7, 5), {nx / 3 + 1, 7, 5});
        check(ctx, Laplacian2D<double>(ctx, 1, 1), {1, 1});
        // The same operator stored in CSR gives the same y (every format).
        sparse::Csr<double> m(ctx, poisson(nx, ny));
        const Laplacian2D<double> l(ctx, nx, ny);
        auto x = to_device(ctx, random_vector<double>(std::size_t(nx * ny), -1.0, 1.0));
        auto y1 = empty<double>(ctx, {std::size_t(nx * ny)}), y2 = empty<double>(ctx, {std::size_t(nx * ny)});
        l.apply(x, y1);
        for (auto f : {sparse::Format::csr_scalar, sparse::Format::csr_vector}) {
            sparse::spmv(m, x, y2, 1.0, 0.0, f);
            const auto a = y1.get(), b = y2.get();
            for (std::size_t i = 0; i < a.size(); ++i)
                REQUIRE(std::abs(a[i] - b[i]) <= 1e-14);
        }
        // float too
        Laplacian2D<float> lf(ctx, 16, 16);
        auto xf = full<float>(ctx, {256}, 1.0f), yf = empty<float>(ctx, {256});
        lf.apply(xf, yf);
        const auto gf = yf.get();
        CHECK(gf[0] == 2.0f);  // a corner: 4 - 2 neighbours
        CHECK(gf[17] == 0.0f); // inside
        CHECK(gf[1] == 1.0f);  // an edge
    }
}

TEST_CASE("matrix-free Laplacians under every kind of launch shape") {
    // Walks that do not divide the slowest dimension, work-groups that do not divide the fastest,
    // a walk longer than the grid, one point per work-item, a work-group that is not a power of two.
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t nx = 2 + std::int64_t(test::rng()() % 90), ny = 1 + std::int64_t(test::rng()() % 40);
        const std::int64_t nz = 1 + std::int64_t(test::rng()() % 9);
        // Staged: neighbours within a line through local memory, in the work-groups whose walk and
        // line segment lie inside the grid (the others as before).
        for (const auto& [g, walk, staged] :
             {std::tuple{64u, 1u, false}, std::tuple{32u, 3u, false}, std::tuple{128u, 16u, false},
              std::tuple{96u, 5u, false}, std::tuple{16u, 64u, false}, std::tuple{16u, 3u, true},
              std::tuple{8u, 1u, true}, std::tuple{32u, 4u, true}, std::tuple{24u, 2u, true}}) {
            LaunchShape shape;
            shape.group_size = g;
            shape.items = walk;
            shape.staged = staged;
            LaunchShapeScope scope(KernelFamily::stencil, shape);
            INFO("shape " << shape.key() << ", grid " << nx << " x " << ny << " x " << nz);
            check(ctx, Laplacian2D<double>(ctx, nx, ny), {nx, ny});
            check(ctx, Laplacian3D<double>(ctx, nx, ny, nz), {nx, ny, nz});
        }
        LaunchShape bad;
        bad.items = 65;
        LaunchShapeScope scope(KernelFamily::stencil, bad);
        const Laplacian2D<double> l(ctx, 4, 4);
        auto x = zeros<double>(ctx, {16}), y = zeros<double>(ctx, {16});
        CHECK_THROWS_WITH(l.apply(x, y), Contains("1 to 64 points per work-item"));
    }
}

namespace {
// apply_dot against apply and a host dot: the same y, and the partial sums adding up to x.y.
template <class Op> void check_fused(const Context& ctx, const Op& a, std::size_t groups) {
    const auto hx = random_vector<double>(std::size_t(a.rows()), -1.0, 1.0);
    auto x = to_device(ctx, hx), y = full<double>(ctx, {hx.size()}, 7.0), want = empty<double>(ctx, {hx.size()});
    auto partial = full<double>(ctx, {groups}, 1e300);
    a.apply(x, want);
    REQUIRE(a.apply_dot(x, y, partial));
    const auto got = y.get(), ref = want.get(), parts = partial.get();
    double dot = 0, scale = 0, sum = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        REQUIRE(got[i] == ref[i]);
        dot += hx[i] * ref[i];
        scale += std::abs(hx[i] * ref[i]);
    }
    for (double p : parts)
        sum += p;
    REQUIRE(std::abs(sum - dot) <= 1e-12 * (scale + 1));
}
} // namespace

TEST_CASE("operators fuse a dot product into their product (apply_dot)") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t nx = 2 + std::int64_t(test::rng()() % 70), ny = 1 + std::int64_t(test::rng()() % 60);
        for (std::size_t groups : {1u, 3u, 64u}) {
            check_fused(ctx, Laplacian2D<double>(ctx, nx, ny), groups);
            check_fused(ctx, Laplacian3D<double>(ctx, nx, 5, 3), groups);
            check_fused(ctx, sparse::Csr<double>(ctx, poisson(nx, ny)), groups);
        }
        // Another walk and a work-group that is not a power of two.
        {
            LaunchShape shape;
            shape.group_size = 96;
            shape.items = 3;
            LaunchShapeScope scope(KernelFamily::stencil, shape);
            check_fused(ctx, Laplacian2D<double>(ctx, nx, ny), 5);
            check_fused(ctx, Laplacian3D<double>(ctx, nx, 4, 7), 2);
        }
        {
            LaunchShape shape; // staged: a barrier in each share the work-groups loop over
            shape.group_size = 8;
            shape.items = 2;
            shape.staged = true;
            LaunchShapeScope scope(KernelFamily::stencil, shape);
            check_fused(ctx, Laplacian2D<double>(ctx, nx, ny), 3);
            check_fused(ctx, Laplacian3D<double>(ctx, nx, 4, 7), 2);
        }
        // Formats without the fused kernel decline, having done nothing.
        const sparse::Csr<double> m(ctx, poisson(nx, ny));
        auto x = full<double>(ctx, {std::size_t(nx * ny)}, 1.0), y = full<double>(ctx, {std::size_t(nx * ny)}, 7.0);
        auto partial = full<double>(ctx, {4}, 3.0);
        CHECK_FALSE(m.apply_dot(x, y, partial, sparse::Format::csr_vector));
        CHECK_FALSE(m.apply_dot(x, y, partial, sparse::Format::merge_path));
        for (double v : y.get())
            REQUIRE(v == 7.0);
        for (double v : partial.get())
            REQUIRE(v == 3.0);
        // Bad partial sums are refused.
        auto none = Array<double>();
        CHECK_THROWS_WITH(m.apply_dot(x, y, none), Contains("partial"));
        const Laplacian2D<double> l(ctx, nx, ny);
        CHECK_THROWS_WITH(l.apply_dot(x, y, none), Contains("partial is an empty Array"));
        auto wide = zeros<double>(ctx, {8});
        auto strided = wide(slice(0, 8, 2));
        CHECK_THROWS_WITH(l.apply_dot(x, y, strided), Contains("contiguous"));
    }
}

TEST_CASE("Laplacians refuse bad grids and vectors before any work") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        CHECK_THROWS_WITH(Laplacian2D<double>(ctx, 0, 5), Contains("at least one point per dimension"));
        const Laplacian2D<double> l(ctx, 4, 4);
        auto x = zeros<double>(ctx, {16}), bad = zeros<double>(ctx, {15});
        CHECK_THROWS_AS(l.apply(x, bad), ShapeError);
        CHECK_THROWS_WITH(l.apply(x, x), Contains("y shares memory with x"));
        // Two vectors in one buffer: overlapping ranges refused, disjoint ones taken.
        auto pair = zeros<double>(ctx, {40});
        auto px = pair(slice(0, 16)), py = pair(slice(20, 36)), over = pair(slice(15, 31));
        CHECK_THROWS_WITH(l.apply(px, over), Contains("y shares memory with x"));
        px.fill(1.0);
        l.apply(px, py);
        auto ox = zeros<double>(ctx, {16}), oy = zeros<double>(ctx, {16});
        ox.fill(1.0);
        l.apply(ox, oy);
        CHECK(py.get() == oy.get());
        auto big = zeros<double>(ctx, {32}), y = zeros<double>(ctx, {16});
        auto strided = big(slice(0, 32, 2));
        CHECK_THROWS_WITH(l.apply(strided, y), Contains("contiguous"));
    }
}
