#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo on the default device (XGPU_BACKEND and
# XGPU_DEVICE choose another).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
build/tools/xgpu-info | tail -n 1
exec build/examples/demo
