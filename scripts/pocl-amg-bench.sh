#!/usr/bin/env bash
# pocl-amg-bench.sh: time to solution on this machine's CPU, in one run: solve-bench (CG with
# smoothed aggregation multigrid, f64, f32 and Chebyshev-smoothed hierarchies, on PoCL; METHODS
# adds cg,cheb) beside PyAMG's smoothed aggregation with CG (bench/peers/pyamg_solve.py; pip's
# pyamg) and PETSc's CG with GAMG on 2 ranks (bench/petsc-cg, built where PETSc is installed), on
# the same Poisson problem.
#
#   scripts/pocl-amg-bench.sh [N] [repeat]     (2-D Poisson N^2, default 1024; median of 3)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1024}
R=${2:-3}
BUILD=${BUILD:-build}
export XGPU_BACKEND=${XGPU_BACKEND:-opencl}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/bench/solve-bench" --2d "$N" --repeat "$R" --methods "${METHODS:-amg,amg-f32,amg-cheb}"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if "$python" -c "import pyamg" 2>/dev/null; then
    "$python" bench/peers/pyamg_solve.py --2d "$N" --repeat "$R"
else
    echo "pyamg is not installed (pip install pyamg): the peer is skipped"
fi
if [[ -x "$BUILD/bench/petsc-cg" ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    mpiexec -n 2 "$BUILD/bench/petsc-cg" "$N" gamg "$R"
else
    echo "$BUILD/bench/petsc-cg is not built (PETSc not installed: apt-get install petsc-dev): the peer is skipped"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
