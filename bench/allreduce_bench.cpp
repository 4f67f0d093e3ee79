// allreduce-bench: the latency of the sum across ranks that the distributed solvers make each
// iteration (MPI_Allreduce of 3 doubles, MPI_SUM), as a median over many calls after a warm-up,
// for the scaling model of docs/distributed.md (alpha + beta log2 P).
//
//   mpiexec -n P allreduce-bench [--calls 20000]
// MPI's C API alone (no C++ bindings to link)
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int calls = 20000;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--calls") == 0) calls = std::max(100, std::atoi(argv[i + 1]));
    const int batch = 100; // calls timed together: one call is near the clock's resolution
    std::vector<double> us;
    double v[3] = {1, 2, 3};
    for (int warm = 0; warm < 1000; ++warm)
        MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int b = 0; b < calls / batch; ++b) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < batch; ++i)
            MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / batch * 1e6;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); // the slowest rank's
        us.push_back(t);
    }
    std::sort(us.begin(), us.end());
    if (rank == 0)
        std::printf("ranks %d  allreduce of 3 doubles: median %.2f us (%.2f .. %.2f over %zu batches of %d)\n", size,
                    us[us.size() / 2], us.front(), us.back(), us.size(), batch);
    MPI_Finalize();
    return 0;
}
