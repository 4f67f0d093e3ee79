#!/usr/bin/env bash
# Installs what is missing, builds, and runs the test suite on every available backend (or on
# the one XGPU_BACKEND / XGPU_DEVICE select).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
exec ctest --output-on-failure
