"""xgpu.show_config() and ``python -m xgpu``: what this installation has and finds."""

from __future__ import annotations

import os
import platform
import sys
from typing import TextIO

from . import _wheels, _xgpu

_VARIABLES = ("XGPU_BACKEND", "XGPU_DEVICE", "XGPU_CUDA_DRIVER", "XGPU_CUDA_NVRTC", "XGPU_CUDA_NVRTC_PATH",
              "XGPU_OPENCL_ICD", "XGPU_OPENCL_FALLBACK_ICD", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES",
              "XGPU_CACHE_DIR", "XGPU_CACHE")


def _distribution(name: str) -> str:
    from importlib import metadata
    try:
        return f"{name} {metadata.version(name)}"
    except metadata.PackageNotFoundError:
        return ""


def show_config(file: TextIO | None = None) -> None:
    """Prints xgpu's version, where it is installed, each backend with its devices or the reason it
    is unavailable, the libraries behind each backend (the CUDA driver and NVRTC, the OpenCL ICD
    loader and the drivers it was given), the wheels found for the ``pocl`` and ``cuda`` extras,
    and the environment variables that steer the choice; then which device
    ``Context.from_env()`` picks. Prints to ``file`` (default: standard output)."""
    out = file if file is not None else sys.stdout
    from . import __version__
    import numpy

    def say(line: str = "") -> None:
        print(line, file=out)

    say(f"xgpu {__version__} ({os.path.dirname(os.path.abspath(__file__))})")
    say(f"Python {platform.python_version()} ({sys.executable}), numpy {numpy.__version__}, "
        f"{platform.system()} {platform.machine()}")
    say()
    say("backends:")
    for b in _xgpu.backends():
        if b.available:
            say(f"  {b.name}: {len(b.devices)} device{'s' if len(b.devices) != 1 else ''}")
            for d in b.devices:
                say(f"    [{d.index}] {d.name} ({d.type}; {d.platform}; {d.version}; driver {d.driver_version})")
        else:
            say(f"  {b.name}: unavailable: {b.reason}")
        for line in b.libraries:
            say(f"    {line}")
    say()
    say("wheels:")
    pocl = _wheels.pocl_library()
    say(f"  pocl: {_distribution('pocl-binary-distribution') + ': ' + pocl if pocl else 'not installed (pip install xgpu[pocl])'}")
    nvrtc = _wheels.nvrtc_folders()
    say(f"  cuda: {_distribution('nvidia-cuda-nvrtc') + ': ' + ', '.join(nvrtc) if nvrtc else 'not installed (pip install xgpu[cuda])'}")
    say()
    say("environment:")
    for name in _VARIABLES:
        if os.environ.get(name):
            say(f"  {name}={os.environ[name]}")
    say()
    try:
        ctx = _xgpu.Context.from_env()
        say(f"Context.from_env(): {ctx.backend}, [{ctx.device.index}] {ctx.device.name}")
    except Exception as e:  # what from_env() says is the point here, whatever it is
        say(f"Context.from_env(): {type(e).__name__}: {e}")


def main() -> int:
    """``python -m xgpu``: show_config(); the exit status is 0 when a device was found, else 1."""
    show_config()
    return 0 if any(b.available for b in _xgpu.backends()) else 1
