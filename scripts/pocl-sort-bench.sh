#!/usr/bin/env bash
# pocl-sort-bench.sh: the sorts on PoCL against their CPU peers, in one run on an otherwise idle
# machine: algorithm-bench, then PyOpenCL's RadixSort (Debian's python3-pyopencl, installed if
# missing) and numpy.sort(kind="stable") on the same number of uint32 keys
# (bench/peers/pyopencl_sort.py).
#
#   scripts/pocl-sort-bench.sh [N]     (default 2^24 keys)
#
# BUILD (default build) holds bench/algorithm-bench; XGPU_BACKEND defaults to opencl.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-16777216}
BUILD=${BUILD:-build}
export XGPU_BACKEND=${XGPU_BACKEND:-opencl}
[[ -x $BUILD/bench/algorithm-bench ]] || { echo "pocl-sort-bench: $BUILD/bench/algorithm-bench is not built" >&2; exit 1; }
scripts/ensure-packages.sh python3-pyopencl python3-numpy
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/bench/algorithm-bench" --n "$N" --reps 5
echo
/usr/bin/python3 bench/peers/pyopencl_sort.py "$N"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
