// poisson: a Poisson problem (or any Matrix Market file) solved by a Krylov method on the default
// device (XGPU_BACKEND, XGPU_DEVICE). The right-hand side is made from a known solution, so the
// error is printed beside the residual.
//
//   poisson --2d 1024 --solver pipecg --precond jacobi --tol 1e-8
//   poisson --matrix bcsstk04.mtx --solver cg --format sell
//   poisson --2d 512 --solver gmres --restart 30 --precond amg
//
// On a terminal a one-line progress display is redrawn at every check; XGPU_VERBOSE=1 prints a
// line per check instead.
//
// Under an MPI launcher (where xgpu was built with its distributed layer) the rows are spread over
// the ranks, one device each, and the same options apply:
//
//   mpiexec -n 4 poisson --2d 4096 [--partition balanced|metis] [--matrix file.mtx]
//
// Rank 0 prints the global figures, then each rank's share of the solve's time spent in the halo
// exchange and in the sums across ranks.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <xgpu/amg.hpp>
#include <xgpu/reduction.hpp>
#include <xgpu/solver.hpp>
#include <xgpu/sparse.hpp>
#ifdef XGPU_POISSON_MPI
#include <xgpu/distributed.hpp>
#endif

using namespace xgpu;

namespace {

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

// What differs where the rows are spread over ranks: a vector is made from the whole one in the
// user's numbering (each rank's part of it), a norm is summed over the ranks, and rank 0 prints.
template <class Op> std::size_t global_rows(const Op& a) {
    return std::size_t(a.rows());
}
template <class Op> Array<double> part_of(const Context& ctx, const Op&, const std::vector<double>& v) {
    return to_device(ctx, v);
}
template <class Op> double global_norm(const Op&, const Array<double>& v) {
    return double(norm(v).get());
}
template <class Op> bool prints(const Op&) {
    return true;
}
template <class Op> void print_shares(const Op&, const SolverReport&) {}
#ifdef XGPU_POISSON_MPI
namespace dist = xgpu::distributed;
std::size_t global_rows(const dist::Matrix<double>& a) {
    return std::size_t(a.global_rows());
}
Array<double> part_of(const Context&, const dist::Matrix<double>& a, const std::vector<double>& v) {
    return a.scatter(v);
}
double global_norm(const dist::Matrix<double>& a, const Array<double>& v) {
    return dist::norm(a.communicator(), v);
}
bool prints(const dist::Matrix<double>& a) {
    return a.communicator().rank() == 0;
}
// Each rank's share of the last solve's time waiting in the halo exchange and in the sums.
void print_shares(const dist::Matrix<double>& a, const SolverReport& r) {
    const auto& comm = a.communicator();
    const auto halo = a.halo();
    const double mine[5] = {halo.seconds, a.reduction_seconds(), r.seconds, double(halo.bytes_sent),
                            double(halo.messages_sent)};
    std::vector<double> all(std::size_t(5 * comm.size()));
    MPI_Gather(mine, 5, MPI_DOUBLE, all.data(), 5, MPI_DOUBLE, 0, comm.comm());
    if (comm.rank() != 0) return;
    for (int k = 0; k < comm.size(); ++k) {
        const double* v = &all[std::size_t(5 * k)];
        std::printf("rank %-3d          halo %5.1f%% (%.3f s; %.0f messages, %.1f KB a product), sums %5.1f%% (%.3f s) "
                    "of %.3f s\n",
                    k, v[2] > 0 ? 100 * v[0] / v[2] : 0.0, v[0], v[4], v[3] * 1e-3, v[2] > 0 ? 100 * v[1] / v[2] : 0.0,
                    v[1], v[2]);
    }
}
#endif

struct Settings {
    std::optional<std::int64_t> n2, n3;
    std::string matrix, solver = "auto", precond = "none", format = "auto", fuse = "auto", try_formats = "auto";
    std::string partition = "balanced";
    double tol = 1e-8;
    int check = 10, replace = 50, degree = 4, restart = 30;
    int repeat = 0; // timed solves after an untimed warm-up one (0: the one solve, timed)
    std::int64_t max_iterations = 0;
    bool verbose = false; // XGPU_VERBOSE
};

template <class Op>
int run(const Context& ctx, const Op& a, const Settings& s, std::int64_t nnz, const std::string& format) {
    const std::size_t n = std::size_t(a.rows()), rows = global_rows(a);
    const bool out = prints(a);
    // The known solution: smooth plus a little of every frequency.
    std::vector<double> xs(rows);
    for (std::size_t i = 0; i < rows; ++i)
        xs[i] = 1.0 + std::sin(0.001 * double(i)) + 0.01 * std::sin(0.7 * double(i));
    const Array<double> xstar = part_of(ctx, a, xs);
    Array<double> b = empty<double>(ctx, {n});
    a.apply(xstar, b);

    SolverOptions<double> o;
    double setup_seconds = 0; // the preconditioner's
    o.rtol = s.tol;
    o.check_interval = s.check;
    o.restart = s.restart;
    o.replacement_interval = s.replace;
    o.max_iterations = s.max_iterations;
    if (s.precond == "jacobi") {
        if constexpr (requires { a.diagonal(); })
            o.preconditioner = Jacobi<double>(a.diagonal());
        else // the stencils: a constant diagonal
            o.preconditioner = Jacobi<double>(full<double>(ctx, {n}, s.n2 ? 4.0 : 6.0));
    } else if (s.precond == "poly") {
        ChebyshevOptions co;
        co.degree = s.degree;
        o.preconditioner = Chebyshev<double>(ctx, a, co);
    } else if (s.precond == "amg" || s.precond == "amg-f32") {
        // Smoothed aggregation on the matrix; over several ranks, block Jacobi: a hierarchy per
        // rank on its diagonal block.
        amg::Options ao;
        ao.single_precision = s.precond == "amg-f32";
        const auto t0 = std::chrono::steady_clock::now();
        const auto ml = [&] {
            if constexpr (requires { a.local_block(); })
                return amg::SmoothedAggregation<double>(a.local_block(), ao);
            else if constexpr (requires { a.a; })
                return amg::SmoothedAggregation<double>(a.a, ao);
            else if constexpr (requires { a.row_ptr(); })
                return amg::SmoothedAggregation<double>(a, ao);
            else {
                throw InvalidArgument("--precond amg needs a stored matrix, not --format stencil");
                return amg::SmoothedAggregation<double>(sparse::Csr<double>(), ao);
            }
        }();
        setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (out) std::cout << ml.report() << (global_rows(a) != n ? "  (rank 0's block)\n" : "");
        o.preconditioner = ml;
    }
    const bool tty = out && isatty(fileno(stdout));
    const bool verbose = s.verbose;
    auto last = std::chrono::steady_clock::now();
    std::int64_t last_it = 0;
    o.progress = [&](std::int64_t it, double rel) {
        const auto now = std::chrono::steady_clock::now();
        const double dt = std::chrono::duration<double>(now - last).count();
        const double rate = dt > 0 ? double(it - last_it) / dt : 0;
        last = now;
        last_it = it;
        if (verbose && out)
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
    const auto solve = [&](Array<double>& x) {
        if constexpr (requires { a.reset_halo_time(); }) { // the shares printed are the last solve's
            a.reset_halo_time();
            a.reset_reduction_time();
        }
        if (s.solver == "bicgstab") return bicgstab(a, b, x, o);
        if (s.solver == "gmres") return gmres(a, b, x, o);
        if (s.solver == "fgmres") return fgmres(a, b, x, o);
        return cg(a, b, x, o);
    };
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
    const SolverReport final_solve = timed.empty() ? r : timed.back();
    const double err = global_norm(a, x - xstar) / global_norm(a, xstar);
    if (!out) {
        print_shares(a, final_solve);
        return r.converged() ? 0 : 2;
    }

    std::printf("backend:          %s\n", ctx.backend().c_str());
    std::printf("device:           %s\n", ctx.device().name().c_str());
    std::printf("rows:             %zu\n", rows);
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
    if (setup_seconds > 0)
        std::printf("time to solution: %.4f s (preconditioner setup %.4f s + solve %.4f s)\n",
                    setup_seconds + r.seconds, setup_seconds, r.seconds);
    std::printf("%s", spread.c_str());
    std::printf("launches:         %.2f per iteration%s\n", r.launches_per_iteration,
                r.fused_dot ? " (a dot product fused into the operator's)" : "");
    if (r.gbps > 0)
        std::printf("bandwidth:        %.1f GB/s (%.1f MB per iteration)\n", r.gbps, r.bytes_per_iteration * 1e-6);
    else
        std::printf("bandwidth:        unknown for this operator\n");
    print_shares(a, final_solve);
    return r.converged() ? 0 : 2;
}

} // namespace

#ifdef XGPU_POISSON_MPI
// Whether an MPI launcher (mpiexec, srun) started this process.
bool launched_by_mpi() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
        if (std::getenv(v)) return true;
    return false;
}

// The problem spread over the ranks: each takes a device (XGPU_DEVICE wins) and its rows.
int solve_distributed(const dist::Communicator& comm, Settings& s) {
    const Context ctx = dist::device_context(comm);
    if (!s.n2 && !s.n3 && s.matrix.empty()) s.n2 = ctx.device().info().type == DeviceType::cpu ? 512 : 4096;
    if (s.format == "stencil") throw InvalidArgument("--format stencil runs on one process");
    dist::Options options;
    options.partitioning = s.partition == "metis" ? dist::Partitioning::metis : dist::Partitioning::balanced;
    if (s.format != "auto" && s.format != "csr") options.format = sparse::parse_format(s.format);
    const auto a = s.n2   ? dist::Matrix<double>::poisson2d(ctx, comm, *s.n2, *s.n2, options)
                   : s.n3 ? dist::Matrix<double>::poisson3d(ctx, comm, *s.n3, *s.n3, *s.n3, options)
                          : dist::Matrix<double>::read_matrix_market(ctx, comm, s.matrix, options);
    std::int64_t nnz = std::int64_t(a.diagonal_nnz() + a.offdiagonal_nnz());
    MPI_Allreduce(MPI_IN_PLACE, &nnz, 1, MPI_INT64_T, MPI_SUM, comm.comm());
    if (comm.rank() == 0) std::printf("ranks:            %d, %s rows\n", comm.size(), s.partition.c_str());
    return run(ctx, a, s, nnz, s.format == "auto" ? "automatic per rank" : s.format);
}
#endif

int main(int argc, char** argv) {
    CLI::App app{"Solves A x = b on the default device (XGPU_BACKEND, XGPU_DEVICE) with a Krylov method"};
    Settings s;
    auto* o2 = app.add_option("--2d", s.n2, "the 2-D Poisson problem on an N x N grid");
    auto* o3 = app.add_option("--3d", s.n3, "the 3-D Poisson problem on an N x N x N grid");
    auto* om = app.add_option("--matrix", s.matrix, "a Matrix Market file")->check(CLI::ExistingFile);
    o2->excludes(o3)->excludes(om);
    o3->excludes(om);
    app.add_option(
           "--solver", s.solver,
           "auto (CG: pipelined on GPUs up to 2^19 unknowns, else classic), cg (classic), pipecg "
           "(Chronopoulos-Gear), pipecg-gv (Ghysels-Vanroose), bicgstab, gmres or fgmres (restarted, --restart)")
        ->check(CLI::IsMember({"auto", "cg", "pipecg", "pipecg-gv", "bicgstab", "gmres", "fgmres"}))
        ->capture_default_str();
    app.add_option("--precond", s.precond,
                   "none, jacobi, poly (Chebyshev), amg (smoothed aggregation; block Jacobi over ranks) or amg-f32 "
                   "(its hierarchy in float32)")
        ->check(CLI::IsMember({"none", "jacobi", "poly", "amg", "amg-f32"}))
        ->capture_default_str();
    app.add_option("--tol", s.tol, "relative tolerance")->capture_default_str();
    app.add_option("--restart", s.restart, "GMRES(m): the Arnoldi vectors kept before a restart")
        ->capture_default_str();
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
    app.add_option("--partition", s.partition, "under mpiexec: balanced (contiguous rows) or metis")
        ->check(CLI::IsMember({"balanced", "metis"}))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
#ifdef XGPU_POISSON_MPI
    if (launched_by_mpi()) {
        MPI_Init(&argc, &argv);
        const dist::Communicator comm;
        const int rc = dist::run_or_abort(comm, [&] {
            s.verbose = verbose_from_env();
            return solve_distributed(comm, s);
        });
        MPI_Finalize();
        return rc;
    }
#endif
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
        const auto host = s.matrix.empty() ? (s.n2 ? sparse::poisson<double>(*s.n2, *s.n2)
                                                   : sparse::poisson<double>(*s.n3, *s.n3, *s.n3))
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
