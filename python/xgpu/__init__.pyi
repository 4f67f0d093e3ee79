# Types of the package xgpu: the names it exports, from the modules that define them.
from . import amg as amg, random as random, solvers as solvers, sparse as sparse
from ._array import (Array as Array, compute_pending as compute_pending, empty as empty, full as full,
    zeros as zeros, ones as ones, empty_like as empty_like, zeros_like as zeros_like, ones_like as ones_like,
    full_like as full_like, arange as arange, to_device as to_device, maximum as maximum, minimum as minimum,
    power as power, fmod as fmod, floor_divide as floor_divide, atan2 as atan2, arctan2 as arctan2, hypot as hypot,
    logical_and as logical_and, logical_or as logical_or, where as where, sum as sum, prod as prod, mean as mean,
    var as var, std as std, min as min, max as max,
    amin as amin, amax as amax, argmin as argmin, argmax as argmax, any as any, all as all, dot as dot, vdot as vdot,
    norm as norm, diff as diff, from_dlpack as from_dlpack, DeviceData as DeviceData, sin as sin, cos as cos,
    tan as tan, asin as asin, acos as acos, atan as atan, sinh as sinh, cosh as cosh, tanh as tanh, asinh as asinh,
    acosh as acosh, atanh as atanh, exp as exp, exp2 as exp2, expm1 as expm1, log as log, log2 as log2,
    log10 as log10, log1p as log1p, sqrt as sqrt, cbrt as cbrt, erf as erf, erfc as erfc, fabs as fabs, rint as rint,
    round as round, floor as floor, ceil as ceil, trunc as trunc, abs as abs, real as real, imag as imag,
    conj as conj, isnan as isnan, isinf as isinf, isfinite as isfinite, arcsin as arcsin, arccos as arccos,
    arctan as arctan, arcsinh as arcsinh, arccosh as arccosh, arctanh as arctanh, absolute as absolute,
    conjugate as conjugate, logical_not as logical_not)
from ._algorithms import (argsort as argsort, sort as sort, sort_by_key as sort_by_key, searchsorted as searchsorted,
    unique as unique, bincount as bincount, histogram as histogram, nonzero as nonzero, flatnonzero as flatnonzero,
    argwhere as argwhere, concatenate as concatenate, stack as stack, copy_if as copy_if, remove_if as remove_if,
    partition as partition)
from ._config import (show_config as show_config)
from ._context import (default_context as default_context)
from ._errors import (Error as Error, CompileError as CompileError, OutOfMemory as OutOfMemory,
    LaunchError as LaunchError, InvalidArgument as InvalidArgument, ShapeError as ShapeError, AxisError as AxisError,
    DTypeError as DTypeError, ArrayHasOffsetError as ArrayHasOffsetError, BackendUnavailable as BackendUnavailable,
    BackendError as BackendError)
from ._kernels import (ElementwiseKernel as ElementwiseKernel, ReductionKernel as ReductionKernel,
    ScanKernel as ScanKernel, InclusiveScanKernel as InclusiveScanKernel, ExclusiveScanKernel as ExclusiveScanKernel,
    Grid as Grid, cumsum as cumsum, cumprod as cumprod)
from ._xgpu import (BackendStatus as BackendStatus, Context as Context, Device as Device, Event as Event,
    Kernel as Kernel, Local as Local, Program as Program, Queue as Queue, backend_names as backend_names,
    backends as backends)
from .image import (Image as Image, ImageFormat as ImageFormat, Sampler as Sampler, create_image as create_image,
    image_from_array as image_from_array)

__version__: str
__all__ = ["amg", "random", "solvers", "sparse", "sort", "argsort", "sort_by_key", "searchsorted", "unique",
           "bincount", "histogram", "nonzero", "flatnonzero", "argwhere", "concatenate", "stack", "copy_if",
           "remove_if", "partition", "Array", "compute_pending",
           "empty", "full", "zeros", "ones",
           "empty_like", "zeros_like", "ones_like", "full_like", "arange", "to_device", "maximum", "minimum",
           "power", "fmod", "floor_divide", "atan2", "arctan2", "hypot", "logical_and", "logical_or", "where",
           "sum", "prod", "mean", "var", "std", "min", "max", "amin", "amax", "argmin", "argmax", "any", "all", "dot", "vdot", "norm", "diff",
           "from_dlpack", "DeviceData", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
           "asinh", "acosh", "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt",
           "erf", "erfc", "fabs", "rint", "round", "floor", "ceil", "trunc", "abs", "real", "imag", "conj",
           "isnan", "isinf", "isfinite", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "absolute",
           "conjugate", "logical_not", "show_config", "default_context", "Error", "CompileError", "OutOfMemory",
           "LaunchError",
           "InvalidArgument", "ShapeError", "AxisError", "DTypeError", "ArrayHasOffsetError", "BackendUnavailable",
           "BackendError", "ElementwiseKernel", "ReductionKernel", "ScanKernel", "InclusiveScanKernel",
           "ExclusiveScanKernel", "Grid", "cumsum", "cumprod", "BackendStatus", "Context", "Device", "Event", "Kernel",
           "Local", "Program", "Queue", "backend_names", "backends", "Image", "ImageFormat", "Sampler",
           "create_image", "image_from_array"]
