# Types of xgpu's user kernels (_kernels.py).
from typing import Any, Sequence, SupportsIndex

import numpy.typing as npt

from . import _xgpu
from ._array import Array

_Sizes = SupportsIndex | Sequence[SupportsIndex]

class Grid:
    global_size: list[int]
    local_size: list[int] | None
    def __init__(self, global_size: _Sizes, local_size: _Sizes | None = None) -> None: ...

class ElementwiseKernel:
    context: _xgpu.Context
    def __init__(self, context: _xgpu.Context, arguments: str, operation: str, name: str = "elementwise_kernel",
                 preamble: str = "") -> None: ...
    @property
    def source(self) -> str: ...
    def __call__(self, *args: Any, range: slice | int | None = None, queue: _xgpu.Queue | None = None) -> None: ...

class ReductionKernel:
    context: _xgpu.Context
    dtype_out: Any
    def __init__(self, context: _xgpu.Context, dtype_out: npt.DTypeLike, neutral: str | float, reduce_expr: str,
                 map_expr: str, arguments: str, name: str = "reduce_kernel", preamble: str = "") -> None: ...
    def __call__(self, *args: Any, range: slice | int | None = None, queue: _xgpu.Queue | None = None) -> Array: ...

class ScanKernel:
    context: _xgpu.Context
    dtype: Any
    def __init__(self, context: _xgpu.Context, dtype: npt.DTypeLike, scan_expr: str, neutral: str | float | None,
                 preamble: str = "") -> None: ...
    def inclusive(self, x: Array, out: Array | None = None, flags: Array | None = None) -> Array: ...
    def exclusive(self, x: Array, out: Array | None = None, flags: Array | None = None) -> Array: ...

class InclusiveScanKernel(ScanKernel):
    def __init__(self, context: _xgpu.Context, dtype: npt.DTypeLike, scan_expr: str,
                 neutral: str | float | None = None, preamble: str = "") -> None: ...
    def __call__(self, x: Array, out: Array | None = None, flags: Array | None = None) -> Array: ...

class ExclusiveScanKernel(ScanKernel):
    def __call__(self, x: Array, out: Array | None = None, flags: Array | None = None) -> Array: ...

def cumsum(x: Array, axis: SupportsIndex | None = None, dtype: npt.DTypeLike | None = None) -> Array: ...
def cumprod(x: Array, axis: SupportsIndex | None = None, dtype: npt.DTypeLike | None = None) -> Array: ...
