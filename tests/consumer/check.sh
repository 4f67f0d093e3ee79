#!/usr/bin/env bash
# Installs xgpu from BUILD_DIR into a scratch prefix, then builds and runs the consumer project
# against it with find_package(xgpu); again against the package `cpack -G DEB` makes (unpacked
# with dpkg-deb, as dpkg would lay it under /usr); and again with add_subdirectory.
set -euo pipefail
src=$1 build=$2
work="$build/consumer-check"
rm -rf "$work"
# The add_subdirectory build compiles the library again: with the main build's compiler launcher
# (ccache, where scripts/build.sh found it) that is mostly cache hits.
launcher=$(sed -n 's/^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$work/installed" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/installed" -j2 >/dev/null
"$work/installed/consumer"
(cd "$build" && cpack -G DEB -B "$work/package" >/dev/null)
dpkg-deb -x "$work"/package/xgpu-dev_*.deb "$work/package/root"
cmake -S "$src/tests/consumer" -B "$work/packaged" -DCMAKE_PREFIX_PATH="$work/package/root/usr" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/packaged" -j2 >/dev/null
"$work/packaged/consumer"
cmake -S "$src/tests/consumer" -B "$work/subdir" -DXGPU_SOURCE_DIR="$src" -DCMAKE_BUILD_TYPE=Release \
  ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"} >/dev/null
cmake --build "$work/subdir" -j2 >/dev/null
"$work/subdir/consumer"
