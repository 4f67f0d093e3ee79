#!/usr/bin/env bash
# Configures and builds ./build-asan with tests/sanitizers/clang-asan.cmake (clang, AddressSanitizer
# and UndefinedBehaviorSanitizer, -O1 with line tables): the library, tests, examples and the
# libFuzzer harnesses (tests/fuzz), with METIS (Debian's is a shared library, so it stays out of
# ./build, which travels to the GPU machine). Shared by scripts/sanitize.sh and scripts/fuzz.sh,
# so that CI builds the library once for both. The benchmarks, the documentation's examples and the
# distributed layer (MPI) are left out: the main build compiles and runs them, instrumented they
# only add build time, and OpenMPI's own allocations would fill LeakSanitizer's reports.
#
#   scripts/asan-build.sh              # everything
#   scripts/asan-build.sh fuzz_env     # the named targets
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-packages.sh cmake make clang libclang-rt-14-dev llvm ocl-icd-opencl-dev opencl-clhpp-headers \
  pocl-opencl-icd catch2 libfmt-dev libmetis-dev nlohmann-json3-dev

cmake -S . -B build-asan -DCMAKE_TOOLCHAIN_FILE="$PWD/tests/sanitizers/clang-asan.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXGPU_BUILD_FUZZERS=ON -DXGPU_WITH_METIS=ON -DXGPU_BUILD_BENCHMARKS=OFF \
  -DXGPU_BUILD_DOC_EXAMPLES=OFF -DXGPU_WITH_MPI=OFF -DXGPU_BUILD_PYTHON=OFF >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build-asan -j"$(nproc)" "${targets[@]}"
