#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo on the default device (XGPU_BACKEND and
# XGPU_DEVICE choose another).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
build/tools/xgpu-info | tail -n 1
build/examples/demo
# The Poisson solver (examples/poisson), when CLI11 was found: its default problem is sized for the
# device (2-D 4096^2 on GPUs, 512^2 on CPUs: seconds either way).
if [ -x build/examples/poisson ]; then
  build/examples/poisson --precond jacobi
  # The same problem with smoothed aggregation multigrid: its hierarchy, setup and time to solution.
  build/examples/poisson --precond amg
fi
