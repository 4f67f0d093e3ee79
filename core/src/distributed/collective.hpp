// What the distributed layer's sources share: the ranks' agreement on an error, MPI's datatypes
// for the element types, and the checks on MPI's int counts.
#pragma once

#include <cstdint>
#include <exception>
#include <limits>
#include <string>

#include "xgpu/distributed.hpp"

// M(T, I) for the value and global index types the layer is instantiated for.
#define XGPU_DISTRIBUTED_TEMPLATES(M)                                                                                  \
    M(float, std::int32_t) M(double, std::int32_t) M(float, std::int64_t) M(double, std::int64_t)

namespace xgpu::distributed::detail {

// The one agreement protocol: every rank says whether it failed; where one did, the lowest that
// did broadcasts its kind and message to all (kind and message in and out) and its rank is
// returned on every rank; -1 where none failed. Two collectives (an MPI_MIN, then broadcasts).
int first_error(MPI_Comm comm, bool failed, int& kind, std::string& message);

// Every rank calls it with its own outcome (null: fine). Returns where every rank is fine; else
// throws, on every rank, the error of the lowest rank that had one: an exception of its kind
// (ShapeError, InvalidArgument, else Error) with its message and " (rank R of N)" after it.
void agree(const Communicator& comm, const std::exception_ptr& local);

// Runs f() on this rank, then agree()s on whether it threw.
template <class F> void collectively(const Communicator& comm, F&& f) {
    std::exception_ptr error;
    try {
        f();
    } catch (...) {
        error = std::current_exception();
    }
    agree(comm, error);
}

// Throws Error naming the MPI call when it did not return MPI_SUCCESS (with MPI's default error
// handler, MPI_ERRORS_ARE_FATAL, MPI aborts before this is reached).
void check_mpi(int rc, const char* call);

template <class T> MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<float>() {
    return MPI_FLOAT;
}
template <> inline MPI_Datatype mpi_type<double>() {
    return MPI_DOUBLE;
}
template <> inline MPI_Datatype mpi_type<std::int64_t>() {
    return MPI_INT64_T;
}

// An element count as MPI's int, or InvalidArgument naming what does not fit.
int mpi_count(std::int64_t n, const char* what);

} // namespace xgpu::distributed::detail
