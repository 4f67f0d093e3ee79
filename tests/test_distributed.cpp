// The distributed layer under mpiexec (1 to 4 ranks, tests/CMakeLists.txt): its products against
// a plain loop over the global CSR on the host, in double, on random matrices (uniform and
// power-law rows), Poisson, block-diagonal matrices (ranks without neighbours), uneven and
// explicit partitions with empty ranks, METIS, and each factory; dot and norm; and the refusals,
// each of which every rank must raise with the same message (a rank left waiting would hang the
// run into its ctest timeout).
#include <xgpu/distributed.hpp>
#include <xgpu/reduction.hpp>
#include <xgpu/solver.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "solver_methods.hpp"
#include "support.hpp"

using namespace xgpu;
namespace dist = xgpu::distributed;
using Host = sparse::HostCsr<double, std::int64_t>;

namespace {

const dist::Communicator& world() {
    static const dist::Communicator comm;
    return comm;
}

// What each rank tests on: its device (device_context) on each available backend, or on the one
// the environment selects. The same list on every rank, so their collectives line up.
const std::vector<Context>& rank_contexts() {
    static const std::vector<Context>& all = *new std::vector<Context>(
        test::selected_contexts([](const std::string& b) { return dist::device_context(world(), b); }));
    return all;
}

#define XGPU_FOR_EACH_RANK_CONTEXT(ctx)                                                                                \
    for (const xgpu::Context& ctx : rank_contexts())                                                                   \
    DYNAMIC_SECTION(ctx.backend() << ": " << ctx.device().name())

// A seed drawn on rank 0 (from the suite's printed seed) and shared, so that every rank makes the
// same global matrix.
std::uint64_t shared_seed() {
    std::uint64_t seed = world().rank() == 0 ? test::rng()() : 0;
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return seed;
}

// n x n with the given row lengths (plus the diagonal), random columns and values in [-1, 1).
Host random_matrix(std::int64_t n, const std::vector<std::int64_t>& lengths, std::mt19937_64& g) {
    std::uniform_int_distribution<std::int64_t> column(0, n - 1);
    std::uniform_real_distribution<double> value(-1, 1);
    std::vector<std::int64_t> r, c;
    std::vector<double> v;
    for (std::int64_t i = 0; i < n; ++i) {
        r.push_back(i);
        c.push_back(i);
        v.push_back(4.0);
        for (std::int64_t k = 0; k < lengths[std::size_t(i)]; ++k) {
            r.push_back(i);
            c.push_back(column(g));
            v.push_back(value(g));
        }
    }
    return sparse::from_coo<double, std::int64_t>(n, n, r, c, v);
}

Host uniform_rows(std::int64_t n, std::mt19937_64& g) {
    std::uniform_int_distribution<std::int64_t> len(0, 6);
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(n));
    for (auto& l : lengths)
        l = len(g);
    return random_matrix(n, lengths, g);
}

// Pareto-distributed row lengths: most rows short, a few as long as the matrix is wide.
Host power_law_rows(std::int64_t n, std::mt19937_64& g) {
    std::uniform_real_distribution<double> u(1e-6, 1);
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(n));
    for (auto& l : lengths)
        l = std::min<std::int64_t>(n, std::int64_t(std::pow(u(g), -1.0 / 1.2)));
    return random_matrix(n, lengths, g);
}

// The negative Laplacian of an nx x ny x nz grid, as the distributed generators make it.
Host poisson(std::int64_t nx, std::int64_t ny, std::int64_t nz = 1) {
    return sparse::poisson<double, std::int64_t>(nx, ny, nz);
}

template <class T> sparse::HostCsr<T, std::int64_t> as(const Host& a) {
    sparse::HostCsr<T, std::int64_t> b;
    b.rows = a.rows;
    b.cols = a.cols;
    b.row_ptr = a.row_ptr;
    b.col_idx = a.col_idx;
    b.values.assign(a.values.begin(), a.values.end());
    return b;
}

// Rows first .. last of a, columns kept global: what one rank holds for the constructor.
template <class T, class I> sparse::HostCsr<T, I> slice(const Host& a, std::int64_t first, std::int64_t last) {
    sparse::HostCsr<T, I> s;
    s.rows = last - first;
    s.cols = a.cols;
    s.row_ptr.assign(1, 0);
    for (std::int64_t i = first; i < last; ++i) {
        for (auto k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k) {
            s.col_idx.push_back(I(a.col_idx[std::size_t(k)]));
            s.values.push_back(T(a.values[std::size_t(k)]));
        }
        s.row_ptr.push_back(I(s.col_idx.size()));
    }
    return s;
}

// Row offsets cut at random, with ranks left empty: rank 0 always, where there are several.
std::vector<std::int64_t> uneven_offsets(std::int64_t n, int ranks, std::mt19937_64& g) {
    std::uniform_int_distribution<std::int64_t> cut(0, n);
    std::vector<std::int64_t> o{0};
    for (int r = 1; r < ranks; ++r)
        o.push_back(cut(g));
    o.push_back(n);
    std::sort(o.begin(), o.end());
    if (ranks > 1) o[1] = 0;
    return o;
}

// alpha*A*x + beta*y in double, the plain loop.
std::vector<double> host_product(const Host& a, const std::vector<double>& x, double alpha, double beta,
                                 const std::vector<double>& y) {
    std::vector<double> out(std::size_t(a.rows));
    for (std::int64_t i = 0; i < a.rows; ++i) {
        double s = 0;
        for (auto k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k)
            s += a.values[std::size_t(k)] * x[std::size_t(a.col_idx[std::size_t(k)])];
        out[std::size_t(i)] = alpha * s + beta * y[std::size_t(i)];
    }
    return out;
}

// The distributed product against the host's, the vectors scattered from rank 0 and gathered
// back: y = 1.5*A*x - 0.5*y, then y = A*x (beta 0 must not read y).
template <class T> void check_product(const dist::Matrix<T>& m, const Host& a, std::mt19937_64& g, const char* what) {
    INFO(what << " (" << a.rows << " rows, " << a.nnz() << " entries, rank " << world().rank() << " of "
              << world().size() << ")");
    const auto n = std::size_t(a.rows);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> x(n), y(n);
    for (auto& e : x)
        e = double(T(u(g)));
    for (auto& e : y)
        e = double(T(u(g)));
    const std::vector<T> xt(x.begin(), x.end()), yt(y.begin(), y.end());
    const Array<T> dx = m.scatter(xt);
    Array<T> dy = m.scatter(yt);
    CHECK(std::int64_t(dx.size()) == m.rows());
    m.apply(T(1.5), dx, T(-0.5), dy);
    const std::vector<T> got = m.gather(dy);
    const auto want = host_product(a, x, 1.5, -0.5, y);
    // float: each entry's rounding, relative to the row's magnitudes.
    const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double scale = std::abs(y[i]);
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
            scale += std::abs(a.values[std::size_t(k)] * x[std::size_t(a.col_idx[std::size_t(k)])]);
        if (!(std::abs(double(got[i]) - want[i]) <= tol * (1 + scale))) ++bad;
    }
    CHECK(bad == 0);
    if (m.rows() > 0) dy.fill(std::numeric_limits<T>::quiet_NaN());
    m.apply(dx, dy);
    const std::vector<T> got0 = m.gather(dy, 0);
    if (world().rank() == 0) {
        const auto want0 = host_product(a, x, 1.0, 0.0, y);
        bad = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (!(std::abs(double(got0[i]) - want0[i]) <= tol * (1 + std::abs(want0[i]) + 8))) ++bad;
        CHECK(bad == 0);
    } else {
        CHECK(got0.empty());
    }
    // The halo's counters: what this rank sends is what its neighbours receive, over all ranks.
    const auto h = m.halo();
    CHECK(h.messages_sent == int(m.sends_to().size()));
    CHECK(h.messages_received == int(m.receives_from().size()));
    CHECK(h.bytes_received == m.ghosts() * std::int64_t(sizeof(T)));
    CHECK(h.products == 2);
    std::int64_t sums[2] = {h.bytes_sent, h.bytes_received};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sums[0] == sums[1]);
    std::int64_t entries = std::int64_t(m.diagonal_nnz() + m.offdiagonal_nnz());
    MPI_Allreduce(MPI_IN_PLACE, &entries, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(entries == std::int64_t(a.nnz()));
}

// Every way to build the matrix from a global one, checked against it.
template <class T> void check_all_ways(const Context& ctx, const Host& a, std::mt19937_64& g, const char* what) {
    const auto& comm = world();
    const int size = comm.size(), rank = comm.rank();
    const auto at = as<T>(a);
    // The whole matrix on rank 0, the balanced partition; on the last rank, 32-bit indices.
    check_product(dist::Matrix<T>::from_global(ctx, comm, at, 0), a, g, what);
    {
        sparse::HostCsr<T, std::int32_t> narrow;
        if (rank == size - 1) narrow = slice<T, std::int32_t>(a, 0, a.rows);
        check_product(dist::Matrix<T>::from_global(ctx, comm, narrow, size - 1), a, g, what);
    }
    // Each rank's rows, in the balanced partition's ranges and in uneven ones with empty ranks.
    std::vector<std::int64_t> lengths;
    for (std::int64_t i = 0; i < a.rows; ++i)
        lengths.push_back(a.row_ptr[std::size_t(i) + 1] - a.row_ptr[std::size_t(i)]);
    const auto balanced = dist::balanced_partition(lengths, size);
    check_product(dist::Matrix<T>(ctx, comm, a.rows, a.cols,
                                  slice<T, std::int64_t>(a, balanced.offsets[std::size_t(rank)],
                                                         balanced.offsets[std::size_t(rank) + 1])),
                  a, g, what);
    dist::Options uneven;
    uneven.row_offsets = uneven_offsets(a.rows, size, g);
    check_product(dist::Matrix<T>(ctx, comm, a.rows, a.cols,
                                  slice<T, std::int32_t>(a, uneven.row_offsets[std::size_t(rank)],
                                                         uneven.row_offsets[std::size_t(rank) + 1]),
                                  uneven),
                  a, g, what);
    check_product(dist::Matrix<T>::from_global(ctx, comm, at, 0, uneven), a, g, what);
    if (dist::have_metis()) {
        dist::Options metis;
        metis.partitioning = dist::Partitioning::metis;
        const auto m = dist::Matrix<T>::from_global(ctx, comm, at, 0, metis);
        CHECK(m.partition().permutation.size() == (size > 1 ? std::size_t(a.rows) : 0));
        check_product(m, a, g, what);
    }
}

void check_both_types(const Context& ctx, const Host& a, std::mt19937_64& g, const char* what) {
    check_all_ways<double>(ctx, a, g, what);
    check_all_ways<float>(ctx, a, g, what);
}

// Runs f, expecting every rank to refuse it with the same message, containing `contains`.
template <class F> void refused_alike(F&& f, const std::string& contains) {
    std::string message = "(nothing thrown)";
    try {
        f();
    } catch (const Error& e) {
        message = e.what();
    }
    INFO("rank " << world().rank() << ": " << message);
    CHECK(message.find(contains) != std::string::npos);
    int length = int(message.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string first(std::size_t(length), ' ');
    if (world().rank() == 0) first = message;
    MPI_Bcast(first.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(message == first);
}

} // namespace

TEST_CASE("the communicator and the ranks' devices", "[distributed]") {
    const auto& comm = world();
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(comm.size() == size);
    CHECK(comm.local_size() >= 1);
    CHECK(comm.local_rank() < comm.local_size());
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        const auto m = dist::Matrix<double>::poisson2d(ctx, comm, 5, 4);
        const GlobalSum* s = m.global_sum();
        REQUIRE(s);
        CHECK(s->processes() == size);
        double v[2] = {1.0, double(comm.rank())};
        s->sum(v, 2);
        CHECK(v[0] == size);
        CHECK(v[1] == size * (size - 1) / 2);
        double w = 2.0;
        s->start_sum(&w, 1);
        s->finish_sum();
        CHECK(w == 2.0 * size);
        CHECK(s->agree("").empty());
        CHECK(s->agree(comm.rank() == size - 1 ? "last" : "") == "last");
        CHECK(s->agree(comm.rank() > 0 ? "rank " + std::to_string(comm.rank()) : "") == (size > 1 ? "rank 1" : ""));
    }
    SECTION("device_context selects as the core does: names checked, the same refusals") {
        CHECK_THROWS_WITH(dist::device_context(comm, "no-such-backend"),
                          Catch::Matchers::Contains("unknown backend 'no-such-backend'"));
        const char* held = std::getenv("XGPU_DEVICE");
        const std::string before = held ? held : "";
        for (const Context& ctx : rank_contexts()) {
            ::setenv("XGPU_DEVICE", "0", 1); // the backend's first device, on every rank
            CHECK(dist::device_context(comm, ctx.backend()).device().name() ==
                  Context::create(ctx.backend(), "0").device().name());
            ::setenv("XGPU_DEVICE", "no device is called this", 1);
            CHECK_THROWS_WITH(dist::device_context(comm, ctx.backend()),
                              Catch::Matchers::Contains("matches no " + ctx.backend() + " device"));
        }
        if (held)
            ::setenv("XGPU_DEVICE", before.c_str(), 1);
        else
            ::unsetenv("XGPU_DEVICE");
    }
}

TEST_CASE("the distributed matrix is a distributed linear operator", "[distributed]") {
    STATIC_REQUIRE(LinearOperator<dist::Matrix<double>, double>);
    STATIC_REQUIRE(LinearOperator<dist::Matrix<float>, float>);
    STATIC_REQUIRE(TrafficOperator<dist::Matrix<double>>);
    STATIC_REQUIRE(DistributedOperator<dist::Matrix<double>>);
}

TEST_CASE("the product with its dot fused: apply's product and the partial sums of x.y", "[distributed]") {
    STATIC_REQUIRE(FusedDotOperator<dist::Matrix<double>, double>);
    std::mt19937_64 g(shared_seed());
    const auto& comm = world();
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        const std::int64_t nx = 30 + std::int64_t(g() % 20), ny = 20 + std::int64_t(g() % 20);
        for (const auto& [a, what] :
             {std::pair{poisson(nx, ny, 1), "2-D Poisson"}, std::pair{uniform_rows(150, g), "uniform random rows"}}) {
            INFO(what << ", rank " << comm.rank() << " of " << comm.size());
            const auto m = dist::Matrix<double>::from_global(ctx, comm, a, 0);
            std::uniform_real_distribution<double> u(-1, 1);
            std::vector<double> hx(std::size_t(a.rows));
            for (auto& e : hx)
                e = u(g);
            const Array<double> x = m.scatter(hx);
            Array<double> want = empty<double>(ctx, {std::size_t(m.rows())});
            m.apply(x, want);
            Array<double> y = full<double>(ctx, {std::size_t(m.rows())}, std::numeric_limits<double>::quiet_NaN());
            Array<double> partial = full<double>(ctx, {5}, 99.0);
            const bool fused = m.apply_dot(x, y, partial);
            // The Poisson matrix's blocks (a few entries a row) plan the fusing format everywhere.
            if (std::string(what) == "2-D Poisson") CHECK(fused);
            if (!fused) {
                CHECK(partial.get() == std::vector<double>(5, 99.0)); // nothing done
                continue;
            }
            const std::vector<double> got = y.get(), ref = want.get(), hxl = x.get();
            double diff = 0, dot = 0;
            for (std::size_t i = 0; i < ref.size(); ++i) {
                diff = std::max(diff, std::abs(got[i] - ref[i]) / (1 + std::abs(ref[i])));
                dot += hxl[i] * ref[i];
            }
            CHECK(diff <= 1e-13);
            double sum = 0;
            for (const double p : partial.get())
                sum += p;
            CHECK(std::abs(sum - dot) <= 1e-11 * (1 + std::abs(dot)));
            // Bad partial sums are refused before any work.
            Array<double> none;
            CHECK_THROWS_AS(m.apply_dot(x, y, none), InvalidArgument);
            CHECK_THROWS_WITH(m.apply_dot(x, y, y), Catch::Matchers::Contains("shares memory"));
            // A solve over the ranks takes its dot from the product.
            if (std::string(what) == "2-D Poisson") {
                Array<double> sol;
                const SolverReport r = cg(m, m.scatter(hx), sol, SolverOptions<double>{});
                CHECK(r.converged());
                CHECK(r.fused_dot);
            }
        }
    }
}

TEST_CASE("balanced partitions", "[distributed]") {
    const std::vector<std::int64_t> lengths{10, 0, 0, 0, 0, 0, 0, 0, 0, 10};
    const auto p = dist::balanced_partition(lengths, 2);
    CHECK(p.offsets == std::vector<std::int64_t>{0, 5, 10});
    const auto q = dist::balanced_partition(lengths, 10); // as many ranks as rows: one each
    for (int r = 0; r < 10; ++r)
        CHECK(q.rows(r) == 1);
    const std::vector<std::int64_t> heavy{100, 1, 1, 1};
    CHECK(dist::balanced_partition(heavy, 2).offsets == std::vector<std::int64_t>{0, 1, 4});
    CHECK(dist::balanced_partition(heavy, 3).offsets == std::vector<std::int64_t>{0, 1, 2, 4});
    CHECK_THROWS_AS(dist::balanced_partition(heavy, 5), InvalidArgument);
    dist::RowPartition e;
    e.offsets = {0, 3, 3, 7};
    CHECK(e.owner(0) == 0);
    CHECK(e.owner(3) == 2); // rank 1 is empty
    CHECK(e.owner(6) == 2);
}

TEST_CASE("distributed SpMV equals the host product on random matrices", "[distributed]") {
    std::mt19937_64 g(shared_seed());
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        check_both_types(ctx, uniform_rows(150, g), g, "uniform random rows");
        check_both_types(ctx, power_law_rows(200, g), g, "power-law rows");
        check_both_types(ctx, uniform_rows(7, g), g, "7 rows");
    }
}

TEST_CASE("ranks without neighbours: a block-diagonal matrix", "[distributed]") {
    std::mt19937_64 g(shared_seed());
    const auto& comm = world();
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        // One dense-ish block per rank, on the rank's rows: no ghosts, no messages.
        dist::Options o;
        o.row_offsets = uneven_offsets(60, comm.size(), g);
        std::vector<std::int64_t> r, c;
        std::vector<double> v;
        std::uniform_real_distribution<double> u(-1, 1);
        for (int q = 0; q < comm.size(); ++q)
            for (auto i = o.row_offsets[std::size_t(q)]; i < o.row_offsets[std::size_t(q) + 1]; ++i)
                for (auto j = o.row_offsets[std::size_t(q)]; j < o.row_offsets[std::size_t(q) + 1]; ++j)
                    if (i == j || u(g) < 0) {
                        r.push_back(i);
                        c.push_back(j);
                        v.push_back(u(g));
                    }
        const auto a = sparse::from_coo<double, std::int64_t>(60, 60, r, c, v);
        const auto m = dist::Matrix<double>::from_global(ctx, comm, a, 0, o);
        CHECK(m.ghosts() == 0);
        CHECK(m.offdiagonal_nnz() == 0);
        CHECK(m.sends_to().empty());
        CHECK(m.receives_from().empty());
        CHECK(m.halo().messages_sent == 0);
        check_product(m, a, g, "block-diagonal");
    }
}

TEST_CASE("the Poisson generators, sliced by rows", "[distributed]") {
    std::mt19937_64 g(shared_seed());
    const auto& comm = world();
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        check_product(dist::Matrix<double>::poisson2d(ctx, comm, 13, 9), poisson(13, 9, 1), g, "Poisson 2-D");
        check_product(dist::Matrix<float>::poisson3d(ctx, comm, 5, 4, 6), poisson(5, 4, 6), g, "Poisson 3-D");
        dist::Options o;
        o.row_offsets = uneven_offsets(5 * 4 * 3, comm.size(), g);
        check_product(dist::Matrix<double>::poisson3d(ctx, comm, 5, 4, 3, o), poisson(5, 4, 3), g,
                      "Poisson 3-D, uneven rows");
        // A rank's neighbours in 2-D, balanced: at most the ranks before and after it.
        const auto m = dist::Matrix<double>::poisson2d(ctx, comm, 16, 16);
        CHECK(m.sends_to().size() <= 2);
        CHECK(m.receives_from() == m.sends_to());
        if (dist::have_metis()) {
            dist::Options metis;
            metis.partitioning = dist::Partitioning::metis;
            check_product(dist::Matrix<double>::poisson2d(ctx, comm, 12, 10, metis), poisson(12, 10, 1), g,
                          "Poisson 2-D, METIS");
        }
    }
}

TEST_CASE("a Matrix Market file read once and scattered", "[distributed]") {
    std::mt19937_64 g(shared_seed());
    const auto& comm = world();
    const auto a = power_law_rows(90, g);
    // One file per run size: ctest may run the 1- to 4-rank runs side by side in one folder.
    const std::string path = "distributed_" + std::to_string(comm.size()) + ".mtx";
    if (comm.rank() == 0) sparse::write_matrix_market(path, a);
    MPI_Barrier(MPI_COMM_WORLD);
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        check_product(dist::Matrix<double>::read_matrix_market(ctx, comm, path), a, g, "Matrix Market");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (comm.rank() == 0) std::remove(path.c_str());
}

TEST_CASE("distributed dot and norm", "[distributed]") {
    std::mt19937_64 g(shared_seed());
    const auto& comm = world();
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        const auto a = uniform_rows(101, g);
        dist::Options o;
        o.row_offsets = uneven_offsets(101, comm.size(), g);
        const auto m = dist::Matrix<double>::from_global(ctx, comm, a, 0, o);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<double> x(101), y(101);
        for (auto& e : x)
            e = u(g);
        for (auto& e : y)
            e = u(g);
        double d = 0, s = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            d += x[i] * y[i];
            s += x[i] * x[i];
        }
        const auto dx = m.scatter(x), dy = m.scatter(y);
        CHECK(std::abs(dist::dot(comm, dx, dy) - d) <= 1e-12 * (1 + std::abs(d)));
        CHECK(std::abs(dist::norm(comm, dx) - std::sqrt(s)) <= 1e-12 * std::sqrt(s));
        const auto fx = dx.astype<float>();
        CHECK(std::abs(dist::norm(comm, fx) - std::sqrt(s)) <= 1e-5 * std::sqrt(s));
    }
}

TEST_CASE("inconsistent input is refused on every rank alike", "[distributed]") {
    const auto& comm = world();
    const int size = comm.size(), rank = comm.rank();
    const auto a = poisson(6, 5, 1); // 30 rows
    const auto mine = [&](const dist::RowPartition& p) {
        return slice<double, std::int64_t>(a, p.offsets[std::size_t(rank)], p.offsets[std::size_t(rank) + 1]);
    };
    std::vector<std::int64_t> lengths(30, 5);
    const auto balanced = dist::balanced_partition(lengths, size);
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        if (size > 1) {
            refused_alike([&] { dist::Matrix<double>(ctx, comm, 30 + rank, 30 + rank, mine(balanced)); },
                          "the ranks pass different matrix sizes");
            refused_alike([&] { dist::Matrix<double>::poisson2d(ctx, comm, size - 1, 1); },
                          std::to_string(size) + " ranks for a matrix of " + std::to_string(size - 1) + " rows");
            const auto small = poisson(size - 1, 1, 1);
            refused_alike([&] { dist::Matrix<double>::from_global(ctx, comm, small, 0); }, " ranks for a matrix of ");
            refused_alike([&] { dist::Matrix<double>::from_global(ctx, comm, a, rank == 0 ? 1 : 0); },
                          "the ranks pass different root ranks");
        }
        // Rows that do not add up to the matrix, or do not match the given ranges.
        {
            auto short_by_one = mine(balanced);
            if (rank == size - 1)
                short_by_one = slice<double, std::int64_t>(a, balanced.offsets[std::size_t(rank)],
                                                           balanced.offsets[std::size_t(rank) + 1] - 1);
            refused_alike([&] { dist::Matrix<double>(ctx, comm, 30, 30, short_by_one); },
                          "the ranks hold 29 rows together, not the matrix's 30");
        }
        {
            dist::Options o;
            o.row_offsets = balanced.offsets;
            o.row_offsets[1] += 1;
            if (size == 1) o.row_offsets.push_back(31);
            refused_alike([&] { dist::Matrix<double>(ctx, comm, 30, 30, mine(balanced), o); },
                          size == 1 ? "Options::row_offsets has 3 entries" : "rows, but Options::row_offsets give it");
        }
        // A bad CSR on the last rank alone: its message reaches every rank.
        {
            auto own = mine(balanced);
            if (rank == size - 1) own.col_idx.back() = 30;
            refused_alike([&] { dist::Matrix<double>(ctx, comm, 30, 30, own); },
                          "is out of range for 30 columns (rank " + std::to_string(size - 1));
        }
        refused_alike([&] { dist::Matrix<double>(ctx, comm, 30, 31, mine(balanced)); }, "square");
        refused_alike([&] { dist::Matrix<double>::read_matrix_market(ctx, comm, "no/such/matrix.mtx"); },
                      "no/such/matrix.mtx");
        if (ctx.backend() != "cuda") {
            dist::Options o;
            o.cuda_aware = true;
            refused_alike([&] { dist::Matrix<double>::poisson2d(ctx, comm, 6, 5, o); }, "needs the CUDA backend");
        }
        // The ranks are still in step: a good matrix builds and multiplies.
        std::mt19937_64 g(shared_seed());
        check_product(dist::Matrix<double>::poisson2d(ctx, comm, 6, 5), a, g, "after the refusals");
    }
}

namespace {

// A nonsymmetric, diagonally dominant matrix: Poisson plus a convection term in x.
Host convection(std::int64_t nx, std::int64_t ny) {
    Host a = poisson(nx, ny, 1);
    for (std::int64_t r = 0; r < a.rows; ++r)
        for (auto k = a.row_ptr[std::size_t(r)]; k < a.row_ptr[std::size_t(r) + 1]; ++k)
            if (a.col_idx[std::size_t(k)] == r + 1) a.values[std::size_t(k)] += 0.4;
    return a;
}

using test::Method;
using test::solve;

} // namespace

TEST_CASE("ranks that pass different solver options are refused alike before any iteration", "[distributed]") {
    const auto& comm = world();
    if (comm.size() < 2) return;
    const int rank = comm.rank();
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        const auto m = dist::Matrix<double>::poisson2d(ctx, comm, 12, 10);
        const Array<double> b = full<double>(ctx, {std::size_t(m.rows())}, 1.0);
        const auto solve = [&](bool bicg, const SolverOptions<double>& o) {
            Array<double> x;
            return bicg ? bicgstab(m, b, x, o) : cg(m, b, x, o);
        };
        const auto last = rank == comm.size() - 1;
        SolverOptions<double> o;
        refused_alike([&] { solve(last, o); }, "the processes pass different methods (CG, BiCGStab, GMRES or FGMRES)");
        o.rtol = last ? 1e-6 : 1e-8;
        refused_alike([&] { solve(false, o); }, "the processes pass different rtol");
        o = {};
        o.max_iterations = last ? 50 : 0;
        refused_alike([&] { solve(false, o); }, "the processes pass different max_iterations");
        o = {};
        o.check_interval = 1 + rank;
        refused_alike([&] { solve(false, o); }, "the processes pass different check_interval");
        o = {};
        o.variant = last ? CgVariant::pipelined : CgVariant::classic;
        refused_alike([&] { solve(false, o); }, "the processes pass different CG variants");
        o = {};
        if (last) o.preconditioner = Jacobi<double>(m);
        refused_alike([&] { solve(false, o); }, "the processes pass different preconditioners");
        // The same options everywhere solve.
        o = {};
        o.preconditioner = Jacobi<double>(m);
        CHECK(solve(false, o).converged());
    }
}

TEST_CASE("CG and BiCGStab over the ranks equal the solve on one process", "[distributed]") {
    std::mt19937_64 g(shared_seed());
    const auto& comm = world();
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        const std::int64_t nx = 20 + std::int64_t(g() % 6), ny = 16 + std::int64_t(g() % 6);
        const Host spd = poisson(nx, ny, 1), general = convection(nx, ny);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<double> hb(std::size_t(nx * ny));
        for (auto& e : hb)
            e = u(g);
        dist::Options uneven;
        uneven.row_offsets = uneven_offsets(nx * ny, comm.size(), g);
        // Ranks without rows cannot hold a part of b: the solvers refuse them (below).
        bool empty = false;
        for (int r = 0; r < comm.size(); ++r)
            empty = empty || uneven.row_offsets[std::size_t(r) + 1] == uneven.row_offsets[std::size_t(r)];
        if (empty) uneven = {};
        for (const Method method : {Method::classic, Method::pipelined, Method::ghysels_vanroose, Method::bicgstab,
                                    Method::gmres, Method::fgmres}) {
            const bool nonsymmetric = method == Method::bicgstab || method == Method::gmres || method == Method::fgmres;
            const Host& h = nonsymmetric ? general : spd;
            // Preconditioners built on each operator: Jacobi from its diagonal, Chebyshev from its
            // products and (over the ranks) global norms.
            for (const char* const precond : {"none", "jacobi", "chebyshev"}) {
                const std::string pc = precond;
                INFO("method " << int(method) << ", preconditioner " << pc << ", rank " << comm.rank() << " of "
                               << comm.size());
                SolverOptions<double> o;
                o.rtol = 1e-10;
                o.check_interval = 1 + int(g() % 3);
                // On one process: the whole system.
                const sparse::Csr<double, std::int64_t> one(ctx, h);
                const Array<double> b1 = to_device(ctx, hb);
                if (pc == "jacobi") o.preconditioner = Jacobi<double>(one);
                if (pc == "chebyshev") o.preconditioner = Chebyshev<double>(ctx, one);
                Array<double> x1;
                const SolverReport r1 = solve(method, one, b1, x1, o);
                // Over the ranks: the same system, its rows spread unevenly.
                const auto m = dist::Matrix<double>::from_global(ctx, comm, h, 0, uneven);
                const Array<double> b = m.scatter(hb);
                if (pc == "jacobi") o.preconditioner = Jacobi<double>(m);
                if (pc == "chebyshev") o.preconditioner = Chebyshev<double>(ctx, m);
                Array<double> x;
                const SolverReport r = solve(method, m, b, x, o);
                CHECK(r1.converged());
                CHECK(r.converged());
                CHECK(std::abs(r.iterations - r1.iterations) <= 2);
                CHECK(r.relative_residual <= 1e-10 * (1 + 1e-6));
                const std::vector<double> got = m.gather(x), want = x1.get();
                double diff = 0, scale = 0;
                for (std::size_t i = 0; i < want.size(); ++i) {
                    diff = std::max(diff, std::abs(got[i] - want[i]));
                    scale = std::max(scale, std::abs(want[i]));
                }
                CHECK(diff <= 1e-7 * scale);
                // Every rank reports the same.
                double mine[2] = {double(r.iterations), r.relative_residual}, all[2] = {0, 0};
                MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                CHECK(all[0] == mine[0]);
                CHECK(all[1] == mine[1]);
            }
        }
    }
}

TEST_CASE("a solve's bad input on one rank is refused on every rank alike", "[distributed]") {
    const auto& comm = world();
    XGPU_FOR_EACH_RANK_CONTEXT(ctx) {
        const auto m = dist::Matrix<double>::poisson2d(ctx, comm, 12, 10);
        // The last rank's b is one element short.
        const bool last = comm.rank() == comm.size() - 1;
        const Array<double> b = ones<double>(ctx, {std::size_t(m.rows() - (last ? 1 : 0))});
        Array<double> x;
        refused_alike([&] { cg(m, b, x); }, "b has");
        // A negative tolerance on rank 0 only.
        SolverOptions<double> o;
        if (comm.rank() == 0) o.rtol = -1;
        const Array<double> good = ones<double>(ctx, {std::size_t(m.rows())});
        refused_alike([&] { bicgstab(m, good, x, o); }, "rtol and atol must be >= 0");
        // Still in step: a solve that every rank agrees on converges.
        Array<double> y;
        CHECK(cg(m, good, y).converged());
    }
}
