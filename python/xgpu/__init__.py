"""xgpu: GPU kernels written as source text, compiled at run time and launched on CUDA or OpenCL
devices (the backend chosen by XGPU_BACKEND), with numpy-like device arrays whose statements run
as one fused kernel each, reductions and user kernels in PyOpenCL's style.

    import numpy as np, xgpu
    ctx = xgpu.Context.from_env()
    x = xgpu.to_device(ctx, np.linspace(0, 1, 1000))
    y = 2 * x + xgpu.sin(x)              # one kernel
    print(xgpu.sum(y).get(), y.get()[:3])

See docs/python.md; ``xgpu.show_config()`` (or ``python -m xgpu``) says what was found here.
"""

from . import _wheels

_wheels.configure()  # NVRTC and PoCL from their wheels, before any backend starts

from . import _xgpu  # noqa: E402
from ._errors import (ArrayHasOffsetError, AxisError, BackendError, BackendUnavailable, CompileError, DTypeError,
                      Error, InvalidArgument, LaunchError, OutOfMemory, ShapeError)
from ._errors import TYPES as _ERROR_TYPES

_xgpu._set_error_types(dict(_ERROR_TYPES))

from ._xgpu import (BackendStatus, Context, Device, Event, Kernel, Local, Program, Queue, backend_names,  # noqa: E402
                    backends)
from ._array import *  # noqa: E402,F401,F403
from ._array import __all__ as _array_names  # noqa: E402
from ._algorithms import *  # noqa: E402,F401,F403
from ._algorithms import __all__ as _algorithm_names  # noqa: E402
from ._kernels import (ElementwiseKernel, ExclusiveScanKernel, Grid, InclusiveScanKernel, ReductionKernel,  # noqa: E402
                       ScanKernel, cumprod, cumsum)
from . import amg, random, solvers, sparse  # noqa: E402
from .image import Image, ImageFormat, Sampler, create_image, image_from_array  # noqa: E402
from ._config import show_config  # noqa: E402
from ._context import default_context  # noqa: E402

__version__ = "0.1.0"
__all__ = ["Error", "CompileError", "OutOfMemory", "LaunchError", "InvalidArgument", "ShapeError", "AxisError",
           "DTypeError", "ArrayHasOffsetError",
           "BackendUnavailable", "BackendError", "BackendStatus", "Context", "Device", "Event", "Kernel", "Local",
           "Program", "Queue", "backend_names", "backends", "ElementwiseKernel", "ReductionKernel", "ScanKernel",
           "InclusiveScanKernel", "ExclusiveScanKernel", "Grid", "cumsum", "cumprod", "amg", "random", "solvers",
           "sparse", "Image",
           "ImageFormat", "Sampler", "create_image", "image_from_array", "show_config", "default_context",
           *_array_names,
           *_algorithm_names]
