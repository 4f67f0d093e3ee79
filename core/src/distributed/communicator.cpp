// Communicators, the device a rank takes, the ranks' sums and their agreement on errors.
#include "collective.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "../env.hpp"
#include "../selection.hpp"
#include "xgpu/reduction.hpp"

namespace xgpu::distributed {

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
        throw InvalidArgument("xgpu: distributed: MPI is not initialized (call MPI_Init before making a Communicator)");
    if (comm == MPI_COMM_NULL) throw InvalidArgument("xgpu: distributed: a Communicator of MPI_COMM_NULL");
    detail::check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    detail::check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
    // The ranks sharing this node's memory: only their count and this rank's place among them are
    // kept, so the split communicator is freed at once (this class owns no communicator).
    MPI_Comm local = MPI_COMM_NULL;
    detail::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
                      "MPI_Comm_split_type");
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
}

Context device_context(const Communicator& comm, std::string_view backend) {
    // The core's selection (XGPU_BACKEND and XGPU_DEVICE read and validated as everywhere), the
    // node-local rank picking among the devices where XGPU_DEVICE names none.
    const std::string name = backend.empty() ? xgpu::detail::env::backend() : std::string(backend);
    try {
        return xgpu::detail::create_context(name, xgpu::detail::env::device(), std::size_t(comm.local_rank()));
    } catch (const BackendUnavailable& e) {
        throw BackendUnavailable(fmt::format("xgpu: distributed: rank {}: {}", comm.rank(), e.what()));
    }
}

void Sum::sum(double* values, int count) const {
    const auto t0 = std::chrono::steady_clock::now();
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Sum::start_sum(double* values, int count) const {
    if (request_ != MPI_REQUEST_NULL)
        throw InvalidArgument("xgpu: distributed: start_sum while another sum is started (finish_sum it first)");
    detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm_, &request_),
                      "MPI_Iallreduce");
}

void Sum::finish_sum() const {
    if (request_ == MPI_REQUEST_NULL) return;
    const auto t0 = std::chrono::steady_clock::now();
    detail::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string Sum::agree(const std::string& error) const {
    int kind = 0;
    std::string message = error;
    return detail::first_error(comm_, !error.empty(), kind, message) >= 0 ? message : std::string();
}

int Sum::processes() const {
    int n = 1;
    MPI_Comm_size(comm_, &n);
    return n;
}

template <Real T> double dot(const Communicator& comm, const Array<T>& x, const Array<T>& y) {
    // A rank without rows has empty parts: it adds nothing, but still takes part in the sum.
    if (x.size() != y.size())
        throw ShapeError(fmt::format("xgpu: distributed: dot of parts of {} and {} elements", x.size(), y.size()));
    double v = x.size() ? double(xgpu::dot(x, y).get()) : 0.0;
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, comm.comm()), "MPI_Allreduce");
    return v;
}

template <Real T> double norm(const Communicator& comm, const Array<T>& x) {
    // The squares summed (not the local norms): a local norm squared would round once more.
    double v = x.size() ? double(xgpu::dot(x, x).get()) : 0.0;
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, comm.comm()), "MPI_Allreduce");
    return std::sqrt(v);
}

template double dot(const Communicator&, const Array<float>&, const Array<float>&);
template double dot(const Communicator&, const Array<double>&, const Array<double>&);
template double norm(const Communicator&, const Array<float>&);
template double norm(const Communicator&, const Array<double>&);

namespace detail {

void check_mpi(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw Error(fmt::format("xgpu: distributed: {} failed: {}", call, std::string(text, std::size_t(length))),
                {"mpi", call, rc, ""});
}

int mpi_count(std::int64_t n, const char* what) {
    if (n < 0 || n > std::numeric_limits<int>::max())
        throw InvalidArgument(fmt::format("xgpu: distributed: {} ({}) exceed MPI's int counts", what, n));
    return int(n);
}

int first_error(MPI_Comm comm, bool failed, int& kind, std::string& message) {
    // The lowest rank with an error speaks for all: the ranks learn which one with a single
    // MPI_MIN, then that rank broadcasts its kind and message.
    int rank = 0, size = 1;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    int first = failed ? rank : size;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (first == size) return -1;
    int kind_length[2] = {kind, int(message.size())};
    check_mpi(MPI_Bcast(kind_length, 2, MPI_INT, first, comm), "MPI_Bcast");
    kind = kind_length[0];
    message.resize(std::size_t(kind_length[1]));
    check_mpi(MPI_Bcast(message.data(), kind_length[1], MPI_CHAR, first, comm), "MPI_Bcast");
    return first;
}

void agree(const Communicator& comm, const std::exception_ptr& local) {
    enum Kind : int { shape = 1, argument = 2, error = 3 };
    std::string message;
    int kind = error;
    if (local) {
        try {
            std::rethrow_exception(local);
        } catch (const ShapeError& e) {
            message = e.what();
            kind = shape;
        } catch (const InvalidArgument& e) {
            message = e.what();
            kind = argument;
        } catch (const std::exception& e) {
            message = e.what();
        } catch (...) {
            message = "xgpu: distributed: an exception that is not a std::exception";
        }
    }
    const int first = first_error(comm.comm(), bool(local), kind, message);
    if (first < 0) return;
    // Every rank, the one that found it too, throws the same kind (not the exact type: a
    // ParseError becomes an InvalidArgument with its message), so that every rank can handle the
    // refusal the same way.
    message += fmt::format(" (rank {} of {})", first, comm.size());
    switch (kind) {
    case shape: throw ShapeError(message);
    case argument: throw InvalidArgument(message);
    default: throw Error(message);
    }
}

} // namespace detail
} // namespace xgpu::distributed
