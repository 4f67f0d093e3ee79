#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages, as root or with sudo), then configures and builds
# xgpu in ./build. Used by scripts/demo.sh, scripts/test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd catch2 libfmt-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "xgpu: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
