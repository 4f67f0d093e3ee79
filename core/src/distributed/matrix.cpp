// The row-distributed matrix: its construction (the ranks' checks and agreement, the split into a
// diagonal and an off-diagonal block, the halo's index lists) and its product (the halo exchange
// overlapped with the diagonal block's product).
#include "collective.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "xgpu/elementwise.hpp"

namespace xgpu::distributed {

namespace {

// A local block on the device: 32-bit indices where its shape and entries fit them (half the
// index traffic), else 64-bit.
template <class T> struct Block {
    sparse::Csr<T, std::int32_t> narrow;
    sparse::Csr<T, std::int64_t> wide;
    // Stored for some rows only (the off-diagonal block: its rows with entries): row i is row
    // at[i] of the products' y.
    Array<std::int32_t> at_narrow;
    Array<std::int64_t> at_wide;
    bool is_wide = false;
    std::int64_t rows = 0, cols = 0;
    std::size_t nnz = 0;

    void build(const Context& ctx, std::int64_t r, std::int64_t c, const std::vector<std::int64_t>& row_ptr,
               const std::vector<std::int64_t>& col, const std::vector<T>& val,
               const std::vector<std::int64_t>* at = nullptr) {
        rows = r;
        cols = c;
        nnz = val.size();
        constexpr auto top = std::int64_t(std::numeric_limits<std::int32_t>::max());
        is_wide = r > top || c > top || std::int64_t(nnz) > top;
        if (is_wide) {
            wide = sparse::Csr<T, std::int64_t>(ctx, r, c, row_ptr, col, val);
            if (at) at_wide = to_device(ctx, *at);
        } else {
            const std::vector<std::int32_t> p(row_ptr.begin(), row_ptr.end()), k(col.begin(), col.end());
            narrow = sparse::Csr<T, std::int32_t>(ctx, r, c, p, k, val);
            if (at) at_narrow = to_device(ctx, std::vector<std::int32_t>(at->begin(), at->end()));
        }
    }
    void spmv(const Array<T>& x, Array<T>& y, T alpha, T beta, sparse::Format f) const {
        if (is_wide)
            sparse::spmv(wide, x, y, alpha, beta, f);
        else
            sparse::spmv(narrow, x, y, alpha, beta, f);
    }
    // y = A*x with partial sums of x.y (sparse::Csr::apply_dot): false where it does not fuse.
    bool apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial, sparse::Format f) const {
        return is_wide ? wide.apply_dot(x, y, partial, f) : narrow.apply_dot(x, y, partial, f);
    }
    bool fuses_dot(sparse::Format f) const { return is_wide ? wide.fuses_dot(f) : narrow.fuses_dot(f); }
    // The rows stored into theirs of y (sparse::spmv_rows), adding to a fused dot's partial sums.
    void spmv_rows(const Array<T>& x, Array<T>& y, T alpha, T beta, const Array<T>* d, Array<T>* partial) const {
        if (is_wide)
            sparse::spmv_rows(wide, at_wide, x, y, alpha, beta, d, partial);
        else
            sparse::spmv_rows(narrow, at_narrow, x, y, alpha, beta, d, partial);
    }
    double bytes() const {
        const double index = is_wide ? double(at_wide.size()) * 8 : double(at_narrow.size()) * 4;
        return (is_wide ? wide.bytes_per_product() : narrow.bytes_per_product()) + index;
    }
};

std::vector<std::int64_t> reduce_min(const Communicator& comm, std::vector<std::int64_t> v) {
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_INT64_T, MPI_MIN, comm.comm()),
                      "MPI_Allreduce");
    return v;
}

// Throws, on every rank alike, unless every rank passed the same values (what names them).
void require_same(const Communicator& comm, const std::vector<std::int64_t>& values, const char* what) {
    if (values.empty()) return;
    std::vector<std::int64_t> both(values);
    for (auto v : values)
        both.push_back(-v);
    const auto r = reduce_min(comm, both);
    const std::size_t n = values.size();
    for (std::size_t i = 0; i < n; ++i)
        if (r[i] != -r[n + i]) {
            std::string lo, hi;
            for (std::size_t j = 0; j < n; ++j) {
                lo += fmt::format("{}{}", j ? ", " : "", r[j]);
                hi += fmt::format("{}{}", j ? ", " : "", -r[n + j]);
            }
            throw InvalidArgument(
                fmt::format("xgpu: distributed: the ranks pass different {}: from ({}) to ({})", what, lo, hi));
        }
}

void check_offsets(const std::vector<std::int64_t>& o, int ranks, std::int64_t rows) {
    if (o.size() != std::size_t(ranks) + 1)
        throw InvalidArgument(fmt::format("xgpu: distributed: Options::row_offsets has {} entries, not ranks + 1 = {}",
                                          o.size(), ranks + 1));
    if (o.front() != 0 || o.back() != rows)
        throw InvalidArgument(fmt::format("xgpu: distributed: Options::row_offsets run from {} to {}, not from 0 to "
                                          "the {} rows",
                                          o.front(), o.back(), rows));
    for (int r = 0; r < ranks; ++r)
        if (o[std::size_t(r) + 1] < o[std::size_t(r)])
            throw InvalidArgument(fmt::format("xgpu: distributed: Options::row_offsets fall at rank {} ({} after {})",
                                              r, o[std::size_t(r) + 1], o[std::size_t(r)]));
}

// The checks every factory starts with: the same options (and `sizes`, what the factory's
// arguments say of the matrix) on every rank, explicit row offsets that fit `rows`, and
// cuda_aware only on CUDA.
void check_options(const Context& ctx, const Communicator& comm, const Options& o, std::vector<std::int64_t> sizes,
                   std::int64_t rows) {
    require_same(comm, sizes, "matrix sizes");
    require_same(comm,
                 {std::int64_t(o.partitioning), std::int64_t(o.cuda_aware), std::int64_t(o.format),
                  std::int64_t(o.row_offsets.size())},
                 "Options (partitioning, cuda_aware, format, the number of row_offsets)");
    detail::collectively(comm, [&] {
        if (!ctx.impl()) throw InvalidArgument("xgpu: distributed: an empty Context");
        if (o.cuda_aware && ctx.backend() != "cuda")
            throw InvalidArgument(fmt::format("xgpu: distributed: Options::cuda_aware hands device pointers to MPI, "
                                              "which needs the CUDA backend, not {}",
                                              ctx.backend()));
        if (!o.row_offsets.empty()) check_offsets(o.row_offsets, comm.size(), rows);
    });
    if (!o.row_offsets.empty()) {
        std::vector<std::int64_t> first(o.row_offsets);
        detail::check_mpi(MPI_Bcast(first.data(), int(first.size()), MPI_INT64_T, 0, comm.comm()), "MPI_Bcast");
        detail::collectively(comm, [&] {
            if (first != o.row_offsets)
                throw InvalidArgument("xgpu: distributed: Options::row_offsets differ from rank 0's");
        });
    }
}

std::int64_t poisson_row_length(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::int64_t i) {
    const std::int64_t x = i % nx, y = i / nx % ny, z = i / (nx * ny);
    return 1 + (x > 0) + (x + 1 < nx) + (y > 0) + (y + 1 < ny) + (z > 0) + (z + 1 < nz);
}

std::int64_t grid_rows(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
    if (nx < 1 || ny < 1 || nz < 1)
        throw InvalidArgument(fmt::format("xgpu: distributed: a Poisson grid of {} x {} x {} points", nx, ny, nz));
    std::int64_t n = 0;
    if (__builtin_mul_overflow(nx, ny, &n) || __builtin_mul_overflow(n, nz, &n))
        throw InvalidArgument(fmt::format("xgpu: distributed: a Poisson grid of {} x {} x {} points overflows 64-bit "
                                          "indices",
                                          nx, ny, nz));
    return n;
}

} // namespace

template <Real T> struct Matrix<T>::Impl {
    Impl(const Context& c, const Communicator& m, const Options& o)
        : ctx(c), comm(m), sum(m.comm()), format(o.format), cuda_aware(o.cuda_aware) {}

    Context ctx;
    Communicator comm;
    Sum sum;
    sparse::Format format;
    bool cuda_aware;
    RowPartition partition;
    std::int64_t first = 0, rows = 0;
    Block<T> diagonal, offdiagonal;

    // The halo. Ghost g (of this rank's off-diagonal columns) is global column ghost_columns[g];
    // ghosts from recv_ranks[k] are ghosts recv_offsets[k] .. recv_offsets[k + 1]. The values for
    // send_ranks[k] are x[send_index[j]] for j in send_offsets[k] .. send_offsets[k + 1].
    std::vector<int> recv_ranks, send_ranks;
    std::vector<std::int64_t> recv_offsets{0}, send_offsets{0};
    Array<std::int64_t> send_index;
    Array<T> send_values, ghost_values;
    HostBuffer send_host, recv_host; // pinned staging (none with cuda_aware)
    std::unique_ptr<ElementwiseKernel> pack;

    // The work that must be done before the next exchange may write the ghosts' memory: the last
    // upload from recv_host (staged), or the last off-diagonal product reading ghost_values
    // (device pointers).
    mutable Event ghosts_free;
    mutable std::vector<MPI_Request> requests;
    mutable HaloStats stats;

    std::int64_t sends() const { return send_offsets.back(); }
    std::int64_t ghosts() const { return recv_offsets.back(); }
};

namespace {

template <Real T>
std::shared_ptr<typename Matrix<T>::Impl>
assemble(const Context& ctx, const Communicator& comm, RowPartition partition, const std::vector<std::int64_t>& row_ptr,
         const std::vector<std::int64_t>& col, const std::vector<T>& val, const Options& options) {
    using Impl = typename Matrix<T>::Impl;
    auto m = std::make_shared<Impl>(ctx, comm, options);
    const int rank = comm.rank(), size = comm.size();
    m->first = partition.offsets[std::size_t(rank)];
    m->rows = partition.rows(rank);
    m->partition = std::move(partition);
    const std::int64_t first = m->first, rows = m->rows, last = first + rows;

    // This rank's columns outside its rows, ascending and distinct: the ghosts. Rows being
    // contiguous per rank, each neighbour's ghosts then lie side by side.
    std::vector<std::int64_t> ghost_columns;
    std::vector<int> want(std::size_t(size), 0); // ghosts wanted from each rank
    detail::collectively(comm, [&] {
        for (auto c : col)
            if (c < first || c >= last) ghost_columns.push_back(c);
        std::sort(ghost_columns.begin(), ghost_columns.end());
        ghost_columns.erase(std::unique(ghost_columns.begin(), ghost_columns.end()), ghost_columns.end());
        for (auto c : ghost_columns)
            ++want[std::size_t(m->partition.owner(c))];
    });

    // Each rank learns which of its rows each other rank needs: the counts, then the indices.
    std::vector<int> give(std::size_t(size), 0);
    detail::check_mpi(MPI_Alltoall(want.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm.comm()), "MPI_Alltoall");
    std::vector<int> want_at(std::size_t(size), 0), give_at(std::size_t(size), 0);
    std::exclusive_scan(want.begin(), want.end(), want_at.begin(), 0);
    std::exclusive_scan(give.begin(), give.end(), give_at.begin(), 0);
    std::vector<std::int64_t> requested(std::size_t(give_at.back() + give.back()));
    detail::check_mpi(MPI_Alltoallv(ghost_columns.data(), want.data(), want_at.data(), MPI_INT64_T, requested.data(),
                                    give.data(), give_at.data(), MPI_INT64_T, comm.comm()),
                      "MPI_Alltoallv");

    detail::collectively(comm, [&] {
        for (int q = 0; q < size; ++q) {
            if (want[std::size_t(q)]) {
                m->recv_ranks.push_back(q);
                m->recv_offsets.push_back(m->recv_offsets.back() + want[std::size_t(q)]);
            }
            if (give[std::size_t(q)]) {
                m->send_ranks.push_back(q);
                m->send_offsets.push_back(m->send_offsets.back() + give[std::size_t(q)]);
            }
        }
        for (auto& r : requested) {
            if (r < first || r >= last)
                throw Error(fmt::format("xgpu: distributed: asked for row {}, which this rank does not hold", r));
            r -= first;
        }
        // The two blocks: own columns renumbered from 0, the others to their ghost's index.
        // The off-diagonal block keeps only its rows with entries (`at`: which they are).
        std::vector<std::int64_t> dp{0}, dc, op{0}, oc, at;
        std::vector<T> dv, ov;
        for (std::int64_t i = 0; i < rows; ++i) {
            for (auto k = row_ptr[std::size_t(i)]; k < row_ptr[std::size_t(i) + 1]; ++k) {
                const auto c = col[std::size_t(k)];
                if (c >= first && c < last) {
                    dc.push_back(c - first);
                    dv.push_back(val[std::size_t(k)]);
                } else {
                    oc.push_back(std::lower_bound(ghost_columns.begin(), ghost_columns.end(), c) -
                                 ghost_columns.begin());
                    ov.push_back(val[std::size_t(k)]);
                }
            }
            dp.push_back(std::int64_t(dc.size()));
            if (std::int64_t(oc.size()) > op.back()) {
                op.push_back(std::int64_t(oc.size()));
                at.push_back(i);
            }
        }
        if (rows > 0) m->diagonal.build(ctx, rows, rows, dp, dc, dv);
        if (rows > 0 && !ghost_columns.empty())
            m->offdiagonal.build(ctx, std::int64_t(at.size()), std::int64_t(ghost_columns.size()), op, oc, ov, &at);
        if (m->sends() > 0) {
            m->send_index = to_device(ctx, requested);
            m->send_values = empty<T>(ctx, {std::size_t(m->sends())});
            const char* t = std::is_same_v<T, float> ? "float" : "double";
            m->pack =
                std::make_unique<ElementwiseKernel>(ctx, fmt::format("{0}* out, const int64_t* index, const {0}* x", t),
                                                    "out[i] = x[index[i]]", fmt::format("xgpu_halo_pack_{}", t));
        }
        if (m->ghosts() > 0) m->ghost_values = empty<T>(ctx, {std::size_t(m->ghosts())});
        if (!m->cuda_aware) {
            if (m->sends() > 0) m->send_host = ctx.alloc_host(std::size_t(m->sends()) * sizeof(T));
            if (m->ghosts() > 0) m->recv_host = ctx.alloc_host(std::size_t(m->ghosts()) * sizeof(T));
        }
        m->requests.resize(m->recv_ranks.size() + m->send_ranks.size());
        m->stats.bytes_sent = m->sends() * std::int64_t(sizeof(T));
        m->stats.bytes_received = m->ghosts() * std::int64_t(sizeof(T));
        m->stats.messages_sent = int(m->send_ranks.size());
        m->stats.messages_received = int(m->recv_ranks.size());
    });
    return m;
}

// From a whole matrix on `root`: partitioned there, each rank's rows (renumbered) sent to it.
template <Real T, sparse::Index I>
std::shared_ptr<typename Matrix<T>::Impl> distribute(const Context& ctx, const Communicator& comm,
                                                     const sparse::HostCsr<T, I>& a, int root, const Options& options) {
    const int rank = comm.rank(), size = comm.size();
    // The root first: every later step sends from it.
    require_same(comm, {root}, "root ranks");
    if (root < 0 || root >= size)
        throw InvalidArgument(fmt::format("xgpu: distributed: root rank {} of {} ranks", root, size));
    std::int64_t shape[2] = {0, 0};
    detail::collectively(comm, [&] {
        if (rank != root) return;
        a.validate();
        if (a.rows != a.cols)
            throw InvalidArgument(
                fmt::format("xgpu: distributed: the matrix must be square, not {} x {}", a.rows, a.cols));
        shape[0] = a.rows;
        shape[1] = a.cols;
    });
    detail::check_mpi(MPI_Bcast(shape, 2, MPI_INT64_T, root, comm.comm()), "MPI_Bcast");
    const std::int64_t n = shape[0];
    check_options(ctx, comm, options, {}, n);

    // The partition, made on the root and sent to all.
    RowPartition p;
    detail::collectively(comm, [&] {
        if (rank != root) return;
        if (!options.row_offsets.empty()) {
            p.offsets = options.row_offsets;
        } else if (options.partitioning == Partitioning::metis) {
            p = metis_partition(a, size);
        } else {
            std::vector<std::int64_t> lengths(static_cast<std::size_t>(n));
            for (std::int64_t i = 0; i < n; ++i)
                lengths[std::size_t(i)] = std::int64_t(a.row_ptr[std::size_t(i) + 1] - a.row_ptr[std::size_t(i)]);
            p = balanced_partition(lengths, size);
        }
    });
    p.offsets.resize(std::size_t(size) + 1);
    detail::check_mpi(MPI_Bcast(p.offsets.data(), size + 1, MPI_INT64_T, root, comm.comm()), "MPI_Bcast");
    std::int64_t permuted = p.permutation.empty() ? 0 : 1;
    detail::check_mpi(MPI_Bcast(&permuted, 1, MPI_INT64_T, root, comm.comm()), "MPI_Bcast");
    if (permuted) {
        p.permutation.resize(std::size_t(n));
        detail::check_mpi(MPI_Bcast(p.permutation.data(), detail::mpi_count(n, "rows"), MPI_INT64_T, root, comm.comm()),
                          "MPI_Bcast");
    }

    // On the root, the rows in the distributed numbering, rank after rank: their lengths, their
    // columns renumbered, their values.
    std::vector<std::int64_t> lengths, columns;
    std::vector<T> values;
    std::vector<int> row_counts(static_cast<std::size_t>(size)), row_at(static_cast<std::size_t>(size)),
        nz_counts(static_cast<std::size_t>(size)), nz_at(static_cast<std::size_t>(size));
    detail::collectively(comm, [&] {
        for (int r = 0; r < size; ++r)
            row_counts[std::size_t(r)] = detail::mpi_count(p.rows(r), "a rank's rows");
        std::exclusive_scan(row_counts.begin(), row_counts.end(), row_at.begin(), 0);
        if (rank != root) return;
        std::vector<std::int64_t> order(static_cast<std::size_t>(n));
        if (permuted)
            for (std::int64_t i = 0; i < n; ++i)
                order[std::size_t(p.permutation[std::size_t(i)])] = i;
        else
            std::iota(order.begin(), order.end(), std::int64_t(0));
        lengths.resize(std::size_t(n));
        columns.reserve(a.nnz());
        values.reserve(a.nnz());
        std::vector<std::pair<std::int64_t, T>> row;
        for (int r = 0; r < size; ++r) {
            const std::size_t before = values.size();
            for (auto i = p.offsets[std::size_t(r)]; i < p.offsets[std::size_t(r) + 1]; ++i) {
                const auto o = std::size_t(order[std::size_t(i)]);
                row.clear();
                for (auto k = std::size_t(a.row_ptr[o]); k < std::size_t(a.row_ptr[o + 1]); ++k) {
                    const auto c = std::int64_t(a.col_idx[k]);
                    row.emplace_back(permuted ? p.permutation[std::size_t(c)] : c, a.values[k]);
                }
                // Renumbered columns ascend again within the row, as the blocks' CSR prefers.
                if (permuted)
                    std::stable_sort(row.begin(), row.end(),
                                     [](const auto& u, const auto& v) { return u.first < v.first; });
                for (const auto& [c, v] : row) {
                    columns.push_back(c);
                    values.push_back(v);
                }
                lengths[std::size_t(i)] = std::int64_t(row.size());
            }
            nz_counts[std::size_t(r)] = detail::mpi_count(std::int64_t(values.size() - before), "a rank's entries");
        }
        std::exclusive_scan(nz_counts.begin(), nz_counts.end(), nz_at.begin(), 0);
    });
    const int own = row_counts[std::size_t(rank)];
    int own_nz = 0;
    detail::check_mpi(MPI_Scatter(nz_counts.data(), 1, MPI_INT, &own_nz, 1, MPI_INT, root, comm.comm()), "MPI_Scatter");
    std::vector<std::int64_t> row_ptr(std::size_t(own) + 1, 0), col(static_cast<std::size_t>(own_nz));
    std::vector<T> val(static_cast<std::size_t>(own_nz));
    detail::check_mpi(MPI_Scatterv(lengths.data(), row_counts.data(), row_at.data(), MPI_INT64_T, row_ptr.data() + 1,
                                   own, MPI_INT64_T, root, comm.comm()),
                      "MPI_Scatterv");
    std::partial_sum(row_ptr.begin(), row_ptr.end(), row_ptr.begin());
    detail::check_mpi(MPI_Scatterv(columns.data(), nz_counts.data(), nz_at.data(), MPI_INT64_T, col.data(), own_nz,
                                   MPI_INT64_T, root, comm.comm()),
                      "MPI_Scatterv");
    detail::check_mpi(MPI_Scatterv(values.data(), nz_counts.data(), nz_at.data(), detail::mpi_type<T>(), val.data(),
                                   own_nz, detail::mpi_type<T>(), root, comm.comm()),
                      "MPI_Scatterv");
    return assemble<T>(ctx, comm, std::move(p), row_ptr, col, val, options);
}

// A Poisson matrix: balanced or given rows generated where they live, or, with METIS, the whole
// matrix on rank 0, distributed.
template <Real T>
std::shared_ptr<typename Matrix<T>::Impl> poisson(const Context& ctx, const Communicator& comm, std::int64_t nx,
                                                  std::int64_t ny, std::int64_t nz, const Options& options) {
    std::int64_t n = 0;
    detail::collectively(comm, [&] { n = grid_rows(nx, ny, nz); });
    check_options(ctx, comm, options, {nx, ny, nz}, n);
    if (options.row_offsets.empty() && options.partitioning == Partitioning::metis) {
        sparse::HostCsr<T, std::int64_t> a;
        detail::collectively(comm, [&] {
            if (comm.rank() == 0) a = sparse::poisson<T, std::int64_t>(nx, ny, nz);
        });
        return distribute(ctx, comm, a, 0, options);
    }
    RowPartition p;
    std::vector<std::int64_t> row_ptr, col;
    std::vector<T> val;
    detail::collectively(comm, [&] {
        if (!options.row_offsets.empty()) {
            p.offsets = options.row_offsets;
        } else {
            std::vector<std::int64_t> lengths(static_cast<std::size_t>(n));
            for (std::int64_t i = 0; i < n; ++i)
                lengths[std::size_t(i)] = poisson_row_length(nx, ny, nz, i);
            p = balanced_partition(lengths, comm.size());
        }
        auto mine =
            sparse::poisson_rows<T, std::int64_t>(nx, ny, nz, p.offsets[std::size_t(comm.rank())], p.rows(comm.rank()));
        row_ptr = std::move(mine.row_ptr);
        col = std::move(mine.col_idx);
        val = std::move(mine.values);
    });
    return assemble<T>(ctx, comm, std::move(p), row_ptr, col, val, options);
}

} // namespace

template <Real T>
template <sparse::Index I>
Matrix<T>::Matrix(const Context& ctx, const Communicator& comm, std::int64_t global_rows, std::int64_t global_cols,
                  const sparse::HostCsr<T, I>& own, const Options& options) {
    check_options(ctx, comm, options, {global_rows, global_cols}, global_rows);
    const int size = comm.size();
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size));
    detail::collectively(comm, [&] {
        if (global_rows != global_cols || global_rows < 0)
            throw InvalidArgument(
                fmt::format("xgpu: distributed: the matrix must be square, not {} x {}", global_rows, global_cols));
        if (own.cols != global_cols)
            throw ShapeError(fmt::format("xgpu: distributed: this rank's rows have {} columns, not the matrix's {}",
                                         own.cols, global_cols));
        own.validate();
    });
    const std::int64_t mine = own.rows;
    detail::check_mpi(MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm.comm()),
                      "MPI_Allgather");
    // Every rank holds every count now, so each finds the same fault and says the same.
    RowPartition p;
    p.offsets.assign(std::size_t(size) + 1, 0);
    std::partial_sum(counts.begin(), counts.end(), p.offsets.begin() + 1);
    if (!options.row_offsets.empty()) {
        for (int r = 0; r < size; ++r)
            if (counts[std::size_t(r)] != options.row_offsets[std::size_t(r) + 1] - options.row_offsets[std::size_t(r)])
                throw ShapeError(
                    fmt::format("xgpu: distributed: rank {} holds {} rows, but Options::row_offsets give "
                                "it {} (rows {} to {})",
                                r, counts[std::size_t(r)],
                                options.row_offsets[std::size_t(r) + 1] - options.row_offsets[std::size_t(r)],
                                options.row_offsets[std::size_t(r)], options.row_offsets[std::size_t(r) + 1]));
    } else if (p.offsets.back() != global_rows) {
        throw ShapeError(fmt::format("xgpu: distributed: the ranks hold {} rows together, not the matrix's {}",
                                     p.offsets.back(), global_rows));
    }
    std::vector<std::int64_t> row_ptr(own.row_ptr.begin(), own.row_ptr.end()),
        col(own.col_idx.begin(), own.col_idx.end());
    impl_ = assemble<T>(ctx, comm, std::move(p), row_ptr, col, own.values, options);
}

template <Real T>
template <sparse::Index I>
Matrix<T> Matrix<T>::from_global(const Context& ctx, const Communicator& comm, const sparse::HostCsr<T, I>& global,
                                 int root, const Options& options) {
    return Matrix(distribute(ctx, comm, global, root, options));
}

template <Real T>
Matrix<T> Matrix<T>::read_matrix_market(const Context& ctx, const Communicator& comm, const std::string& path,
                                        const Options& options) {
    sparse::HostCsr<T, std::int64_t> a;
    detail::collectively(comm, [&] {
        if (comm.rank() == 0) a = sparse::read_matrix_market<T, std::int64_t>(path);
    });
    return Matrix(distribute(ctx, comm, a, 0, options));
}

template <Real T>
Matrix<T> Matrix<T>::poisson2d(const Context& ctx, const Communicator& comm, std::int64_t nx, std::int64_t ny,
                               const Options& options) {
    return Matrix(poisson<T>(ctx, comm, nx, ny, 1, options));
}

template <Real T>
Matrix<T> Matrix<T>::poisson3d(const Context& ctx, const Communicator& comm, std::int64_t nx, std::int64_t ny,
                               std::int64_t nz, const Options& options) {
    return Matrix(poisson<T>(ctx, comm, nx, ny, nz, options));
}

template <Real T> std::int64_t Matrix<T>::rows() const {
    return impl_ ? impl_->rows : 0;
}
template <Real T> std::int64_t Matrix<T>::global_rows() const {
    return impl_ ? impl_->partition.rows() : 0;
}
template <Real T> std::int64_t Matrix<T>::first_row() const {
    return impl_ ? impl_->first : 0;
}
template <Real T> const RowPartition& Matrix<T>::partition() const {
    return impl_->partition;
}
template <Real T> const Communicator& Matrix<T>::communicator() const {
    return impl_->comm;
}
template <Real T> const Context& Matrix<T>::context() const {
    return impl_->ctx;
}
template <Real T> std::size_t Matrix<T>::diagonal_nnz() const {
    return impl_ ? impl_->diagonal.nnz : 0;
}
template <Real T> std::size_t Matrix<T>::offdiagonal_nnz() const {
    return impl_ ? impl_->offdiagonal.nnz : 0;
}
template <Real T> Array<T> Matrix<T>::diagonal() const {
    const Block<T>& d = impl_->diagonal;
    if (d.is_wide) return d.wide.diagonal();
    if (d.rows == 0) return empty<T>(impl_->ctx, {0});
    return d.narrow.diagonal();
}

template <Real T> const sparse::Csr<T, std::int32_t>& Matrix<T>::local_block() const {
    if (impl_->diagonal.is_wide)
        throw InvalidArgument(fmt::format("xgpu: distributed: rank {}'s diagonal block ({} rows, {} entries) needs "
                                          "64-bit indices: local_block() gives 32-bit ones",
                                          impl_->comm.rank(), impl_->diagonal.rows, impl_->diagonal.nnz));
    return impl_->diagonal.narrow;
}

template <Real T> std::int64_t Matrix<T>::ghosts() const {
    return impl_ ? impl_->ghosts() : 0;
}
template <Real T> const std::vector<int>& Matrix<T>::receives_from() const {
    return impl_->recv_ranks;
}
template <Real T> const std::vector<int>& Matrix<T>::sends_to() const {
    return impl_->send_ranks;
}
template <Real T> const GlobalSum* Matrix<T>::global_sum() const {
    return impl_ ? &impl_->sum : nullptr;
}
template <Real T> HaloStats Matrix<T>::halo() const {
    return impl_ ? impl_->stats : HaloStats{};
}
template <Real T> void Matrix<T>::reset_halo_time() const {
    if (!impl_) return;
    impl_->stats.products = 0;
    impl_->stats.seconds = 0;
}

template <Real T> double Matrix<T>::reduction_seconds() const {
    return impl_ ? impl_->sum.seconds() : 0;
}

template <Real T> void Matrix<T>::reset_reduction_time() const {
    if (impl_) impl_->sum.reset_time();
}

template <Real T> double Matrix<T>::bytes_per_product() const {
    if (!impl_) return 0;
    const auto& m = *impl_;
    double b = 0;
    if (m.rows > 0) b += m.diagonal.bytes();
    if (m.offdiagonal.nnz > 0) b += m.offdiagonal.bytes();
    // The pack reads its indices and x's entries and writes the packed values; the read into
    // pinned memory reads them again; the upload writes the ghosts.
    b += double(m.sends()) * double(sizeof(std::int64_t) + 3 * sizeof(T)) + double(m.ghosts()) * sizeof(T);
    return b;
}

namespace {

// The checks of a product's operands, before any work.
template <Real T> void check_product(const typename Matrix<T>::Impl& m, const Array<T>& x, const Array<T>& y) {
    if (x.size() != std::size_t(m.rows) || y.size() != std::size_t(m.rows))
        throw ShapeError(fmt::format("xgpu: distributed: rank {}: a product with x of {} and y of {} elements, for "
                                     "the rank's {} rows",
                                     m.comm.rank(), x.size(), y.size(), m.rows));
    if (m.rows > 0 && (x.context() != m.ctx || y.context() != m.ctx))
        throw InvalidArgument(
            fmt::format("xgpu: distributed: rank {}: x and y must be on the matrix's context", m.comm.rank()));
    if (m.sends() > 0 && !x.is_contiguous())
        throw InvalidArgument(
            fmt::format("xgpu: distributed: rank {}: x must be contiguous (pass x.copy())", m.comm.rank()));
}

// y = alpha*A*x + beta*y; with `partial` (alpha 1, beta 0, a diagonal block that fuses) the
// partial sums of x.y: fused into the diagonal block's product, the off-diagonal block's rows
// adding theirs.
template <Real T>
void product(const typename Matrix<T>::Impl& m, T alpha, const Array<T>& x, T beta, Array<T>& y, Array<T>* partial) {
    const auto start = std::chrono::steady_clock::now();
    const Queue q = m.ctx.current_queue();
    Event packed;
    if (m.sends() > 0) {
        (*m.pack)(m.send_values, m.send_index, x);
        packed =
            m.cuda_aware
                ? q.marker()
                : m.send_values.get_async(std::span<T>(static_cast<T*>(m.send_host.data()), std::size_t(m.sends())));
    }
    // The diagonal block while the halo moves: it needs no ghost.
    if (m.rows > 0) {
        if (!partial)
            m.diagonal.spmv(x, y, alpha, beta, m.format);
        else if (!m.diagonal.apply_dot(x, y, *partial, m.format)) // apply_dot checked that it fuses
            throw Error("xgpu: distributed: the diagonal block declined the fused dot it was checked to take");
    }
    if (packed) packed.wait();
    if (m.ghosts_free) m.ghosts_free.wait();

    const auto address = [](const Array<T>& a, std::int64_t at) {
        return reinterpret_cast<T*>(std::uintptr_t(a.buffer().device_address())) + a.offset() + at;
    };
    // One message a neighbour, the receives posted first: from and into the pinned copies, or the
    // device arrays themselves where MPI takes device pointers.
    std::size_t k = 0;
    const auto post = [&](bool receive, const std::vector<int>& ranks, const std::vector<std::int64_t>& offsets,
                          const Array<T>& device, void* host) {
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            const std::int64_t at = offsets[i], count = offsets[i + 1] - at;
            T* data = m.cuda_aware ? address(device, at) : static_cast<T*>(host) + at;
            MPI_Request* r = &m.requests[k++];
            const MPI_Datatype type = detail::mpi_type<T>();
            detail::check_mpi(receive ? MPI_Irecv(data, int(count), type, ranks[i], 0, m.comm.comm(), r)
                                      : MPI_Isend(data, int(count), type, ranks[i], 0, m.comm.comm(), r),
                              receive ? "MPI_Irecv" : "MPI_Isend");
        }
    };
    post(true, m.recv_ranks, m.recv_offsets, m.ghost_values, m.recv_host.data());
    post(false, m.send_ranks, m.send_offsets, m.send_values, m.send_host.data());
    if (k > 0) detail::check_mpi(MPI_Waitall(int(k), m.requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (m.ghosts() > 0 && !m.cuda_aware)
        m.ghosts_free = q.write_async(m.ghost_values.buffer(), m.recv_host.data(), std::size_t(m.ghosts()) * sizeof(T),
                                      std::size_t(m.ghost_values.offset()) * sizeof(T));
    m.stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++m.stats.products;
    if (m.offdiagonal.nnz > 0) m.offdiagonal.spmv_rows(m.ghost_values, y, alpha, T(1), partial ? &x : nullptr, partial);
    if (m.cuda_aware && m.ghosts() > 0) m.ghosts_free = q.marker();
}

} // namespace

template <Real T> void Matrix<T>::apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const {
    if (!impl_) throw InvalidArgument("xgpu: distributed: apply on an empty Matrix");
    check_product<T>(*impl_, x, y);
    product<T>(*impl_, alpha, x, beta, y, nullptr);
}

template <Real T> bool Matrix<T>::apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial) const {
    if (!impl_) throw InvalidArgument("xgpu: distributed: apply_dot on an empty Matrix");
    const Impl& m = *impl_;
    check_product<T>(m, x, y);
    // The diagonal block must fuse the dot, and x and y be whole arrays: else nothing done.
    if (m.rows == 0 || !x.desc().is_c_contiguous() || !y.desc().is_c_contiguous() || !m.diagonal.fuses_dot(m.format))
        return false;
    if (partial.empty() || partial.size() > (std::size_t(1) << 20) || !partial.desc().is_c_contiguous() ||
        partial.context() != m.ctx)
        throw InvalidArgument(fmt::format("xgpu: distributed: rank {}: apply_dot: partial must be a contiguous Array "
                                          "of 1 to 2^20 elements on the matrix's context",
                                          m.comm.rank()));
    if (xgpu::detail::may_share_memory(partial.desc(), x.desc()) ||
        xgpu::detail::may_share_memory(partial.desc(), y.desc()))
        throw InvalidArgument(
            fmt::format("xgpu: distributed: rank {}: apply_dot: partial shares memory with x or y", m.comm.rank()));
    product<T>(m, T(1), x, T(0), y, &partial);
    return true;
}

template <Real T> Array<T> Matrix<T>::scatter(std::span<const T> global, int root) const {
    if (!impl_) throw InvalidArgument("xgpu: distributed: scatter on an empty Matrix");
    const Impl& m = *impl_;
    const int size = m.comm.size(), rank = m.comm.rank();
    if (root < 0 || root >= size)
        throw InvalidArgument(fmt::format("xgpu: distributed: scatter from rank {} of {} ranks", root, size));
    const std::int64_t n = m.partition.rows();
    std::vector<int> counts(static_cast<std::size_t>(size)), at(static_cast<std::size_t>(size));
    std::vector<T> ordered;
    detail::collectively(m.comm, [&] {
        for (int r = 0; r < size; ++r)
            counts[std::size_t(r)] = detail::mpi_count(m.partition.rows(r), "a rank's rows");
        std::exclusive_scan(counts.begin(), counts.end(), at.begin(), 0);
        if (rank != root) return;
        if (std::int64_t(global.size()) != n)
            throw ShapeError(fmt::format(
                "xgpu: distributed: scatter of a vector of {} elements for a matrix of {} rows", global.size(), n));
        if (m.partition.permutation.empty()) return;
        ordered.resize(std::size_t(n));
        for (std::int64_t i = 0; i < n; ++i)
            ordered[std::size_t(m.partition.permutation[std::size_t(i)])] = global[std::size_t(i)];
    });
    std::vector<T> mine(std::size_t(m.rows));
    const T* from = ordered.empty() ? global.data() : ordered.data();
    detail::check_mpi(MPI_Scatterv(from, counts.data(), at.data(), detail::mpi_type<T>(), mine.data(),
                                   counts[std::size_t(rank)], detail::mpi_type<T>(), root, m.comm.comm()),
                      "MPI_Scatterv");
    auto out = empty<T>(m.ctx, {mine.size()});
    if (!mine.empty()) out.set(mine);
    return out;
}

template <Real T> std::vector<T> Matrix<T>::gather(const Array<T>& local, int root) const {
    if (!impl_) throw InvalidArgument("xgpu: distributed: gather on an empty Matrix");
    const Impl& m = *impl_;
    const int size = m.comm.size(), rank = m.comm.rank();
    if (root >= size)
        throw InvalidArgument(fmt::format("xgpu: distributed: gather to rank {} of {} ranks", root, size));
    std::vector<int> counts(static_cast<std::size_t>(size)), at(static_cast<std::size_t>(size));
    std::vector<T> mine;
    detail::collectively(m.comm, [&] {
        for (int r = 0; r < size; ++r)
            counts[std::size_t(r)] = detail::mpi_count(m.partition.rows(r), "a rank's rows");
        std::exclusive_scan(counts.begin(), counts.end(), at.begin(), 0);
        if (local.size() != std::size_t(m.rows))
            throw ShapeError(fmt::format("xgpu: distributed: gather of a part of {} elements for the rank's {} rows",
                                         local.size(), m.rows));
        if (m.rows > 0) mine = local.get();
    });
    const std::int64_t n = m.partition.rows();
    const bool receives = root < 0 || rank == root;
    std::vector<T> all(receives ? std::size_t(n) : 0);
    if (root < 0)
        detail::check_mpi(MPI_Allgatherv(mine.data(), counts[std::size_t(rank)], detail::mpi_type<T>(), all.data(),
                                         counts.data(), at.data(), detail::mpi_type<T>(), m.comm.comm()),
                          "MPI_Allgatherv");
    else
        detail::check_mpi(MPI_Gatherv(mine.data(), counts[std::size_t(rank)], detail::mpi_type<T>(), all.data(),
                                      counts.data(), at.data(), detail::mpi_type<T>(), root, m.comm.comm()),
                          "MPI_Gatherv");
    if (!receives || m.partition.permutation.empty()) return all;
    std::vector<T> out(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        out[std::size_t(i)] = all[std::size_t(m.partition.permutation[std::size_t(i)])];
    return out;
}

template class Matrix<float>;
template class Matrix<double>;

#define XGPU_DISTRIBUTED_INDEXED(T, I)                                                                                 \
    template Matrix<T>::Matrix(const Context&, const Communicator&, std::int64_t, std::int64_t,                        \
                               const sparse::HostCsr<T, I>&, const Options&);                                          \
    template Matrix<T> Matrix<T>::from_global(const Context&, const Communicator&, const sparse::HostCsr<T, I>&, int,  \
                                              const Options&);
XGPU_DISTRIBUTED_TEMPLATES(XGPU_DISTRIBUTED_INDEXED)
#undef XGPU_DISTRIBUTED_INDEXED

} // namespace xgpu::distributed
