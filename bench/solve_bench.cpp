// solve-bench: time to solution (preconditioner setup + solve, from x = 0 to rtol) of the Poisson
// problem, for CG, CG with Chebyshev and CG with smoothed aggregation multigrid (float64 and
// float32 hierarchies; amg-cheb: the Chebyshev smoother), and GMRES(30) alone and with the
// multigrid (gmres, amg-gmres), side by side on the default device (XGPU_BACKEND, XGPU_DEVICE).
//
//   solve-bench [--2d N | --3d N] [--tol 1e-8] [--repeat R]
//               [--methods cg,cheb,amg,amg-f32,amg-cheb,gmres,amg-gmres]
//
// Each method runs once untimed (kernels compiled, memory pooled), then R times; the median run's
// wall time (the host's clock around setup and solve, the device finished) is printed with its
// setup, solve, iterations and the true relative residual.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <xgpu/amg.hpp>
#include <xgpu/solver.hpp>
#include <xgpu/sparse.hpp>

using namespace xgpu;

namespace {

struct Run {
    double setup = 0, solve = 0;
    std::int64_t iterations = 0;
    double residual = 0;
    bool converged = false;
    double total() const { return setup + solve; }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Run run(const Context& ctx, const sparse::Csr<double>& a, const Array<double>& b, const std::string& method,
        double tol) {
    ctx.current_queue().finish();
    Run r;
    auto t0 = std::chrono::steady_clock::now();
    SolverOptions<double> o;
    o.rtol = tol;
    o.variant = CgVariant::classic;
    if (method == "cheb") {
        o.preconditioner = Chebyshev<double>(ctx, a);
    } else if (method == "amg" || method == "amg-f32" || method == "amg-cheb" || method == "amg-gmres") {
        amg::Options ao;
        ao.single_precision = method == "amg-f32";
        if (method == "amg-cheb") ao.smoother = amg::Smoother::chebyshev;
        o.preconditioner = amg::SmoothedAggregation<double>(a, ao);
    } else if (method != "cg" && method != "gmres") {
        throw InvalidArgument("solve-bench: no method '" + method +
                              "' (cg, cheb, amg, amg-f32, amg-cheb, gmres, amg-gmres)");
    }
    ctx.current_queue().finish();
    r.setup = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    Array<double> x = zeros<double>(ctx, {std::size_t(a.rows())});
    const bool krylov_gmres = method == "gmres" || method == "amg-gmres";
    const SolverReport rep = krylov_gmres ? gmres(a, b, x, o) : cg(a, b, x, o);
    ctx.current_queue().finish();
    r.solve = seconds_since(t0);
    r.iterations = rep.iterations;
    r.residual = rep.relative_residual;
    r.converged = rep.converged();
    return r;
}

} // namespace

int main(int argc, char** argv) {
    std::int64_t n2 = 0, n3 = 0;
    double tol = 1e-8;
    int repeat = 3;
    std::string methods = "cg,cheb,amg,amg-f32";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!value) {
            std::fprintf(stderr, "solve-bench: %s needs a value\n", arg.c_str());
            return 1;
        }
        if (arg == "--2d")
            n2 = std::atoll(value);
        else if (arg == "--3d")
            n3 = std::atoll(value);
        else if (arg == "--tol")
            tol = std::atof(value);
        else if (arg == "--repeat")
            repeat = std::max(1, std::atoi(value));
        else if (arg == "--methods")
            methods = value;
        else {
            std::fprintf(stderr, "solve-bench: unknown option %s\n", arg.c_str());
            return 1;
        }
        ++i;
    }
    try {
        const Context ctx = Context::from_env();
        if (!n2 && !n3) n2 = ctx.device().type() == DeviceType::cpu ? 1024 : 4096;
        const auto host = n2 ? sparse::poisson<double>(n2, n2) : sparse::poisson<double>(n3, n3, n3);
        const sparse::Csr<double> a(ctx, host);
        // b from a smooth solution plus a little of every frequency (as examples/poisson).
        std::vector<double> xs(std::size_t(a.rows()));
        for (std::size_t i = 0; i < xs.size(); ++i)
            xs[i] = 1.0 + std::sin(0.001 * double(i)) + 0.01 * std::sin(0.7 * double(i));
        Array<double> b = empty<double>(ctx, {xs.size()});
        a.apply(to_device(ctx, xs), b);
        std::printf("%s, %s: %s Poisson %lld^%d, %lld rows, f64, rtol %.0e, median of %d after a warm-up\n",
                    ctx.backend().c_str(), ctx.device().name().c_str(), n2 ? "2-D" : "3-D", (long long)(n2 ? n2 : n3),
                    n2 ? 2 : 3, (long long)a.rows(), tol, repeat);
        std::printf("%-10s %11s %10s %10s %11s %12s %12s\n", "method", "iterations", "setup s", "solve s", "total s",
                    "residual", "ms/iteration");
        std::stringstream list(methods);
        for (std::string m; std::getline(list, m, ',');) {
            run(ctx, a, b, m, tol); // warm-up
            std::vector<Run> runs;
            for (int k = 0; k < repeat; ++k)
                runs.push_back(run(ctx, a, b, m, tol));
            std::sort(runs.begin(), runs.end(), [](const Run& p, const Run& q) { return p.total() < q.total(); });
            const Run& r = runs[runs.size() / 2];
            std::printf("%-10s %11lld %10.4f %10.4f %11.4f %12.3e %12.4f%s\n", m.c_str(), (long long)r.iterations,
                        r.setup, r.solve, r.total(), r.residual,
                        r.iterations ? 1e3 * r.solve / double(r.iterations) : 0.0,
                        r.converged ? "" : " (not converged)");
            std::fflush(stdout);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "solve-bench: %s\n", e.what());
        return 1;
    }
}
