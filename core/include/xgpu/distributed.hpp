// xgpu::distributed: sparse matrices and vectors spread over MPI processes by rows (PETSc's
// MPIAIJ, Ginkgo's distributed::Matrix): one device per process ("rank"), each holding its own
// rows of the matrix and its part of every vector.
//
//   MPI_Init(&argc, &argv);                                   // the program's, not the library's
//   xgpu::distributed::Communicator comm;                     // MPI_COMM_WORLD
//   auto ctx = xgpu::distributed::device_context(comm);       // the node-local rank picks a device
//   auto A = xgpu::distributed::Matrix<double>::poisson2d(ctx, comm, 1024, 1024);
//   auto x = A.scatter(global_x);                             // this rank's part (rank 0's vector)
//   auto y = xgpu::zeros<double>(ctx, {std::size_t(A.rows())});
//   A.apply(x, y);                                            // halo exchange + local products
//   double r = xgpu::distributed::norm(comm, y);              // the same on every rank
//   std::vector<double> global_y = A.gather(y);               // the whole vector on every rank
//
// Launch with `mpiexec -n 4 ./program` (docs/distributed.md). The matrix is a LinearOperator whose
// rows() and cols() are the rank's own rows, with a GlobalSum (xgpu/operator.hpp) over its
// communicator, so the Krylov solvers run on it with every dot product summed over the ranks.
//
// The layer uses MPI's C API directly, and never owns MPI_Init or MPI_Finalize. Everything here
// that takes a Communicator is collective (every rank calls it, in the same order) unless it says
// otherwise; apply() talks only to the neighbour ranks whose values it needs.
//
// Failures. Input that is wrong on any rank (different global sizes, rows that do not add up to
// the matrix or do not match the given partition, more ranks than rows for a partition the
// library makes, a file that does not open or parse, an invalid CSR) is refused by every rank
// with the same exception and message (that of the lowest rank that found a problem) before any
// rank goes on: each rank checks its part, then the ranks agree (MPI_Allreduce) before anything
// is built. Past construction no step agrees: an exception that escapes on one rank (a bad
// argument to apply on that rank alone, a device failure) leaves the other ranks waiting in their
// next MPI call. Handling that is the program's: run_or_abort below prints the message with the
// rank and calls MPI_Abort, which ends every rank with a nonzero exit status.
#pragma once

// MPI's C API only: the C++ bindings (deprecated since MPI 2.2) stay out.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "xgpu/array.hpp"
#include "xgpu/context.hpp"
#include "xgpu/operator.hpp"
#include "xgpu/sparse.hpp"

namespace xgpu::distributed {

// The element types of distributed matrices and vectors.
template <class T>
concept Real = std::is_same_v<T, float> || std::is_same_v<T, double>;

// An MPI communicator with the facts the layer needs about it. Does not duplicate or free the
// communicator: the caller keeps it alive (MPI_COMM_WORLD: between MPI_Init and MPI_Finalize).
// Construction is collective: it learns the node-local rank and size through
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
class Communicator {
public:
    explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD);

    MPI_Comm comm() const { return comm_; }
    int rank() const { return rank_; }
    int size() const { return size_; }
    // This rank among the ranks of its node (shared memory), and how many those are.
    int local_rank() const { return local_rank_; }
    int local_size() const { return local_size_; }

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

// The context of this rank's device. With XGPU_DEVICE set, xgpu's usual selection decides
// (Context::from_env, or Context::create(backend, XGPU_DEVICE) where `backend` is given). Otherwise
// the backend is `backend`, else XGPU_BACKEND, else the first available (as "auto"), and the
// node-local rank picks device local_rank % n among its n GPUs (all its devices where it has no
// GPU), so that the ranks of a node spread over its devices. Not collective.
Context device_context(const Communicator& comm, std::string_view backend = {});

// Sums over the ranks of a communicator (MPI_Allreduce and MPI_Iallreduce with MPI_SUM on doubles;
// agree() broadcasts the lowest failing rank's error): the GlobalSum a distributed operator gives the solvers. One
// started sum at a time per object.
class Sum final : public GlobalSum {
public:
    explicit Sum(MPI_Comm comm) : comm_(comm) {}
    void sum(double* values, int count) const override;
    void start_sum(double* values, int count) const override;
    void finish_sum() const override;
    std::string agree(const std::string& error) const override;
    int processes() const override;
    // The host time spent waiting in the sums so far (a blocking sum, or the wait that finishes a
    // started one): how long this rank waited for the others and the network.
    double seconds() const { return seconds_; }
    void reset_time() const { seconds_ = 0; }

private:
    MPI_Comm comm_;
    mutable MPI_Request request_ = MPI_REQUEST_NULL;
    mutable double seconds_ = 0;
};

// ---- Row partitions ------------------------------------------------------------------------------

// How the factories that see the whole matrix split its rows over the ranks.
//   balanced: contiguous ranges of rows, balanced by entries (each row weighs its entries plus
//             one, so that empty rows spread too): the default;
//   metis:    METIS_PartGraphKway on the graph of A + A^T (vertices weighted as above), where this
//             build has METIS (have_metis()); the rows are renumbered so that each rank's rows are
//             contiguous, and the matrix keeps the permutation (scatter and gather apply it).
enum class Partitioning { balanced, metis };
const char* name(Partitioning p);
// Whether this build of the distributed layer has METIS.
bool have_metis();

// Rank r owns rows [offsets[r], offsets[r + 1]) of the distributed numbering. The user's row i is
// row permutation[i] of that numbering (empty permutation: the same numbering).
struct RowPartition {
    std::vector<std::int64_t> offsets{0};
    std::vector<std::int64_t> permutation;

    int ranks() const { return int(offsets.size()) - 1; }
    std::int64_t rows() const { return offsets.back(); }
    std::int64_t rows(int rank) const { return offsets[std::size_t(rank) + 1] - offsets[std::size_t(rank)]; }
    // The rank owning row `row` of the distributed numbering (the last of equal offsets' ranks
    // never owns one: an empty rank is skipped).
    int owner(std::int64_t row) const;
};

// Contiguous rows, balanced by entries, for the given global row lengths: every rank gets at least
// one row. Throws InvalidArgument when there are more ranks than rows. Not collective.
RowPartition balanced_partition(std::span<const std::int64_t> row_lengths, int ranks);
// METIS on the graph of A + A^T of a square matrix (throws InvalidArgument without METIS). Not
// collective: the factories call it on one rank and broadcast the result.
template <Real T, sparse::Index I> RowPartition metis_partition(const sparse::HostCsr<T, I>& a, int ranks);

// ---- The matrix -------------------------------------------------------------------------------------

struct Options {
    // For the factories that partition (from_global, read_matrix_market, the Poisson generators):
    // balanced or METIS. Ignored where row_offsets is given.
    Partitioning partitioning = Partitioning::balanced;
    // Explicit contiguous row ranges: ranks + 1 offsets rising from 0 to the global row count.
    // Ranks may be left without rows this way (they take part in no exchange), which the
    // automatic partitions never do. The constructor from each rank's rows checks that each
    // rank's row count matches.
    std::vector<std::int64_t> row_offsets;
    // Hand device pointers to MPI instead of staging through pinned host memory: only for an MPI
    // built CUDA-aware and the CUDA backend (refused on any other backend). Off by default.
    bool cuda_aware = false;
    // The SpMV format of the local products (sparse::Format).
    sparse::Format format = sparse::Format::automatic;
};

// The halo exchange of one rank: what one product sends and receives (fixed at construction),
// and the host wall time spent in exchanges so far (from the pack to the ghost values' upload
// enqueued, including the wait for the neighbours).
struct HaloStats {
    std::int64_t bytes_sent = 0, bytes_received = 0; // per product
    int messages_sent = 0, messages_received = 0;    // per product: one per neighbour rank
    std::int64_t products = 0;                       // products so far
    double seconds = 0;                              // accumulated over those products
};

// A square sparse matrix distributed by rows (T float or double). Each rank's rows are a diagonal
// block (the columns of its own rows, a sparse::Csr of rows() x rows()) and an off-diagonal block
// whose columns are the ghosts, the other ranks' entries of x that the rank's rows touch,
// numbered 0 .. ghosts()-1 (a sparse::Csr of ghosts() columns stored, as PETSc's compressed
// rows, for only the rows that touch a ghost). Local indices are 32-bit where they fit and 64-bit
// otherwise; global indices come in either width.
//
// apply(alpha, x, beta, y): y = alpha*A*x + beta*y over this rank's rows, x and y its parts (each
// rows() elements, on the matrix's context, x contiguous), with sparse::spmv's semantics (beta ==
// 0: y is only written). A product packs the values its neighbours need on the device into one
// buffer (one message per neighbour), reads it into pinned host memory, enqueues the diagonal
// block's product, exchanges with MPI_Irecv/MPI_Isend/MPI_Waitall while that runs, uploads the
// ghosts and adds the off-diagonal block's product to its rows (sparse::spmv_rows): everything
// on the context's current queue.
// Not collective, but every rank with neighbours must call it for the others to complete.
//
// A handle: copies share the device arrays, counters and the GlobalSum.
template <Real T> class Matrix {
public:
    Matrix() = default;
    // From each rank's own rows, in global column indices: own.rows is this rank's row count and
    // own.cols the global column count. The ranks' rows follow one another in rank order (rank 0
    // holds the first ones) unless options.row_offsets says where each rank's rows lie; a rank
    // may hold no rows.
    template <sparse::Index I>
    Matrix(const Context& ctx, const Communicator& comm, std::int64_t global_rows, std::int64_t global_cols,
           const sparse::HostCsr<T, I>& own, const Options& options = {});
    // From a whole matrix held by rank `root` (the other ranks' `global` is ignored): partitioned
    // there (options.partitioning or row_offsets) and each rank's rows sent to it.
    template <sparse::Index I>
    static Matrix from_global(const Context& ctx, const Communicator& comm, const sparse::HostCsr<T, I>& global,
                              int root = 0, const Options& options = {});
    // A Matrix Market file read once, by rank 0 (sparse::read_matrix_market), then as from_global.
    static Matrix read_matrix_market(const Context& ctx, const Communicator& comm, const std::string& path,
                                     const Options& options = {});
    // The negative Laplacian of an nx x ny (x ny x nz) grid, 5 (7) points, zero Dirichlet
    // boundaries, natural order: sparse::poisson's matrix, that of Laplacian2D/3D
    // (xgpu/operator.hpp; nz = 1 is the 2-D one). Each rank generates only its rows
    // (sparse::poisson_rows; with METIS the whole matrix is made on rank 0 and partitioned).
    static Matrix poisson2d(const Context& ctx, const Communicator& comm, std::int64_t nx, std::int64_t ny,
                            const Options& options = {});
    static Matrix poisson3d(const Context& ctx, const Communicator& comm, std::int64_t nx, std::int64_t ny,
                            std::int64_t nz, const Options& options = {});

    // This rank's rows (the length of its part of x and y): the LinearOperator's shape.
    std::int64_t rows() const;
    std::int64_t cols() const { return rows(); }
    std::int64_t global_rows() const;
    // This rank's first row in the distributed numbering.
    std::int64_t first_row() const;
    const RowPartition& partition() const;
    const Communicator& communicator() const;
    const Context& context() const;
    // Stored entries of this rank's diagonal and off-diagonal blocks.
    std::size_t diagonal_nnz() const;
    std::size_t offdiagonal_nnz() const;
    std::int64_t ghosts() const;
    // This rank's diagonal entries (the global matrix's, at its own rows), for Jacobi and smoothers.
    Array<T> diagonal() const;
    // This rank's diagonal block: its own rows and columns, in local numbering (the block a
    // block-Jacobi preconditioner, such as one multigrid hierarchy per rank, works on). Throws
    // InvalidArgument where the block needs 64-bit indices.
    const sparse::Csr<T, std::int32_t>& local_block() const;
    // The neighbour ranks this rank receives from and sends to, ascending.
    const std::vector<int>& receives_from() const;
    const std::vector<int>& sends_to() const;

    void apply(const Array<T>& x, Array<T>& y) const { apply(T(1), x, T(0), y); }
    void apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const;
    // y = A*x with partial.size() work-groups' partial sums of this rank's x.y (FusedDotOperator:
    // a solver sums them across the ranks with its other sums): the dot fused into the diagonal
    // block's product, the off-diagonal block's rows adding their share after the exchange.
    // False, having done nothing, where the diagonal block's format does not fuse
    // (sparse::Csr::fuses_dot) or the rank has no rows.
    bool apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial) const;
    // This rank's share of the traffic: both blocks' bytes as sparse::Csr counts them, plus the
    // packed values read from x, written and read back, and the ghosts written (TrafficOperator).
    double bytes_per_product() const;
    // Sums over the communicator (DistributedOperator).
    const GlobalSum* global_sum() const;

    HaloStats halo() const;
    void reset_halo_time() const;
    // The host time this rank waited in the solvers' sums across ranks (Sum::seconds).
    double reduction_seconds() const;
    void reset_reduction_time() const;

    // A vector in the user's numbering (rank `root`'s; the others' argument is ignored) to this
    // rank's part, in the distributed numbering. Collective.
    Array<T> scatter(std::span<const T> global, int root = 0) const;
    Array<T> scatter(const std::vector<T>& global, int root = 0) const {
        return scatter(std::span<const T>(global.data(), global.size()), root);
    }
    // The ranks' parts to the whole vector in the user's numbering: on every rank (root < 0) or
    // on `root` alone (the others get an empty vector). Collective.
    std::vector<T> gather(const Array<T>& local, int root = -1) const;

    struct Impl;

private:
    explicit Matrix(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<Impl> impl_;
};

// The dot product and 2-norm of distributed vectors (each rank's part): the local reduction on the
// device, then MPI_Allreduce; the same double on every rank. Collective.
template <Real T> double dot(const Communicator& comm, const Array<T>& x, const Array<T>& y);
template <Real T> double norm(const Communicator& comm, const Array<T>& x);

// Runs f() (which returns int or nothing) and returns its result (0 for nothing). An exception
// escaping f is printed to stderr as "xgpu: rank R of N: <message>" and MPI_Abort(comm, 1) ends
// every rank of the communicator: the others, waiting on this one in a collective or an
// exchange, would otherwise block forever. Use it around a program's distributed work:
//
//   int main(int argc, char** argv) {
//       MPI_Init(&argc, &argv);
//       xgpu::distributed::Communicator comm;
//       const int rc = xgpu::distributed::run_or_abort(comm, [&] { return solve(comm); });
//       MPI_Finalize();
//       return rc;
//   }
template <class F> int run_or_abort(const Communicator& comm, F&& f) noexcept {
    try {
        if constexpr (std::is_void_v<decltype(f())>) {
            f();
            return 0;
        } else {
            return int(f());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "xgpu: rank %d of %d: %s\n", comm.rank(), comm.size(), e.what());
    } catch (...) {
        std::fprintf(stderr, "xgpu: rank %d of %d: an exception that is not a std::exception\n", comm.rank(),
                     comm.size());
    }
    std::fflush(stderr);
    MPI_Abort(comm.comm(), 1);
    return 1; // MPI_Abort does not return
}

extern template class Matrix<float>;
extern template class Matrix<double>;

} // namespace xgpu::distributed
