#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo on the default device (XGPU_BACKEND and
# XGPU_DEVICE choose another).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
build/tools/xgpu-info | tail -n 1
build/examples/demo
# The Poisson solver (examples/poisson), when CLI11 was found: a problem that takes seconds on PoCL.
if [ -x build/examples/poisson ]; then build/examples/poisson --2d 512 --solver pipecg --precond jacobi; fi
