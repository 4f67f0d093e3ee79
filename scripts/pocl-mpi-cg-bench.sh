#!/usr/bin/env bash
# pocl-mpi-cg-bench.sh: the distributed CG on PoCL against PETSc's, in one run on an otherwise idle
# machine: `mpiexec -n P examples/poisson --2d N --solver cg` (its rows over P ranks, each on
# PoCL) beside `mpiexec -n P bench/petsc-cg N` (PETSc's KSPCG on an MPIAIJ matrix, no
# preconditioner), alternating, `rounds` times each; ms per iteration, each run's median solve.
#
#   scripts/pocl-mpi-cg-bench.sh [N] [ranks] [iterations] [rounds]     (defaults 1024 2 200 2)
#
# POCL_MAX_PTHREAD_COUNT (default: the cores divided among the ranks) sets each rank's PoCL threads,
# POCL_DEVICES its PoCL device (default: basic where a rank has at most one core).
#
# BUILD (default build) holds examples/poisson (built with the distributed layer) and
# bench/petsc-cg (built where PETSc is installed: Debian's petsc-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1024}
P=${2:-2}
ITS=${3:-200}
ROUNDS=${4:-2}
BUILD=${BUILD:-build}
export XGPU_BACKEND=${XGPU_BACKEND:-opencl}
# PoCL's threads per rank: the cores shared out among the ranks (each rank's device would
# otherwise spread its kernels over every core, and the ranks contend for them). With a core or
# less a rank, PoCL's basic device, which runs the kernels in the rank's own thread: a worker
# thread beside it would share its core with the thread that waits in MPI.
CORES=$(nproc)
export POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-$(( CORES / P > 0 ? CORES / P : 1 ))}
if [[ -z ${POCL_DEVICES:-} && $(( CORES / P )) -le 1 ]]; then export POCL_DEVICES=basic; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for f in "$BUILD/examples/poisson" "$BUILD/bench/petsc-cg"; do
    [[ -x $f ]] || { echo "pocl-mpi-cg-bench: $f is not built" >&2; exit 1; }
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    # --max-iterations: every solve runs the same iterations as the peer's (tolerance out of reach).
    x=$(mpiexec -n "$P" "$BUILD/examples/poisson" --2d "$N" --solver cg --tol 1e-30 --max-iterations "$ITS" \
        --repeat 3 2>/dev/null | awk '/^time:/ {print $4}' || true)
    p=$(mpiexec -n "$P" "$BUILD/bench/petsc-cg" "$N" "$ITS" 3 2>/dev/null | awk '{for (i = 1; i < NF; ++i) if ($(i+1) == "ms") print $i}' || true)
    echo "round $r: xgpu $x ms, PETSc $p ms per iteration (2-D Poisson $N^2, $P ranks, $ITS iterations, PoCL ${POCL_DEVICES:-pthread} device, $POCL_MAX_PTHREAD_COUNT threads a rank)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
