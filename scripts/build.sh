#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages, as root or with sudo), then configures and builds
# xgpu in ./build. Used by scripts/demo.sh, scripts/test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

# MPI (and METIS, which the distributed layer's partitioner takes as a shared library) for the
# distributed layer, xgpu::distributed.
packages=(cmake g++ make pkg-config ccache ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd catch2 libfmt-dev
          libcli11-dev nlohmann-json3-dev libopenmpi-dev openmpi-bin libmetis-dev
          python3-dev python3-numpy python3-scipy python3-pytest python3-pip python3-matplotlib)
scripts/ensure-packages.sh "${packages[@]}"

# The Python module (python/) for Debian's python3, which has numpy and scipy (a python3 earlier on
# PATH may not), with nanobind from PyPI unpacked into build/_deps; offline, the module is skipped.
# The same interpreter runs the DG example's render.py test (matplotlib).
python=/usr/bin/python3
nanobind=3.1.0
python_options=(-DPython_EXECUTABLE="$python" -DPython3_EXECUTABLE="$python")
deps=build/_deps
if [ ! -f "$deps/nanobind-$nanobind/nanobind/cmake/nanobind-config.cmake" ]; then
  mkdir -p "$deps"
  if "$python" -m pip download -q --no-deps "nanobind==$nanobind" -d "$deps"; then
    "$python" -m zipfile -e "$deps/nanobind-$nanobind-py3-none-any.whl" "$deps/nanobind-$nanobind"
  else
    echo "xgpu: nanobind could not be fetched: the Python module is not built"
  fi
fi
[ -d "$deps/nanobind-$nanobind/nanobind" ] && python_options+=(-DXGPU_NANOBIND_DIR="$PWD/$deps/nanobind-$nanobind/nanobind")

# ccache lets the consumer test's add_subdirectory build reuse this build's objects.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "${python_options[@]}"
cmake --build build -j"$(nproc)"
