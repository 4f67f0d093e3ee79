#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages, as root or with sudo), then configures and builds
# xgpu in ./build. Used by scripts/demo.sh, scripts/test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

# MPI (and METIS, which the distributed layer's partitioner takes as a shared library) for the
# distributed layer, xgpu::distributed.
packages=(cmake g++ make pkg-config ccache ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd catch2 libfmt-dev
          libcli11-dev nlohmann-json3-dev libopenmpi-dev openmpi-bin libmetis-dev)
scripts/ensure-packages.sh "${packages[@]}"

# ccache lets the consumer test's add_subdirectory build reuse this build's objects.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}"
cmake --build build -j"$(nproc)"
