// poisson: a Poisson problem (or any Matrix Market file) solved by a Krylov method on the default
// device (XGPU_BACKEND, XGPU_DEVICE). The right-hand side is made from a known solution, so the
// error is printed beside the residual.
//
//   poisson --2d 1024 --solver pipecg --precond jacobi --tol 1e-8
//   poisson --matrix bcsstk04.mtx --solver cg --format sell
//
// On a terminal a one-line progress display is redrawn at every check; XGPU_VERBOSE=1 prints a
// line per check instead.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <xgpu/reduction.hpp>
#include <xgpu/solver.hpp>
#include <xgpu/sparse.hpp>

using namespace xgpu;

namespace {

// The negative Laplacian with zero Dirichlet boundaries on an n^2 or n^3 grid, as host CSR.
sparse::HostCsr<double> laplacian(std::int64_t n, int dims) {
    sparse::HostCsr<double> h;
    const std::int64_t rows = dims == 2 ? n * n : n * n * n;
    h.rows = h.cols = rows;
    h.row_ptr.assign(std::size_t(rows) + 1, 0);
    h.col_idx.reserve(std::size_t(rows) * (2 * dims + 1));
    h.values.reserve(std::size_t(rows) * (2 * dims + 1));
    const std::int64_t plane = n * n;
    for (std::int64_t i = 0; i < rows; ++i) {
        const std::int64_t x = i % n, y = (i / n) % n, z = i / plane;
        const auto add = [&](std::int64_t c, double v) {
            h.col_idx.push_back(std::int32_t(c));
            h.values.push_back(v);
        };
        if (dims == 3 && z > 0) add(i - plane, -1);
        if (y > 0) add(i - n, -1);
        if (x > 0) add(i - 1, -1);
        add(i, 2.0 * dims);
        if (x + 1 < n) add(i + 1, -1);
        if (y + 1 < n) add(i + n, -1);
        if (dims == 3 && z + 1 < n) add(i + plane, -1);
        h.row_ptr[std::size_t(i) + 1] = std::int32_t(h.values.size());
    }
    return h;
}

// A CSR matrix applied in a chosen SpMV format.
struct Formatted {
    using index_type = std::int32_t;
    sparse::Csr<double> a;
    sparse::Format format;
    std::int64_t rows() const { return a.rows(); }
    std::int64_t cols() const { return a.cols(); }
    std::size_t nnz() const { return a.nnz(); }
    Array<double> diagonal() const { return a.diagonal(); }
    void apply(const Array<double>& x, Array<double>& y) const { sparse::spmv(a, x, y, 1.0, 0.0, format); }
    void apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const {
        sparse::spmv(a, x, y, alpha, beta, format);
    }
    // The solver's dot product fused into the product where the format allows (csr_scalar).
    bool apply_dot(const Array<double>& x, Array<double>& y, Array<double>& partial) const {
        return a.apply_dot(x, y, partial, format);
    }
};

// XGPU_VERBOSE as the library reads its switches: on/off, 1/0, true/false, yes/no in any case;
// unset or empty is off; anything else is refused, naming the variable.
bool verbose_from_env() {
    const char* v = std::getenv("XGPU_VERBOSE");
    std::string s = v ? v : "";
    for (auto& ch : s)
        ch = char(std::tolower(static_cast<unsigned char>(ch)));
    if (s == "1" || s == "on" || s == "true" || s == "yes") return true;
    if (s.empty() || s == "0" || s == "off" || s == "false" || s == "no") return false;
    throw InvalidArgument("XGPU_VERBOSE='" + std::string(v) + "': use on/off, 1/0, true/false or yes/no");
}

struct Settings {
    std::optional<std::int64_t> n2, n3;
    std::string matrix, solver = "auto", precond = "none", format = "auto", fuse = "auto", try_formats = "auto";
    double tol = 1e-8;
    int check = 10, replace = 50, degree = 4;
    int repeat = 0; // timed solves after an untimed warm-up one (0: the one solve, timed)
    std::int64_t max_iterations = 0;
    bool verbose = false; // XGPU_VERBOSE
};

template <class Op>
int run(const Context& ctx, const Op& a, const Settings& s, std::int64_t nnz, const std::string& format) {
    const std::size_t n = std::size_t(a.rows());
    // The known solution: smooth plus a little of every frequency.
    std::vector<double> xs(n);
    for (std::size_t i = 0; i < n; ++i)
        xs[i] = 1.0 + std::sin(0.001 * double(i)) + 0.01 * std::sin(0.7 * double(i));
    const Array<double> xstar = to_device(ctx, xs);
    Array<double> b = empty<double>(ctx, {n});
    a.apply(xstar, b);

    SolverOptions<double> o;
    o.rtol = s.tol;
    o.check_interval = s.check;
    o.replacement_interval = s.replace;
    o.max_iterations = s.max_iterations;
    if (s.precond == "jacobi") {
        if constexpr (requires { a.diagonal(); })
            o.preconditioner = Jacobi<double>(a.diagonal());
        else // the stencils: a constant diagonal
            o.preconditioner =
                Jacobi<double>(full<double>(ctx, {n}, std::is_same_v<Op, Laplacian2D<double>> ? 4.0 : 6.0));
    } else if (s.precond == "poly") {
        ChebyshevOptions co;
        co.degree = s.degree;
        o.preconditioner = Chebyshev<double>(ctx, a, co);
    }
    const bool tty = isatty(fileno(stdout));
    const bool verbose = s.verbose;
    auto last = std::chrono::steady_clock::now();
    std::int64_t last_it = 0;
    o.progress = [&](std::int64_t it, double rel) {
        const auto now = std::chrono::steady_clock::now();
        const double dt = std::chrono::duration<double>(now - last).count();
        const double rate = dt > 0 ? double(it - last_it) / dt : 0;
        last = now;
        last_it = it;
        if (verbose)
            std::printf("check: iteration %lld, relative residual %.3e, %.0f iterations/s\n", (long long)it, rel, rate);
        else if (tty) {
            std::printf("\r  iteration %8lld  residual %.3e  %8.0f it/s ", (long long)it, rel, rate);
            std::fflush(stdout);
        }
    };

    if (s.fuse != "auto") o.fused_dots = s.fuse == "on";
    if (s.try_formats != "auto") o.try_forms = s.try_formats == "on";
    o.variant = s.solver == "pipecg"      ? CgVariant::pipelined
                : s.solver == "pipecg-gv" ? CgVariant::ghysels_vanroose
                : s.solver == "cg"        ? CgVariant::classic
                                          : CgVariant::automatic;
    const auto solve = [&](Array<double>& x) { return s.solver == "bicgstab" ? bicgstab(a, b, x, o) : cg(a, b, x, o); };
    Array<double> x = zeros<double>(ctx, {n});
    SolverReport r = solve(x);
    // --repeat R: that solve was the warm-up (programs loaded, memory pooled); R more from x = 0,
    // the median's report kept, the range printed.
    std::vector<SolverReport> timed;
    std::string spread;
    for (int i = 0; i < s.repeat; ++i) {
        x.fill(0.0);
        timed.push_back(solve(x));
    }
    if (!timed.empty()) {
        std::vector<SolverReport> sorted = timed;
        std::sort(sorted.begin(), sorted.end(),
                  [](const SolverReport& p, const SolverReport& q) { return p.ms_per_iteration < q.ms_per_iteration; });
        r = sorted[sorted.size() / 2];
        char line[160];
        std::snprintf(line, sizeof line, "repeats:          %d after a warm-up solve, ms per iteration %.4f .. %.4f\n",
                      s.repeat, sorted.front().ms_per_iteration, sorted.back().ms_per_iteration);
        spread = line;
    }
    if (tty && !verbose) std::printf("\r%60s\r", "");
    const double err = double(norm(x - xstar).get()) / double(norm(xstar).get());

    std::printf("backend:          %s\n", ctx.backend().c_str());
    std::printf("device:           %s\n", ctx.device().name().c_str());
    std::printf("rows:             %zu\n", n);
    std::printf("nnz:              %lld\n", (long long)nnz);
    std::printf("format:           %s\n", r.operator_form.empty() ? format.c_str() : r.operator_form.c_str());
    if (!r.form_trial_ms.empty()) {
        std::printf("format trial:    ");
        for (const auto& [f, ms] : r.form_trial_ms)
            std::printf(" %s %.4f ms", f.c_str(), ms);
        std::printf(" (a product and its dot product, median; kept %s)\n", r.operator_form.c_str());
    }
    std::printf("solver:           %s, preconditioner %s\n", r.method.c_str(), s.precond.c_str());
    std::printf("status:           %s", name(r.status));
    if (r.status == SolverStatus::breakdown || r.status == SolverStatus::nan || r.status == SolverStatus::stagnation)
        std::printf(" (at iteration %lld)", (long long)r.status_iteration);
    std::printf("\niterations:       %lld", (long long)r.iterations);
    if (r.replacements > 0)
        std::printf(" (%lld residual replacements: the recurrence had drifted from b - A x)",
                    (long long)r.replacements);
    std::printf("\n");
    std::printf("true residual:    %.3e (relative %.3e)\n", r.residual, r.relative_residual);
    std::printf("error:            %.3e (relative, against the known solution)\n", err);
    std::printf("time:             %.3f s, %.4f ms per iteration%s\n", r.seconds, r.ms_per_iteration,
                timed.empty() ? "" : " (the median solve)");
    std::printf("%s", spread.c_str());
    std::printf("launches:         %.2f per iteration%s\n", r.launches_per_iteration,
                r.fused_dot ? " (a dot product fused into the operator's)" : "");
    if (r.gbps > 0)
        std::printf("bandwidth:        %.1f GB/s (%.1f MB per iteration)\n", r.gbps, r.bytes_per_iteration * 1e-6);
    else
        std::printf("bandwidth:        unknown for this operator\n");
    return r.converged() ? 0 : 2;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Solves A x = b on the default device (XGPU_BACKEND, XGPU_DEVICE) with a Krylov method"};
    Settings s;
    auto* o2 = app.add_option("--2d", s.n2, "the 2-D Poisson problem on an N x N grid");
    auto* o3 = app.add_option("--3d", s.n3, "the 3-D Poisson problem on an N x N x N grid");
    auto* om = app.add_option("--matrix", s.matrix, "a Matrix Market file")->check(CLI::ExistingFile);
    o2->excludes(o3)->excludes(om);
    o3->excludes(om);
    app.add_option("--solver", s.solver,
                   "auto (CG: pipelined on GPUs up to 2^19 unknowns, else classic), cg (classic), pipecg "
                   "(Chronopoulos-Gear), pipecg-gv (Ghysels-Vanroose) or bicgstab")
        ->check(CLI::IsMember({"auto", "cg", "pipecg", "pipecg-gv", "bicgstab"}))
        ->capture_default_str();
    app.add_option("--precond", s.precond, "none, jacobi or poly (Chebyshev)")
        ->check(CLI::IsMember({"none", "jacobi", "poly"}))
        ->capture_default_str();
    app.add_option("--tol", s.tol, "relative tolerance")->capture_default_str();
    app.add_option("--format", s.format, "auto, csr, csr_scalar, csr_vector, merge_path, sell, packeted or stencil")
        ->capture_default_str();
    app.add_option("--check", s.check, "check interval k")->capture_default_str();
    app.add_option("--fuse", s.fuse, "take dot products from the operator's product: auto (wherever it can), on or off")
        ->check(CLI::IsMember({"auto", "on", "off"}))
        ->capture_default_str();
    app.add_option("--try-formats", s.try_formats,
                   "with --format auto, CG tries the CSR formats in its first iterations and keeps the fastest: "
                   "auto (where XGPU_AUTOTUNE is on), on or off")
        ->check(CLI::IsMember({"auto", "on", "off"}))
        ->capture_default_str();
    app.add_option("--replace", s.replace, "residual replacement interval of pipecg (0: never)")->capture_default_str();
    app.add_option("--degree", s.degree, "degree of the polynomial preconditioner")->capture_default_str();
    app.add_option("--repeat", s.repeat,
                   "timed solves after an untimed warm-up solve; the median's figures are printed (0: one timed solve)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--max-iterations", s.max_iterations, "0: 10 x rows")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        s.verbose = verbose_from_env();
        const Context ctx = Context::from_env();
        // No problem named: the 2-D Poisson problem at a size that shows the device's speed and
        // takes seconds (4096^2 on GPUs, 512^2 on CPUs).
        if (!s.n2 && !s.n3 && s.matrix.empty()) s.n2 = ctx.device().info().type == DeviceType::cpu ? 512 : 4096;
        if (s.format == "stencil") {
            if (s.n2)
                return run(ctx, Laplacian2D<double>(ctx, *s.n2, *s.n2), s, 5 * *s.n2 * *s.n2, "stencil (matrix-free)");
            if (s.n3)
                return run(ctx, Laplacian3D<double>(ctx, *s.n3, *s.n3, *s.n3), s, 7 * *s.n3 * *s.n3 * *s.n3,
                           "stencil (matrix-free)");
            throw InvalidArgument("--format stencil needs --2d or --3d");
        }
        const auto host = s.matrix.empty() ? laplacian(s.n2 ? *s.n2 : *s.n3, s.n2 ? 2 : 3)
                                           : sparse::read_matrix_market<double>(s.matrix);
        // Automatic: the matrix itself, whose SpMV formats CG may try in its first iterations.
        if (s.format == "auto") {
            const sparse::Csr<double> a(ctx, host);
            return run(ctx, a, s, std::int64_t(host.nnz()), sparse::name(sparse::plan_spmv(a).format));
        }
        Formatted a{sparse::Csr<double>(ctx, host), sparse::Format::automatic};
        if (s.format == "csr")
            a.format =
                ctx.device().info().type == DeviceType::cpu ? sparse::Format::csr_scalar : sparse::Format::csr_vector;
        else if (s.format != "auto")
            a.format = sparse::parse_format(s.format);
        const auto plan = sparse::plan_spmv(a.a, a.format);
        return run(ctx, a, s, std::int64_t(host.nnz()), sparse::name(plan.format));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "poisson: %s\n", e.what());
        return 1;
    }
}
