#!/usr/bin/env bash
# The whole test suite built with clang's AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/asan-build.sh), run on PoCL: XGPU_BACKEND=opencl (the CUDA backend's missing-driver
# tests set their own). Any report fails the run: undefined behaviour is not recoverable, and
# every leak is reported except those tests/sanitizers/lsan.supp lists, all inside system
# libraries (PoCL, LLVM, the ICD loader), never in xgpu.
#
#   scripts/sanitize.sh            # build ./build-asan and run ctest there
#   scripts/sanitize.sh -R cache   # extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

start=$(date +%s)
scripts/asan-build.sh
built=$(date +%s)

export XGPU_BACKEND=opencl
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:report_error_type=1"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer)
# The consumer test builds an outside project against the installed library: with the same
# compiler and flags, or the sanitizer runtimes would be missing at its link.
export CMAKE_TOOLCHAIN_FILE=$root/tests/sanitizers/clang-asan.cmake
cd build-asan
status=0
# Two at a time. The consumer test (install + find_package, add_subdirectory) checks packaging,
# which the plain run covers; rebuilding the library twice more under the sanitizers would cost
# CI minutes and find nothing the suite does not.
ctest --output-on-failure -j"$(nproc)" -E consumer "$@" || status=$?
echo "xgpu sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
exit $status
