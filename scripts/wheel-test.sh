#!/usr/bin/env bash
# The binary wheel as a stranger meets it (CI runs this after scripts/test.sh, whose build's ccache
# makes the wheel's build mostly cache hits):
#   1. scripts/wheel.sh builds the wheel for Debian's python3;
#   2. a fresh virtual environment, with OCL_ICD_VENDORS pointing to an empty folder so that the
#      system's PoCL is invisible, installs xgpu[pocl] from the wheel (its dependencies downloaded
#      first, so the install itself is timed), imports it, runs `python -m xgpu`, the Python test
#      suite (tests/python, examples/python and docs/python.md's blocks) and mypy --strict on
#      examples/python, all against the installed package;
#   3. a second fresh environment without the extra must fail to make a context with an error
#      naming `pip install xgpu[pocl]`.
#
#   scripts/wheel-test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/build-wheel/test
python=/usr/bin/python3
start=$(date +%s)
seconds() { echo "$(($(date +%s) - $1)) s"; }

rm -rf "$root/build-wheel/dist"
WHEEL_DIR=build-wheel/dist scripts/wheel.sh "$python"
wheel=$(ls "$root"/build-wheel/dist/xgpu-*.whl)
built=$(date +%s)

rm -rf "$work"
mkdir -p "$work/no-icds" "$work/wheelhouse"
export OCL_ICD_VENDORS=$work/no-icds
unset XGPU_BACKEND XGPU_DEVICE XGPU_OPENCL_FALLBACK_ICD XGPU_CUDA_NVRTC_PATH PYTHONPATH
# Run from outside the checkout, so that nothing but the installed package can be imported.
cd "$work"

# The dependencies, downloaded once (pip's cache keeps them between runs).
"$python" -m pip download -q -d wheelhouse "$wheel[pocl,test,typing]"

"$python" -m venv pocl
t0=$(date +%s%N)
pocl/bin/pip install -q --no-index --find-links wheelhouse "$wheel[pocl]"
t1=$(date +%s%N)
echo "xgpu wheel-test: pip install xgpu[pocl] from the wheel into a fresh venv: $(((t1 - t0) / 1000000)) ms"
pocl/bin/python -X importtime -c "import xgpu" 2>importtime.log
echo "xgpu wheel-test: import xgpu: $(awk -F'|' '$3 ~ /^ *xgpu$/ {printf "%.3f s", $2 / 1e6}' importtime.log)" \
  "(cumulative, python -X importtime)"
config=$(pocl/bin/python -m xgpu)
echo "$config"
grep -q "ICD: .*libpocl.*XGPU_OPENCL_FALLBACK_ICD; no ICD registered" <<<"$config" ||
  { echo "xgpu wheel-test: the wheel's PoCL was not the OpenCL platform" >&2; exit 1; }
pocl/bin/pip install -q --no-index --find-links wheelhouse "$wheel[pocl,test,typing]"
pocl/bin/python -m pytest -q -p no:cacheprovider "$root/tests/python" "$@"
pocl/bin/python -m pytest -q -p no:cacheprovider "$root/tests/python/pyopencl_compat"
(cd "$root" && "$work/pocl/bin/python" -m mypy --strict --no-incremental examples/python)

# Without the extra, and with no OpenCL driver: the error says what to install.
"$python" -m venv bare
bare/bin/pip install -q --no-index --find-links wheelhouse "$wheel"
if out=$(bare/bin/python -c "import xgpu; xgpu.Context.from_env()" 2>&1); then
  echo "xgpu wheel-test: a context was made with no OpenCL driver and no GPU" >&2
  exit 1
fi
echo "$out" | tail -1
grep -q "pip install xgpu\[pocl\]" <<<"$out" ||
  { echo "xgpu wheel-test: the error does not name pip install xgpu[pocl]" >&2; exit 1; }
echo "xgpu wheel-test: wheel built in $((built - start)) s; tests $(seconds "$built"); total $(seconds "$start")"
