// The Krylov solvers on every backend: CG (classic and pipelined in both forms, with and without Jacobi) on every
// SPD matrix of tests/data/matrices to a relative residual of 1e-8 checked on the host, with iteration counts
// against a textbook CG in double precision run here; BiCGStab on a nonsymmetric
// convection-diffusion matrix; GMRES(m) and FGMRES(m) against a textbook GMRES run here; the deferred check stopping at
// the first converged iteration; breakdown, NaN, zero right-hand side, the iteration limit and misuse; the matrix-free
// Laplacian, float, Chebyshev and user preconditioners.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <xgpu/solver.hpp>
#include <xgpu/sparse.hpp>
#include <xgpu/tune.hpp>

#include "solver_methods.hpp"
#include "support.hpp"

using namespace xgpu;
using namespace xgpu::sparse;
using Catch::Matchers::Contains;

namespace {

std::vector<double> host_spmv(const HostCsr<double>& a, const std::vector<double>& x) {
    std::vector<double> y(std::size_t(a.rows), 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i)
        for (auto k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k)
            y[std::size_t(i)] += a.values[std::size_t(k)] * x[std::size_t(a.col_idx[std::size_t(k)])];
    return y;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += a[i] * b[i];
    return s;
}

// |b - A x| / |b| in double on the host.
template <class T>
double host_relative_residual(const HostCsr<double>& a, const std::vector<T>& b, const std::vector<T>& x) {
    const std::vector<double> xd(x.begin(), x.end()), bd(b.begin(), b.end());
    const auto ax = host_spmv(a, xd);
    double r = 0;
    for (std::size_t i = 0; i < bd.size(); ++i)
        r += (bd[i] - ax[i]) * (bd[i] - ax[i]);
    return std::sqrt(r / dot(bd, bd));
}

// Textbook preconditioned CG in double from x = 0: the iterations until |r| <= rtol |b|.
std::int64_t host_cg(const HostCsr<double>& a, const std::vector<double>& b, bool jacobi, double rtol,
                     std::int64_t max_it) {
    const std::size_t n = b.size();
    std::vector<double> minv(n, 1.0), x(n, 0.0), r = b, z(n), p(n);
    if (jacobi) {
        const auto d = diagonal(a);
        for (std::size_t i = 0; i < n; ++i)
            minv[i] = 1.0 / d[i];
    }
    for (std::size_t i = 0; i < n; ++i)
        z[i] = minv[i] * r[i];
    p = z;
    double rz = dot(r, z);
    const double bn = std::sqrt(dot(b, b));
    for (std::int64_t it = 1; it <= max_it; ++it) {
        const auto q = host_spmv(a, p);
        const double alpha = rz / dot(p, q);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        if (std::sqrt(dot(r, r)) <= rtol * bn) return it;
        for (std::size_t i = 0; i < n; ++i)
            z[i] = minv[i] * r[i];
        const double rz_new = dot(r, z);
        for (std::size_t i = 0; i < n; ++i)
            p[i] = z[i] + rz_new / rz * p[i];
        rz = rz_new;
    }
    return max_it + 1;
}

std::vector<std::filesystem::path> test_matrices() {
    std::vector<std::filesystem::path> out;
    const std::filesystem::path dir = XGPU_MATRICES_DIR;
    if (!std::filesystem::is_directory(dir)) return out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".mtx") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// A 2-D convection-diffusion operator on an m x m grid (5 points, central convection of
// strength c in x): nonsymmetric, positive real part.
HostCsr<double> convection_diffusion(std::int64_t m, double c) {
    std::vector<std::int32_t> r, col;
    std::vector<double> v;
    const auto add = [&](std::int64_t i, std::int64_t j, double x) {
        r.push_back(std::int32_t(i));
        col.push_back(std::int32_t(j));
        v.push_back(x);
    };
    for (std::int64_t y = 0; y < m; ++y)
        for (std::int64_t x = 0; x < m; ++x) {
            const std::int64_t i = y * m + x;
            add(i, i, 4.0);
            if (x > 0) add(i, i - 1, -1.0 - c);
            if (x + 1 < m) add(i, i + 1, -1.0 + c);
            if (y > 0) add(i, i - m, -1.0);
            if (y + 1 < m) add(i, i + m, -1.0);
        }
    return from_coo<double, std::int32_t>(m * m, m * m, r, col, v);
}

HostCsr<double> from_dense(std::int64_t n, const std::vector<double>& d) {
    std::vector<std::int32_t> r, c;
    std::vector<double> v;
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            if (d[std::size_t(i * n + j)] != 0) {
                r.push_back(std::int32_t(i));
                c.push_back(std::int32_t(j));
                v.push_back(d[std::size_t(i * n + j)]);
            }
    return from_coo<double, std::int32_t>(n, n, r, c, v);
}

// A preconditioner the solvers know nothing of (Jacobi, hidden): applied between their kernels.
struct UserJacobi {
    Jacobi<double> j;
    std::int64_t rows() const { return j.rows(); }
    std::int64_t cols() const { return j.cols(); }
    void apply(const Array<double>& x, Array<double>& y) const { j.apply(x, y); }
};

// The m x m 2-D Poisson matrix scaled as D A D, D's diagonal spread evenly in log from 10^-spread
// to 10^spread: so ill-conditioned that CG takes several thousand iterations at m = 32 and the
// residuals the methods update by recurrence may drift from b - A x.
HostCsr<double> scaled_poisson(std::int64_t m, double spread) {
    HostCsr<double> a = convection_diffusion(m, 0.0);
    const auto n = std::size_t(a.rows);
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i)
        d[i] = std::pow(10.0, spread * (2.0 * double(i) / double(n - 1) - 1.0));
    for (std::size_t i = 0; i < n; ++i)
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
            a.values[std::size_t(k)] *= d[i] * d[std::size_t(a.col_idx[std::size_t(k)])];
    return a;
}

// Every solver the report's claims are checked for: CG's three variants and BiCGStab.
using test::Method;
using test::methods;
using test::name;
using test::solve;

// The n x n diagonal matrix with entries f(i).
template <class F> HostCsr<double> diagonal(std::int64_t n, F f) {
    std::vector<double> d(std::size_t(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i)
        d[std::size_t(i * n + i)] = f(i);
    return from_dense(n, d);
}

constexpr CgVariant cg_variants[] = {CgVariant::classic, CgVariant::pipelined, CgVariant::ghysels_vanroose};
template <class Op>
SolverReport cg_variant(CgVariant v, const Op& a, const Array<double>& b, Array<double>& x,
                        SolverOptions<double> o = {}) {
    o.variant = v;
    return cg(a, b, x, o);
}

// The launches `f` makes before it throws E (it must throw).
template <class E, class F> std::uint64_t launches_before_refusal(const Context& ctx, F&& f) {
    const std::uint64_t before = ctx.launch_count();
    CHECK_THROWS_AS(f(), E);
    return ctx.launch_count() - before;
}
} // namespace

TEST_CASE("cg solves every SuiteSparse SPD matrix to 1e-8 in about the textbook's iterations", "[solver]") {
    const auto files = test_matrices();
    REQUIRE(!files.empty());
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const auto& f : files) {
            const auto h = read_matrix_market<double>(f.string());
            const Csr<double> a(ctx, h);
            const auto xs = test::random_vector<double>(std::size_t(h.rows), -1.0, 1.0);
            const auto b = host_spmv(h, xs);
            const auto bd = to_device(ctx, b);
            for (const bool jacobi : {false, true}) {
                const std::int64_t reference = host_cg(h, b, jacobi, 1e-8, 20 * h.rows);
                for (const auto variant : cg_variants) {
                    // Ghysels-Vanroose without a preconditioner drifts on the ill-conditioned matrices
                    // (bcsstk03: about twice the textbook's iterations): held to the bound with Jacobi only.
                    if (variant == CgVariant::ghysels_vanroose && !jacobi) continue;
                    SolverOptions<double> o;
                    o.rtol = 1e-8;
                    o.variant = variant;
                    o.max_iterations = 20 * h.rows;
                    if (jacobi) o.preconditioner = Jacobi<double>(a);
                    Array<double> x = zeros<double>(ctx, {std::size_t(h.rows)});
                    const auto rep = cg(a, bd, x, o);
                    const double res = host_relative_residual(h, b, x.get());
                    // Ghysels-Vanroose's recurrences carry their rounding errors on (Cools et al. 2018):
                    // nos1 with Jacobi took 1.24-1.61 times the host's iterations over 54 random
                    // right-hand sides on PoCL (the host needs 375-395 for some, 440-460 for most; the
                    // GV solve about 470-612 for all), so it is held to 1.75.
                    const double limit = variant == CgVariant::classic            ? 1.25
                                         : variant == CgVariant::ghysels_vanroose ? 1.75
                                                                                  : 1.5;
                    INFO(f.filename().string()
                         << (jacobi ? " jacobi " : " ") << rep.method << ": " << rep.iterations
                         << " iterations (host CG " << reference << "), status " << name(rep.status)
                         << ", host residual " << res << ", reported " << rep.relative_residual);
                    CHECK(rep.status == SolverStatus::converged);
                    CHECK(res <= 1e-8);
                    CHECK(std::abs(rep.relative_residual - res) <= 1e-3 * res + 1e-14);
                    CHECK(double(rep.iterations) <= limit * double(reference));
                    CHECK(rep.history.size() >= 2);
                }
            }
        }
    }
}

TEST_CASE("the deferred check stops at the first converged iteration", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t m = 24;
        Laplacian2D<double> a(ctx, m, m);
        const auto b = to_device(ctx, test::random_vector<double>(std::size_t(m * m), -1.0, 1.0));
        for (const auto variant : cg_variants) {
            // Every iteration checked: where the recurrence first met the tolerance.
            SolverOptions<double> every;
            every.variant = variant;
            every.check_interval = 1;
            every.rtol = 1e-7;
            std::int64_t first = -1;
            every.progress = [&](std::int64_t it, double rel) {
                if (first < 0 && rel <= every.rtol) first = it;
            };
            Array<double> x1;
            const auto r1 = cg(a, b, x1, every);
            REQUIRE(r1.converged());
            CHECK(first == r1.iterations);
            for (const int k : {3, 10, 25}) {
                SolverOptions<double> o = every;
                o.check_interval = k;
                o.progress = {};
                Array<double> x;
                const auto r = cg(a, b, x, o);
                INFO(r.method << " k = " << k << ": " << r.iterations << " iterations, first converged " << first);
                CHECK(r.converged());
                CHECK(r.iterations >= first);
                CHECK(r.iterations <= first + k);
                CHECK(r.iterations == r1.iterations); // the device's own test: the same iteration for any k
            }
        }
    }
}

TEST_CASE("the callback sees every iteration that ran, with its iterate", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t m = 20;
        const auto h = sparse::poisson<double>(m, m);
        const Csr<double> a(ctx, h);
        const auto b = to_device(ctx, test::random_vector<double>(std::size_t(m * m), -1.0, 1.0));
        for (const bool jacobi : {false, true})
            for (const bool bicg : {false, true}) {
                SolverOptions<double> o;
                o.rtol = 1e-8;
                o.try_forms = false; // one SpMV form: the same iterates bit for bit
                if (jacobi) o.preconditioner = Jacobi<double>(a);
                Array<double> plain;
                const auto reference = bicg ? bicgstab(a, b, plain, o) : cg(a, b, plain, o);
                std::vector<std::int64_t> seen;
                std::vector<double> last;
                o.callback = [&](std::int64_t it, const Array<double>& x) {
                    seen.push_back(it);
                    last = x.get();
                };
                Array<double> x;
                const auto r = bicg ? bicgstab(a, b, x, o) : cg(a, b, x, o);
                INFO((bicg ? "bicgstab" : "cg") << (jacobi ? " with Jacobi" : "") << ": " << r.iterations
                                                << " iterations, " << seen.size() << " calls");
                REQUIRE(r.converged());
                CHECK(r.iterations == reference.iterations);
                REQUIRE(seen.size() == std::size_t(r.iterations));
                for (std::size_t i = 0; i < seen.size(); ++i)
                    CHECK(seen[i] == std::int64_t(i + 1));
                CHECK(last == x.get());
                CHECK(x.get() == plain.get());
            }
    }
}

TEST_CASE("a preconditioner of another context is refused before any launch", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const Context other = Context::create(ctx.device());
        const auto h = sparse::poisson<double>(12, 12);
        const Csr<double> a(ctx, h), there(other, h);
        const auto b = to_device(ctx, test::random_vector<double>(std::size_t(h.rows), -1.0, 1.0));
        const ChebyshevOptions co;
        for (const Preconditioner<double>& m :
             {Preconditioner<double>(Jacobi<double>(there)),
              Preconditioner<double>(Chebyshev<double>(other, there, co)), Preconditioner<double>(there)}) {
            SolverOptions<double> o;
            o.preconditioner = m;
            Array<double> x;
            const auto before = ctx.launch_count(), before_other = other.launch_count();
            CHECK_THROWS_WITH(cg(a, b, x, o), Contains("another context"));
            CHECK(ctx.launch_count() == before);
            CHECK(other.launch_count() == before_other);
        }
    }
}

TEST_CASE("bicgstab solves a nonsymmetric convection-diffusion system", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = convection_diffusion(32, 0.4);
        const Csr<double> a(ctx, h);
        const auto xs = test::random_vector<double>(std::size_t(h.rows), -1.0, 1.0);
        const auto b = host_spmv(h, xs);
        const auto bd = to_device(ctx, b);
        for (const bool jacobi : {false, true}) {
            SolverOptions<double> o;
            o.rtol = 1e-9;
            if (jacobi) o.preconditioner = Jacobi<double>(a);
            Array<double> x = zeros<double>(ctx, {std::size_t(h.rows)});
            const auto rep = bicgstab(a, bd, x, o);
            const double res = host_relative_residual(h, b, x.get());
            INFO((jacobi ? "jacobi: " : "") << rep.iterations << " iterations, host residual " << res);
            CHECK(rep.converged());
            CHECK(res <= 1e-8);
            CHECK(rep.iterations > 5);
            CHECK(rep.iterations < 200);
        }
        // The same solver on an SPD matrix-free operator, float.
        Laplacian2D<float> lap(ctx, 20, 20);
        const auto bf = to_device(ctx, test::random_vector<float>(400, -1.0f, 1.0f));
        SolverOptions<float> of;
        of.rtol = 1e-4;
        Array<float> xf;
        const auto rf = bicgstab(lap, bf, xf, of);
        CHECK(rf.converged());
        CHECK(rf.relative_residual <= 2e-4);
    }
}

namespace {
// Textbook restarted GMRES(m) in double from x = 0, right-preconditioned by minv (a diagonal),
// with modified Gram-Schmidt and Givens rotations: the Arnoldi steps until the least-squares
// residual meets rtol |b|.
std::int64_t host_gmres(const HostCsr<double>& a, const std::vector<double>& b, const std::vector<double>& minv, int m,
                        double rtol, std::int64_t max_it) {
    const std::size_t n = b.size();
    const double tol = rtol * std::sqrt(dot(b, b));
    std::vector<double> x(n, 0.0);
    std::int64_t steps = 0;
    while (steps < max_it) {
        const auto ax = host_spmv(a, x);
        std::vector<std::vector<double>> v(1, std::vector<double>(n));
        for (std::size_t i = 0; i < n; ++i)
            v[0][i] = b[i] - ax[i];
        const double beta = std::sqrt(dot(v[0], v[0]));
        if (beta <= tol) return steps;
        for (auto& e : v[0])
            e /= beta;
        const auto ms = std::size_t(m);
        std::vector<std::vector<double>> h(ms, std::vector<double>(ms + 1, 0.0));
        std::vector<double> cs(ms), sn(ms), g(ms + 1, 0.0);
        g[0] = beta;
        int j = 0;
        bool done = false;
        for (; j < m && !done; ++j) {
            std::vector<double> z(n);
            for (std::size_t i = 0; i < n; ++i)
                z[i] = minv[i] * v[std::size_t(j)][i];
            auto w = host_spmv(a, z);
            auto& col = h[std::size_t(j)];
            for (int i = 0; i <= j; ++i) {
                col[std::size_t(i)] = dot(v[std::size_t(i)], w);
                for (std::size_t k = 0; k < n; ++k)
                    w[k] -= col[std::size_t(i)] * v[std::size_t(i)][k];
            }
            const double eta = std::sqrt(dot(w, w));
            for (int i = 0; i < j; ++i) {
                const double t =
                    cs[std::size_t(i)] * col[std::size_t(i)] + sn[std::size_t(i)] * col[std::size_t(i) + 1];
                col[std::size_t(i) + 1] =
                    cs[std::size_t(i)] * col[std::size_t(i) + 1] - sn[std::size_t(i)] * col[std::size_t(i)];
                col[std::size_t(i)] = t;
            }
            const double rad = std::hypot(col[std::size_t(j)], eta);
            cs[std::size_t(j)] = col[std::size_t(j)] / rad;
            sn[std::size_t(j)] = eta / rad;
            col[std::size_t(j)] = rad;
            g[std::size_t(j) + 1] = -sn[std::size_t(j)] * g[std::size_t(j)];
            g[std::size_t(j)] *= cs[std::size_t(j)];
            ++steps;
            done = std::abs(g[std::size_t(j) + 1]) <= tol || steps >= max_it;
            for (auto& e : w)
                e /= eta;
            v.push_back(std::move(w));
        }
        std::vector<double> y(static_cast<std::size_t>(j));
        for (int i = j - 1; i >= 0; --i) {
            double t = g[std::size_t(i)];
            for (int c = i + 1; c < j; ++c)
                t -= h[std::size_t(c)][std::size_t(i)] * y[std::size_t(c)];
            y[std::size_t(i)] = t / h[std::size_t(i)][std::size_t(i)];
        }
        for (int i = 0; i < j; ++i)
            for (std::size_t k = 0; k < n; ++k)
                x[k] += minv[k] * y[std::size_t(i)] * v[std::size_t(i)][k];
        if (done) return steps;
    }
    return max_it + 1;
}
} // namespace

TEST_CASE("gmres and fgmres solve nonsymmetric systems as a textbook GMRES(m) does", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t m = 20 + std::int64_t(test::rng()() % 8);
        const auto h = convection_diffusion(m, 0.6);
        const Csr<double> a(ctx, h);
        const auto n = std::size_t(h.rows);
        const auto xs = test::random_vector<double>(n, -1.0, 1.0);
        const auto b = host_spmv(h, xs);
        const auto bd = to_device(ctx, b);
        const auto d = diagonal(h);
        std::vector<double> none(n, 1.0), inverse(n);
        for (std::size_t i = 0; i < n; ++i)
            inverse[i] = 1.0 / d[i];
        for (const int restart : {1, 7, 30}) {
            for (const int precond : {0, 1, 2}) { // none, Jacobi, Jacobi as an operator the solver cannot fuse
                const std::int64_t reference = host_gmres(h, b, precond ? inverse : none, restart, 1e-9, 4000);
                for (const bool flexible : {false, true}) {
                    SolverOptions<double> o;
                    o.rtol = 1e-9;
                    o.restart = restart;
                    o.max_iterations = 4000;
                    if (precond == 1) o.preconditioner = Jacobi<double>(a);
                    if (precond == 2) o.preconditioner = UserJacobi{Jacobi<double>(a)};
                    Array<double> x = zeros<double>(ctx, {n});
                    const auto rep = flexible ? fgmres(a, bd, x, o) : gmres(a, bd, x, o);
                    const double res = host_relative_residual(h, b, x.get());
                    INFO((flexible ? "fgmres(" : "gmres(")
                         << restart << "), preconditioner " << precond << ": " << rep.iterations
                         << " iterations (the host's " << reference << "), host residual " << res);
                    CHECK(rep.method == (flexible ? "fgmres" : "gmres"));
                    CHECK(rep.converged());
                    CHECK(res <= 1e-9 * (1 + 1e-6));
                    CHECK(std::abs(rep.iterations - reference) <= 1 + reference / 50);
                }
            }
        }
        // The callback sees x at the end of every cycle and, where the solve stops mid-cycle, the
        // x it returns.
        SolverOptions<double> o;
        o.rtol = 1e-9;
        o.restart = 7;
        std::vector<std::int64_t> seen;
        std::vector<double> last;
        o.callback = [&](std::int64_t it, const Array<double>& xk) {
            seen.push_back(it);
            last = xk.get();
        };
        Array<double> x = zeros<double>(ctx, {n});
        const auto rep = gmres(a, bd, x, o);
        CHECK(rep.converged());
        CHECK(std::int64_t(seen.size()) >= rep.iterations / 7);
        CHECK(std::is_sorted(seen.begin(), seen.end()));
        CHECK(last == x.get());
    }
}

TEST_CASE("failures are statuses: breakdown, NaN, zero right-hand side, iteration limit", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t n = 16;
        SECTION("an indefinite matrix breaks CG down") {
            const Csr<double> a(ctx, diagonal(n, [](std::int64_t i) { return i % 2 ? -1.0 : 1.0; }));
            const auto b = ones<double>(ctx, {std::size_t(n)});
            for (const auto variant : cg_variants) {
                Array<double> x;
                const auto r = cg_variant(variant, a, b, x);
                INFO(r.method);
                CHECK(r.status == SolverStatus::breakdown);
                CHECK(r.status_iteration == 1);
                CHECK(r.iterations == 0);
            }
        }
        SECTION("a singular matrix with b outside its range breaks CG down") {
            const Csr<double> a(ctx, diagonal(n, [&](std::int64_t i) { return i + 1 < n ? 2.0 : 0.0; }));
            std::vector<double> e(std::size_t(n), 0.0);
            e.back() = 1.0;
            const auto b = to_device(ctx, e);
            Array<double> x;
            const auto r = cg(a, b, x);
            CHECK(r.status == SolverStatus::breakdown);
            CHECK(r.status_iteration == 1);
        }
        SECTION("a skew-symmetric matrix breaks BiCGStab down") {
            std::vector<double> d(std::size_t(n * n), 0.0);
            for (std::int64_t i = 0; i + 1 < n; i += 2) {
                d[std::size_t(i * n + i + 1)] = 1.0;
                d[std::size_t((i + 1) * n + i)] = -1.0;
            }
            const Csr<double> a(ctx, from_dense(n, d));
            const auto b = ones<double>(ctx, {std::size_t(n)});
            Array<double> x;
            const auto r = bicgstab(a, b, x);
            CHECK(r.status == SolverStatus::breakdown);
            CHECK(r.status_iteration == 1);
        }
        SECTION("NaN in b") {
            Laplacian2D<double> a(ctx, 4, 4);
            auto hb = test::random_vector<double>(16, -1.0, 1.0);
            hb[5] = std::nan("");
            const auto b = to_device(ctx, hb);
            Array<double> x;
            CHECK(cg(a, b, x).status == SolverStatus::nan);
            SolverOptions<double> o;
            o.variant = CgVariant::pipelined;
            Array<double> x2;
            CHECK(cg(a, b, x2, o).status == SolverStatus::nan);
            Array<double> x3;
            const auto r3 = bicgstab(a, b, x3);
            CHECK(r3.status == SolverStatus::nan);
            CHECK(r3.iterations == 0);
        }
        SECTION("NaN appearing in the operator's products") {
            const Csr<double> a(ctx, diagonal(n, [](std::int64_t i) {
                                    return i == 7 ? std::numeric_limits<double>::infinity() : 2.0;
                                }));
            const auto b = ones<double>(ctx, {std::size_t(n)});
            for (const auto variant : cg_variants) {
                Array<double> x;
                const auto r = cg_variant(variant, a, b, x);
                INFO(r.method);
                CHECK(r.status == SolverStatus::nan);
            }
        }
        SECTION("zero right-hand side: x = 0, zero iterations") {
            Laplacian2D<double> a(ctx, 4, 4);
            const auto b = zeros<double>(ctx, {16});
            for (const auto variant : cg_variants) {
                Array<double> x = to_device(ctx, test::random_vector<double>(16, 1.0, 2.0));
                const auto r = cg_variant(variant, a, b, x);
                CHECK(r.converged());
                CHECK(r.iterations == 0);
                for (double v : x.get())
                    CHECK(v == 0.0);
            }
            Array<double> x = to_device(ctx, test::random_vector<double>(16, 1.0, 2.0));
            CHECK(bicgstab(a, b, x).iterations == 0);
        }
        SECTION("the iteration limit is a status") {
            Laplacian2D<double> a(ctx, 16, 16);
            const auto b = to_device(ctx, test::random_vector<double>(256, -1.0, 1.0));
            for (const auto variant : cg_variants) {
                SolverOptions<double> o;
                o.max_iterations = 5;
                Array<double> x;
                const auto r = cg_variant(variant, a, b, x, o);
                CHECK(r.status == SolverStatus::max_iterations);
                CHECK(r.iterations == 5);
                CHECK(r.relative_residual > 1e-3);
            }
        }
        SECTION("an exact initial guess takes no iteration") {
            Laplacian2D<double> a(ctx, 8, 8);
            const auto xs = to_device(ctx, test::random_vector<double>(64, -1.0, 1.0));
            Array<double> b = zeros<double>(ctx, {64});
            a.apply(xs, b);
            Array<double> x = xs.copy();
            const auto r = cg(a, b, x);
            CHECK(r.converged());
            CHECK(r.iterations == 0);
        }
    }
}

TEST_CASE("misuse throws before any work", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::vector<std::int32_t> rp{0, 1, 2}, ci{0, 1};
        const std::vector<double> v{1.0, 1.0};
        const Csr<double> wide(ctx, 2, 3, rp, ci, v);
        const auto b2 = ones<double>(ctx, {2});
        Array<double> x;
        const auto before = ctx.launch_count();
        CHECK_THROWS_AS(cg(wide, b2, x), ShapeError);
        CHECK_THROWS_AS(bicgstab(wide, b2, x), ShapeError);
        Laplacian2D<double> a(ctx, 4, 4);
        const auto b = ones<double>(ctx, {16});
        CHECK_THROWS_AS(cg(a, b2, x), ShapeError);
        Array<double> x5 = zeros<double>(ctx, {5});
        CHECK_THROWS_AS(cg(a, b, x5), ShapeError);
        SolverOptions<double> o;
        o.rtol = -1;
        CHECK_THROWS_AS(cg(a, b, x, o), InvalidArgument);
        o = {};
        o.check_interval = 0;
        CHECK_THROWS_AS(cg(a, b, x, o), InvalidArgument);
        o = {};
        o.preconditioner = Jacobi<double>(ones<double>(ctx, {9}));
        const auto before2 = ctx.launch_count();
        CHECK_THROWS_AS(cg(a, b, x, o), ShapeError);
        CHECK(ctx.launch_count() == before2);
        CHECK_THROWS_AS(Jacobi<double>(zeros<double>(ctx, {4})), InvalidArgument);
        (void)before;

        // The symmetry check on request: an asymmetric matrix is refused before any launch,
        // naming an entry and its mirror; a symmetric one solves; an operator without a stored
        // matrix cannot be checked.
        o = {};
        o.check_symmetry = true;
        const std::int64_t m = 5 + std::int64_t(test::rng()() % 6);
        const Csr<double> skewed(ctx, convection_diffusion(m, 0.25));
        const auto bm = ones<double>(ctx, {std::size_t(m * m)});
        Array<double> xm;
        const auto before3 = ctx.launch_count();
        CHECK_THROWS_WITH(cg(skewed, bm, xm, o), Contains("cg needs a symmetric matrix: entry (0, 1) = -0.75 but "
                                                          "(1, 0) = -1.25"));
        CHECK(ctx.launch_count() == before3);
        CHECK(cg(Csr<double>(ctx, convection_diffusion(m, 0.0)), bm, xm, o).converged());
        CHECK_THROWS_WITH(cg(a, b, x, o), Contains("check_symmetry needs an operator with asymmetry()"));
    }
}

TEST_CASE("asymmetry names the first entry that differs from its mirror", "[solver]") {
    // Unsorted rows, duplicates summed, explicit zeros against absent mirrors.
    const std::vector<std::int32_t> r{0, 0, 1, 1, 2, 2, 0}, c{1, 2, 0, 0, 0, 2, 1};
    const std::vector<double> v{1.0, 0.0, 1.5, 0.5, 3.0, 4.0, 1.0};
    auto h = from_coo<double, std::int32_t>(3, 3, r, c, v); // (0,1) = 2 = (1,0); (0,2) = 0, (2,0) = 3
    CHECK(sparse::asymmetry(h) == "entry (0, 2) = 0 but (2, 0) = 3");
    h.values[std::size_t(h.row_ptr[2])] = 0.0; // (2, 0) = 0 too: symmetric
    CHECK(sparse::asymmetry(h).empty());
    const std::vector<std::int32_t> rw{0}, cw{2};
    const std::vector<double> vw{1.0};
    CHECK(sparse::asymmetry(from_coo<double, std::int32_t>(2, 3, rw, cw, vw)) == "the matrix is 2 x 3, not square");
    // Within the tolerance, values agree.
    const std::vector<std::int32_t> rt{0, 1}, ct{1, 0};
    const std::vector<double> vt{1.0, 1.0 + 1e-15};
    CHECK(sparse::asymmetry(from_coo<double, std::int32_t>(2, 2, rt, ct, vt)).empty());
    CHECK_FALSE(sparse::asymmetry(from_coo<double, std::int32_t>(2, 2, rt, ct, vt), 1e-16).empty());
}

namespace {
// An operator that hides its FusedDotOperator member: the solver runs its own dot product.
template <class Op> struct Unfused {
    const Op& a;
    std::int64_t rows() const { return a.rows(); }
    std::int64_t cols() const { return a.cols(); }
    void apply(const Array<double>& x, Array<double>& y) const { a.apply(x, y); }
    void apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const {
        a.apply(alpha, x, beta, y);
    }
};
} // namespace

TEST_CASE("cg fuses a dot product into the operator's product where the operator can", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx)
    for (auto variant : {CgVariant::classic, CgVariant::pipelined})
        for (bool jacobi : {false, true}) {
            INFO("variant " << int(variant) << (jacobi ? ", Jacobi" : ""));
            const std::int64_t m = 24 + std::int64_t(test::rng()() % 16);
            const Laplacian2D<double> lap(ctx, m, m);
            const auto hb = test::random_vector<double>(std::size_t(m * m), -1.0, 1.0);
            const auto b = to_device(ctx, hb);
            SolverOptions<double> o;
            o.rtol = 1e-8;
            o.variant = variant;
            if (jacobi) o.preconditioner = Jacobi<double>(full<double>(ctx, {std::size_t(m * m)}, 4.0));
            auto run = [&](const auto& op) {
                Array<double> x;
                auto rep = cg(op, b, x, o);
                CHECK(rep.converged());
                CHECK(rep.relative_residual <= 1.1e-8);
                return rep;
            };
            // By default the solver fuses wherever the operator can; forced off, nowhere.
            CHECK(run(lap).fused_dot);
            o.fused_dots = false;
            const auto declined = run(lap);
            CHECK_FALSE(declined.fused_dot);
            o.fused_dots = true;
            const auto fused = run(lap), plain = run(Unfused<Laplacian2D<double>>{lap});
            CHECK(fused.fused_dot);
            CHECK_FALSE(plain.fused_dot);
            CHECK(fused.launches_per_iteration < plain.launches_per_iteration);
            CHECK(declined.iterations == plain.iterations);
            CHECK(std::abs(fused.iterations - plain.iterations) <= 2); // the dot's sums in another order
            // The same operator stored: csr_scalar fuses (the automatic choice for these rows), other
            // formats decline and the solver runs its own dot product.
            const sparse::Csr<double> mat(ctx, convection_diffusion(m, 0.0)); // c = 0: the Laplacian
            const auto stored = run(mat);
            CHECK(stored.fused_dot ==
                  (sparse::plan_spmv(mat, sparse::Format::automatic).format == sparse::Format::csr_scalar));
            CHECK(std::abs(stored.iterations - plain.iterations) <= 2);
        }
}

TEST_CASE("cg's automatic variant: pipelined on GPUs for small systems, classic otherwise", "[solver]") {
    CHECK(automatic_variant(1u << 16, DeviceType::gpu) == CgVariant::pipelined);
    CHECK(automatic_variant(1u << 19, DeviceType::gpu) == CgVariant::pipelined);
    CHECK(automatic_variant((1u << 19) + 1, DeviceType::gpu) == CgVariant::classic);
    CHECK(automatic_variant(1u << 16, DeviceType::cpu) == CgVariant::classic);
    CHECK(SolverOptions<double>{}.variant == CgVariant::automatic);
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t m = 20 + std::int64_t(test::rng()() % 20);
        const Laplacian2D<double> lap(ctx, m, m);
        const auto hb = test::random_vector<double>(std::size_t(m * m), -1.0, 1.0);
        const auto b = to_device(ctx, hb);
        SolverOptions<double> o; // automatic
        Array<double> x;
        const auto rep = cg(lap, b, x, o);
        const bool pipelined = automatic_variant(std::uint64_t(m * m), ctx.device().type()) == CgVariant::pipelined;
        CHECK(rep.method == (pipelined ? "pipelined cg" : "cg"));
        CHECK(rep.converged());
        // The same solve as the variant it picked, iteration for iteration.
        o.variant = pipelined ? CgVariant::pipelined : CgVariant::classic;
        Array<double> x2;
        const auto same = cg(lap, b, x2, o);
        CHECK(same.iterations == rep.iterations);
        CHECK(same.method == rep.method);
        // A zero right-hand side: x = 0 in no iterations, whatever the variant.
        Array<double> z;
        SolverOptions<double> oa;
        const auto none = cg(lap, zeros<double>(ctx, {std::size_t(m * m)}), z, oa);
        CHECK(none.iterations == 0);
    }
}

TEST_CASE("cg tries the matrix's SpMV formats in its first iterations and keeps the fastest", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx)
    for (auto variant : {CgVariant::classic, CgVariant::pipelined, CgVariant::ghysels_vanroose}) {
        INFO("variant " << int(variant));
        const std::int64_t m = 20 + std::int64_t(test::rng()() % 16);
        const auto h = convection_diffusion(m, 0.0); // the 2-D Laplacian, stored
        const sparse::Csr<double> a(ctx, h);
        const auto hb = test::random_vector<double>(std::size_t(m * m), -1.0, 1.0);
        const auto b = to_device(ctx, hb);
        SolverOptions<double> o;
        o.rtol = 1e-8;
        o.variant = variant;
        o.preconditioner = Jacobi<double>(a);
        auto run = [&](const auto& op) {
            Array<double> x;
            auto rep = cg(op, b, x, o);
            CHECK(rep.converged());
            CHECK(host_relative_residual(h, hb, x.get()) <= 1e-8);
            return rep;
        };
        // Off: the automatic format runs throughout. (Unset means off unless XGPU_AUTOTUNE is on.)
        o.try_forms = false;
        const auto plain = run(a);
        CHECK(plain.form_trial_ms.empty());
        CHECK(plain.operator_form == sparse::name(sparse::plan_spmv(a).format));
        const auto mode = tune::mode();
        if (mode == tune::Mode::off || mode == tune::Mode::cached) {
            o.try_forms.reset();
            CHECK(run(a).form_trial_ms.empty());
        }
        // On: every CSR format (the layouts not yet built are left out), 2 iterations each; the
        // iterates do not change beyond the sums' order, and the form kept is the fastest tried.
        o.try_forms = true;
        o.form_trial_iterations = 2;
        const auto tried = run(a);
        std::vector<std::string> names;
        for (const auto& [name, ms] : tried.form_trial_ms) {
            names.push_back(name);
            CHECK(ms > 0);
        }
        REQUIRE(names.size() == 3);
        CHECK(names[0] == plain.operator_form);
        for (const char* f : {"csr_scalar", "csr_vector", "merge_path"})
            CHECK(std::count(names.begin(), names.end(), f) == 1);
        const auto best = std::min_element(tried.form_trial_ms.begin(), tried.form_trial_ms.end(),
                                           [](const auto& x, const auto& y) { return x.second < y.second; });
        CHECK(tried.operator_form == best->first);
        CHECK(std::abs(tried.iterations - plain.iterations) <= 2);
        // A layout built before the solve joins the trial.
        Array<double> y = empty<double>(ctx, {std::size_t(m * m)});
        sparse::spmv(a, b, y, 1.0, 0.0, sparse::Format::sell);
        CHECK(run(a).form_trial_ms.size() == 4);
        // An operator of one form: nothing to try.
        const auto lap = run(Laplacian2D<double>(ctx, m, m));
        CHECK(lap.form_trial_ms.empty());
        CHECK(lap.operator_form.empty());
    }
}

TEST_CASE("cg on the matrix-free Laplacian, float, Chebyshev and user preconditioners", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        Laplacian3D<double> a(ctx, 12, 12, 12);
        const std::size_t n = 12 * 12 * 12;
        const auto b = to_device(ctx, test::random_vector<double>(n, -1.0, 1.0));
        SolverOptions<double> o;
        o.rtol = 1e-8;
        Array<double> x0;
        const auto plain = cg(a, b, x0, o);
        CHECK(plain.converged());
        CHECK(plain.relative_residual <= 1.1e-8);
        CHECK(plain.gbps > 0);

        Chebyshev<double> cheb(ctx, a, ChebyshevOptions{});
        CHECK(cheb.lmax() >= 12.0 * 0.9); // the 3-D Laplacian's largest eigenvalue is just below 12
        CHECK(cheb.lmax() <= 12.0 * 1.15);
        for (const auto variant : cg_variants) {
            SolverOptions<double> oc = o;
            oc.variant = variant;
            oc.preconditioner = cheb;
            Array<double> x;
            const auto r = cg(a, b, x, oc);
            INFO(r.method << " chebyshev: " << r.iterations << " iterations, plain " << plain.iterations);
            CHECK(r.converged());
            CHECK(r.relative_residual <= 2e-8);
            CHECK(r.iterations < plain.iterations / 2);
        }

        // A user preconditioner (Jacobi the solver cannot see through): the fused Jacobi's iterations.
        const auto h = convection_diffusion(16, 0.0); // SPD (symmetric: no convection)
        const Csr<double> s(ctx, h);
        const auto bs = to_device(ctx, test::random_vector<double>(256, -1.0, 1.0));
        for (const auto variant : cg_variants) {
            SolverOptions<double> oj, ou;
            oj.variant = ou.variant = variant;
            oj.preconditioner = Jacobi<double>(s);
            ou.preconditioner = UserJacobi{Jacobi<double>(s)};
            Array<double> xj, xu;
            const auto rj = cg(s, bs, xj, oj), ru = cg(s, bs, xu, ou);
            CHECK(rj.converged());
            CHECK(ru.converged());
            CHECK(std::abs(rj.iterations - ru.iterations) <= 1);
        }
        Array<double> xb;
        SolverOptions<double> ob;
        ob.preconditioner = UserJacobi{Jacobi<double>(s)};
        CHECK(bicgstab(s, bs, xb, ob).converged());

        // Float: a looser tolerance (Ghysels-Vanroose's recurrences drift too far in float to reach it).
        Laplacian2D<float> af(ctx, 30, 30);
        const auto bf = to_device(ctx, test::random_vector<float>(900, -1.0f, 1.0f));
        for (const auto variant : {CgVariant::classic, CgVariant::pipelined}) {
            SolverOptions<float> of;
            of.rtol = 1e-5;
            of.variant = variant;
            Array<float> xf;
            const auto r = cg(af, bf, xf, of);
            CHECK(r.converged());
            CHECK(r.relative_residual <= 3e-5);
        }

        // x as a strided view: solved in place through a copy.
        Laplacian2D<double> a2(ctx, 6, 6);
        const auto b2 = to_device(ctx, test::random_vector<double>(36, -1.0, 1.0));
        Array<double> big = zeros<double>(ctx, {72});
        Array<double> view = big(slice(0, 72, 2));
        const auto r2 = cg(a2, b2, view);
        CHECK(r2.converged());
        Array<double> check = zeros<double>(ctx, {36});
        Array<double> xv = view.copy();
        a2.apply(xv, check);
        const auto hc = check.get(), hb = b2.get();
        for (std::size_t i = 0; i < 36; ++i)
            CHECK(hc[i] == Approx(hb[i]).margin(1e-6));
    }
}

TEST_CASE("a converged report is true: the residual recomputed from x meets the tolerance", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t m = 32;
        const HostCsr<double> h = scaled_poisson(m, 1.2);
        const Csr<double> a(ctx, h);
        const auto hb = test::random_vector<double>(std::size_t(m * m), -1.0, 1.0);
        const auto b = to_device(ctx, hb);
        for (const Method method : methods) {
            SolverOptions<double> o;
            o.rtol = 1e-8;
            o.max_iterations = 20000; // CG needs 6000-7500 here on PoCL
            Array<double> x;
            const SolverReport r = solve(method, a, b, x, o);
            const double host = host_relative_residual(h, hb, x.get());
            INFO(name(method) << ": " << xgpu::name(r.status) << " after " << r.iterations << " iterations, "
                              << r.replacements << " replacements; relative residual reported " << r.relative_residual
                              << ", on the host " << host);
            // The report's residual is the true one (computed on the device, in another order).
            CHECK(std::abs(r.relative_residual - host) <= 1e-3 * host);
            if (r.converged())
                CHECK(host <= o.rtol * (1 + 1e-3));
            else
                CHECK_FALSE(r.relative_residual <= o.rtol); // NaN after a breakdown is not a claim either
            // BiCGStab may stall here, and restarted GMRES does (the restart drops what it learned).
            const bool cg_method = method != Method::bicgstab && method != Method::gmres && method != Method::fgmres;
            if (cg_method) CHECK(r.converged());
        }
    }
}

namespace {
// Rounding's drift, exaggerated: an operator whose first `wrong` products carry an error e (so the
// residual a method updates by recurrence parts from b - A x by about alpha e) and whose later
// products are exact.
struct DriftingOperator {
    const Csr<double>* a;
    Array<double> error;
    std::int64_t wrong;
    mutable std::int64_t calls = 0;
    std::int64_t rows() const { return a->rows(); }
    std::int64_t cols() const { return a->cols(); }
    void apply(const Array<double>& x, Array<double>& y) const { apply(1.0, x, 0.0, y); }
    void apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const {
        a->apply(alpha, x, beta, y);
        if (++calls <= wrong) y += error;
    }
};
} // namespace

// The diffusion operator on an m x m grid, m from `lo` to lo + 7 at random, with a random b.
struct DiffusionSystem {
    HostCsr<double> h;
    Csr<double> a;
    std::vector<double> hb;
    Array<double> b;
};
DiffusionSystem diffusion_system(const Context& ctx, std::int64_t lo) {
    const std::int64_t m = lo + std::int64_t(test::rng()() % 8);
    DiffusionSystem s{convection_diffusion(m, 0.0), {}, test::random_vector<double>(std::size_t(m * m), -1.0, 1.0), {}};
    s.a = Csr<double>(ctx, s.h);
    s.b = to_device(ctx, s.hb);
    return s;
}

TEST_CASE("a recurrence that drifted from b - A x is replaced until the true residual converges", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto [h, a, hb, b] = diffusion_system(ctx, 16);
        const auto error = to_device(ctx, test::random_vector<double>(hb.size(), -1e-4, 1e-4));
        for (const Method method : methods) {
            const DriftingOperator drifting{&a, error, 6};
            Array<double> x;
            const SolverReport r = solve(method, drifting, b, x, {});
            const double host = host_relative_residual(h, hb, x.get());
            INFO(name(method) << ": " << xgpu::name(r.status) << " after " << r.iterations << " iterations, "
                              << r.replacements << " replacements; relative residual reported " << r.relative_residual
                              << ", on the host " << host);
            CHECK(r.converged());
            // The first claim was the recurrence's alone; GMRES computes b - A x at each restart,
            // which corrects the drift before it claims anything.
            if (method != Method::gmres && method != Method::fgmres) CHECK(r.replacements >= 1);
            CHECK(host <= 1e-8 * (1 + 1e-6));
            CHECK(std::abs(r.relative_residual - host) <= 1e-3 * host);
        }
    }
}

TEST_CASE("a residual that the device meets but x does not ends in stagnation, not convergence", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        // A tolerance below what b - A x can show in double: the recurrences go on falling, the
        // true residual stops at rounding level, and replacing the residual stops helping.
        const auto [h, a, hb, b] = diffusion_system(ctx, 12);
        for (const Method method : methods) {
            SolverOptions<double> o;
            o.rtol = 1e-19;
            Array<double> x;
            const SolverReport r = solve(method, a, b, x, o);
            INFO(name(method) << ": " << xgpu::name(r.status) << " after " << r.iterations << " iterations, "
                              << r.replacements << " replacements, relative residual " << r.relative_residual);
            CHECK_FALSE(r.converged());
            CHECK(r.relative_residual > o.rtol);
            CHECK(host_relative_residual(h, hb, x.get()) < 1e-12); // x is still the best the method found
            // The pipelined forms' recurrent denominators may also break down at rounding level.
            const bool pipelined = method == Method::pipelined || method == Method::ghysels_vanroose;
            CHECK((r.status == SolverStatus::stagnation || r.status == SolverStatus::max_iterations ||
                   (pipelined && r.status == SolverStatus::breakdown)));
            CHECK(r.replacements >= 1);
        }
    }
}

TEST_CASE("b and x may have any shape of the operator's size; other sizes are refused before any launch", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        // A contiguous nx x ny grid for the nx x ny stencil, as numpy users hold it.
        const std::int64_t nx = 20 + std::int64_t(test::rng()() % 8), ny = 24;
        const Laplacian2D<double> lap(ctx, nx, ny);
        const HostCsr<double> h = [&] { // the same operator as a matrix, for the host reference
            std::vector<std::int32_t> r, c;
            std::vector<double> v;
            for (std::int64_t j = 0; j < ny; ++j)
                for (std::int64_t i = 0; i < nx; ++i) {
                    const auto k = std::int32_t(j * nx + i);
                    const auto add = [&](std::int64_t col, double val) {
                        r.push_back(k);
                        c.push_back(std::int32_t(col));
                        v.push_back(val);
                    };
                    add(k, 4.0);
                    if (i > 0) add(k - 1, -1.0);
                    if (i + 1 < nx) add(k + 1, -1.0);
                    if (j > 0) add(k - nx, -1.0);
                    if (j + 1 < ny) add(k + nx, -1.0);
                }
            return from_coo<double, std::int32_t>(nx * ny, nx * ny, r, c, v);
        }();
        const Csr<double> csr(ctx, h);
        const auto n = std::size_t(nx * ny);
        const auto hb = test::random_vector<double>(n, -1.0, 1.0);
        const Shape grid{std::size_t(ny), std::size_t(nx)};
        const Array<double> b = to_device(ctx, hb).reshape(grid);
        for (const Method method : methods) {
            INFO(name(method));
            Array<double> x = zeros<double>(ctx, grid);
            const SolverReport r = solve(method, lap, b, x, {});
            CHECK(r.converged());
            CHECK(x.shape() == grid);
            CHECK(host_relative_residual(h, hb, x.get()) <= 1e-8 * (1 + 1e-6));
            // A column (n, 1) on the matrix, x a strided view into a larger array.
            Array<double> big = zeros<double>(ctx, {2 * n});
            Array<double> xs = big(slice(0, std::int64_t(2 * n), 2));
            const SolverReport r2 = solve(method, csr, b.reshape({n, 1}), xs, {});
            CHECK(r2.converged());
            CHECK(host_relative_residual(h, hb, xs.get()) <= 1e-8 * (1 + 1e-6));
            const auto all = big.get();
            for (std::size_t i = 1; i < all.size(); i += 2)
                REQUIRE(all[i] == 0.0); // the view's gaps untouched
        }
        // Sizes that differ from the operator's: refused before any launch, naming the sizes.
        const Array<double> b_wrong = zeros<double>(ctx, {std::size_t(ny - 1), std::size_t(nx)});
        Array<double> x_wrong = zeros<double>(ctx, {std::size_t(ny + 1), std::size_t(nx)}), none;
        for (const Method method : methods) {
            INFO(name(method));
            CHECK(launches_before_refusal<ShapeError>(ctx, [&] { solve(method, lap, b_wrong, none, {}); }) == 0);
            CHECK(launches_before_refusal<ShapeError>(ctx, [&] { solve(method, csr, b, x_wrong, {}); }) == 0);
        }
        CHECK_THROWS_WITH(cg(lap, b, x_wrong), Contains("x has " + std::to_string(n + std::size_t(nx))));
    }
}

TEST_CASE("every public entry of the sparse and solver layers refuses misuse before any launch", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t m = 6 + std::int64_t(test::rng()() % 5);
        const auto n = std::size_t(m * m);
        const Csr<double> a(ctx, convection_diffusion(m, 0.0));
        const std::vector<std::int32_t> rp{0, 1, 2}, ci{0, 1};
        const std::vector<double> v{1.0, 1.0};
        const Csr<double> wide(ctx, 2, 3, rp, ci, v);
        const Laplacian2D<double> lap2(ctx, m, m);
        const Laplacian3D<double> lap3(ctx, m, m, 2);
        const auto x = to_device(ctx, test::random_vector<double>(n, -1.0, 1.0));
        Array<double> y = zeros<double>(ctx, {n}), short_y = zeros<double>(ctx, {n - 1}), none;
        Array<double> partial = zeros<double>(ctx, {8}),
                      huge_partial = zeros<double>(ctx, {(std::size_t(1) << 20) + 1});
        const auto one = ones<double>(ctx, {1}), two = ones<double>(ctx, {2});
        const Context other = Context::from_env();
        const auto x_other = zeros<double>(other, {n});

        // The products.
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { spmv(a, x, short_y); }) == 0);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { spmv(a, x, short_y, one, one); }) == 0);
        CHECK(launches_before_refusal<InvalidArgument>(ctx, [&] { spmv(a, x, y, two, one); }) == 0);
        CHECK(launches_before_refusal<InvalidArgument>(ctx, [&] { spmv(a, x, y, one, none); }) == 0);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { a.apply(x, short_y); }) == 0);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { a.apply(2.0, short_y, 1.0, y); }) == 0);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { a.apply_dot(x, short_y, partial); }) == 0);
        CHECK(launches_before_refusal<InvalidArgument>(ctx, [&] {
                  Array<double> yy = x;
                  spmv(a, x, yy);
              }) == 0);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { lap2.apply(x, short_y); }) == 0);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { lap3.apply(x, y); }) == 0);
        CHECK(launches_before_refusal<InvalidArgument>(ctx, [&] { lap2.apply_dot(x, y, huge_partial); }) == 0);
        CHECK(launches_before_refusal<InvalidArgument>(ctx, [&] { lap2.apply_dot(x, y, none); }) == 0);
        if (!(other == ctx)) CHECK(launches_before_refusal<InvalidArgument>(ctx, [&] { spmv(a, x_other, y); }) == 0);

        // The preconditioners.
        CHECK(launches_before_refusal<InvalidArgument>(ctx, [&] { Jacobi<double> j(zeros<double>(ctx, {n})); }) == 0);
        const Jacobi<double> jac(a);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { jac.apply(x, short_y); }) == 0);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { Chebyshev<double> c(ctx, wide); }) == 0);
        ChebyshevOptions bad;
        bad.degree = 0;
        CHECK(launches_before_refusal<InvalidArgument>(ctx, [&] { Chebyshev<double> c(ctx, a, bad); }) == 0);
        const Chebyshev<double> cheb(ctx, a);
        CHECK(launches_before_refusal<ShapeError>(ctx, [&] { cheb.apply(x, short_y); }) == 0);

        // The solvers: every check of prepare() and the symmetry check.
        const auto b = to_device(ctx, test::random_vector<double>(n, -1.0, 1.0));
        Array<double> xs;
        for (const Method method : methods) {
            INFO(name(method));
            const auto refused = [&]<class E>(E, const auto& op, const Array<double>& bb, Array<double>& xx,
                                              const SolverOptions<double>& o) {
                return launches_before_refusal<E>(ctx, [&] { solve(method, op, bb, xx, o); });
            };
            SolverOptions<double> o;
            CHECK(refused(ShapeError(""), wide, two, xs, o) == 0);
            CHECK(refused(InvalidArgument(""), a, none, xs, o) == 0);
            CHECK(refused(ShapeError(""), a, short_y, xs, o) == 0);
            CHECK(refused(ShapeError(""), a, b, short_y, o) == 0);
            Array<double> aliased = b;
            CHECK(refused(InvalidArgument(""), a, b, aliased, o) == 0);
            o.rtol = -1;
            CHECK(refused(InvalidArgument(""), a, b, xs, o) == 0);
            o = {};
            o.max_iterations = -1;
            CHECK(refused(InvalidArgument(""), a, b, xs, o) == 0);
            o = {};
            o.ring_depth = 0;
            CHECK(refused(InvalidArgument(""), a, b, xs, o) == 0);
            o = {};
            o.replacement_interval = -2;
            CHECK(refused(InvalidArgument(""), a, b, xs, o) == 0);
            for (const int restart : {0, max_restart + 1}) {
                o = {};
                o.restart = restart;
                CHECK(refused(InvalidArgument(""), a, b, xs, o) == 0);
            }
            o = {};
            o.preconditioner = Jacobi<double>(ones<double>(ctx, {n + 1}));
            CHECK(refused(ShapeError(""), a, b, xs, o) == 0);
            if (!(other == ctx)) {
                Array<double> xo = zeros<double>(other, {n});
                CHECK(refused(InvalidArgument(""), a, b, xo, {}) == 0);
            }
        }
    }
}

namespace {
// An operator that throws on its k-th product (after k - 1 products were enqueued).
struct FailingOperator {
    const Csr<double>* a;
    std::int64_t fail_at;
    mutable std::int64_t calls = 0;
    std::int64_t rows() const { return a->rows(); }
    std::int64_t cols() const { return a->cols(); }
    void apply(const Array<double>& x, Array<double>& y) const { apply(1.0, x, 0.0, y); }
    void apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const {
        if (++calls == fail_at) throw std::runtime_error("the operator failed");
        a->apply(alpha, x, beta, y);
    }
};
} // namespace

TEST_CASE("an exception mid-solve reaches the caller and leaves the context usable", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto [h, a, hb, b] = diffusion_system(ctx, 20);
        for (const Method method : methods) {
            INFO(name(method));
            // The callback throws at its k-th call while copies into the ring are in flight
            // (a check every iteration, four in flight).
            for (const int k : {1, 2, 7}) {
                INFO("the progress callback throws at call " << k);
                SolverOptions<double> o;
                o.check_interval = 1;
                o.ring_depth = 4;
                int calls = 0;
                o.progress = [&](std::int64_t, double) {
                    if (++calls == k) throw std::runtime_error("stop here");
                };
                Array<double> x;
                CHECK_THROWS_WITH(solve(method, a, b, x, o), "stop here");
                CHECK(calls == k);
            }
            // The operator throws after some of its products were enqueued.
            for (const std::int64_t k : {1, 2, 15}) {
                INFO("the operator throws at product " << k);
                const FailingOperator failing{&a, k};
                Array<double> x;
                CHECK_THROWS_WITH(solve(method, failing, b, x, {}), "the operator failed");
            }
            // The next solve on the same context is whole.
            Array<double> x;
            const SolverReport r = solve(method, a, b, x, {});
            CHECK(r.converged());
            CHECK(host_relative_residual(h, hb, x.get()) <= 1e-8 * (1 + 1e-6));
        }
    }
}

namespace {
// A stand-in for an operator spread over `copies` processes that all hold the same rows: every
// global sum is `copies` times this process's. The solve of block-diag(A, .., A) x = (b, .., b)
// is then each block's solve of A x = b with the same scalars, so it must match the solve on one
// process, iteration for iteration; a dot product the solver failed to sum would not.
struct MirrorSum final : GlobalSum {
    int copies = 2;
    std::string refusal; // what another process refuses with
    mutable int sums = 0, started = 0, agreements = 0;
    mutable double* pending = nullptr;
    mutable int pending_count = 0;
    void sum(double* values, int count) const override {
        ++sums;
        for (int k = 0; k < count; ++k)
            values[k] *= copies;
    }
    void start_sum(double* values, int count) const override {
        ++started;
        pending = values;
        pending_count = count;
    }
    void finish_sum() const override {
        for (int k = 0; k < pending_count; ++k)
            pending[k] *= copies;
        pending = nullptr;
    }
    std::string agree(const std::string& error) const override {
        ++agreements;
        return error.empty() ? refusal : error;
    }
    int processes() const override { return copies; }
};
struct MirroredOperator {
    const Csr<double>* a;
    const MirrorSum* global;
    std::int64_t rows() const { return a->rows(); }
    std::int64_t cols() const { return a->cols(); }
    void apply(const Array<double>& x, Array<double>& y) const { a->apply(x, y); }
    void apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const {
        a->apply(alpha, x, beta, y);
    }
    const GlobalSum* global_sum() const { return global; }
};
} // namespace

TEST_CASE("over several processes every dot product is summed across them", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto [h, a, hb, b] = diffusion_system(ctx, 12);
        for (const bool jacobi : {false, true}) {
            for (const Method method : methods) {
                INFO(name(method) << (jacobi ? " with Jacobi" : ""));
                SolverOptions<double> o;
                o.check_interval = 1 + int(test::rng()() % 4);
                if (jacobi) o.preconditioner = Jacobi<double>(a);
                Array<double> x1, x2;
                const SolverReport one = solve(method, a, b, x1, o);
                MirrorSum sum;
                const SolverReport spread = solve(method, MirroredOperator{&a, &sum}, b, x2, o);
                CHECK(one.converged());
                CHECK(spread.converged());
                CHECK(spread.iterations == one.iterations);
                CHECK(sum.agreements == 2); // on the options, then on the input
                CHECK(sum.sums + sum.started >= spread.iterations);
                if (method == Method::ghysels_vanroose) CHECK(sum.started >= spread.iterations);
                CHECK(std::abs(spread.relative_residual - one.relative_residual) <= 1e-6 * one.relative_residual);
                const auto v1 = x1.get(), v2 = x2.get();
                double diff = 0, scale = 0;
                for (std::size_t i = 0; i < v1.size(); ++i) {
                    diff = std::max(diff, std::abs(v1[i] - v2[i]));
                    scale = std::max(scale, std::abs(v1[i]));
                }
                CHECK(diff <= 1e-9 * scale);
                CHECK(host_relative_residual(h, hb, v2) <= 1e-8 * (1 + 1e-6));
            }
        }
    }
}

TEST_CASE("over several processes a refusal on one is a refusal on all, before any launch", "[solver]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto [h, a, hb, b] = diffusion_system(ctx, 4);
        MirrorSum sum;
        sum.refusal = "Ixgpu: cg: b has 3 elements, the operator 4 rows (on process 1)";
        const MirroredOperator op{&a, &sum};
        for (const Method method : methods) {
            INFO(name(method));
            Array<double> x;
            const std::uint64_t before = ctx.launch_count();
            CHECK_THROWS_WITH(solve(method, op, b, x, {}),
                              "xgpu: cg: b has 3 elements, the operator 4 rows (on process 1)");
            CHECK(ctx.launch_count() == before);
        }
        sum.refusal = "Sxgpu: cg: x has 5 elements, the operator 4 columns";
        Array<double> x;
        CHECK_THROWS_AS(solve(Method::classic, op, b, x, {}), ShapeError);
    }
}
