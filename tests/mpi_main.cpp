// The Catch2 main of the tests that run under mpiexec: MPI is initialized around the Catch2 run, and
// the process fails when any rank failed (so a check that fails on one rank alone still fails the
// run, whatever mpiexec makes of mixed exit codes).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <xgpu/distributed.hpp>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int failed = Catch::Session().run(argc, argv) != 0 ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed;
}
