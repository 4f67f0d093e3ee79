"""Libraries that pip installs beside xgpu, handed to the backends before any of them starts:
NVIDIA's NVRTC (``pip install xgpu[cuda]``: the nvidia-cuda-nvrtc wheel) through
XGPU_CUDA_NVRTC_PATH, searched before the system's NVRTC, and PoCL (``pip install xgpu[pocl]``:
the pocl-binary-distribution wheel) through XGPU_OPENCL_FALLBACK_ICD, the OpenCL driver used where
no system driver (ICD) is registered. What the user set stays: their NVRTC folders come first, and
their fallback ICD is kept."""

from __future__ import annotations

import glob
import os
import sys

# Where NVIDIA's wheels put NVRTC in site-packages: CUDA 13's, then CUDA 12's.
_NVRTC_FOLDERS = ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib")


def _site_folders() -> list[str]:
    return [p for p in sys.path if p and os.path.isdir(p)]


def nvrtc_folders() -> list[str]:
    """The folders of NVIDIA's NVRTC wheels on sys.path."""
    found = []
    for site in _site_folders():
        for sub in _NVRTC_FOLDERS:
            d = os.path.join(site, sub)
            if d not in found and glob.glob(os.path.join(d, "libnvrtc.so*")):
                found.append(d)
    return found


def pocl_library() -> str | None:
    """PoCL's driver library from the pocl-binary-distribution wheel, or None."""
    for site in _site_folders():
        if not os.path.isdir(os.path.join(site, "pocl_binary_distribution")):
            continue
        # The wheel puts PoCL where PyOpenCL's loader looks (pyopencl/.libs), its data beside it.
        for pattern in ("pyopencl/.libs/libpocl*.so*", "pocl_binary_distribution/**/libpocl*.so*"):
            hits = sorted(glob.glob(os.path.join(site, pattern), recursive=True))
            if hits:
                return hits[0]
    return None


def configure() -> None:
    """Sets XGPU_CUDA_NVRTC_PATH and XGPU_OPENCL_FALLBACK_ICD from the wheels found."""
    wheels = nvrtc_folders()
    if wheels:
        user = [p for p in os.environ.get("XGPU_CUDA_NVRTC_PATH", "").split(os.pathsep) if p]
        os.environ["XGPU_CUDA_NVRTC_PATH"] = os.pathsep.join(user + [d for d in wheels if d not in user])
    if not os.environ.get("XGPU_OPENCL_FALLBACK_ICD"):
        pocl = pocl_library()
        if pocl:
            os.environ["XGPU_OPENCL_FALLBACK_ICD"] = pocl
