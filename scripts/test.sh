#!/usr/bin/env bash
# Installs what is missing, builds, and runs the test suite on every available backend (or on
# the one XGPU_BACKEND / XGPU_DEVICE select).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
# Tests side by side, one a core: the consumer test (a build) overlaps the others.
exec ctest --output-on-failure -j"$(nproc)"
