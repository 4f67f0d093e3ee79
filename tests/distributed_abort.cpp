// A program whose last rank throws while the others wait for it in a collective: run_or_abort
// must print the message with the rank and end every rank (tests/CMakeLists.txt checks both,
// under a timeout, so a rank left blocked fails the test).
#include <xgpu/distributed.hpp>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const xgpu::distributed::Communicator comm;
    const int rc = xgpu::distributed::run_or_abort(comm, [&] {
        if (comm.rank() == comm.size() - 1) throw xgpu::InvalidArgument("a deliberate failure on the last rank");
        MPI_Barrier(comm.comm());
        return 0;
    });
    MPI_Finalize();
    return rc;
}
