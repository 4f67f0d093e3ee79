# Types of xgpu's Krylov solvers and preconditioners (solvers.py).
from typing import Any, Callable

import numpy as np

from . import _xgpu
from ._array import Array

class SolveResult(tuple[Array, int]):
    report: _xgpu.SolverReport
    def __new__(cls, x: Array, info: int, report: _xgpu.SolverReport) -> SolveResult: ...
    @property
    def x(self) -> Array: ...
    @property
    def info(self) -> int: ...

class NativePreconditioner:
    context: _xgpu.Context
    shape: tuple[int, int]
    dtype: np.dtype[Any]
    def __init__(self, native: _xgpu.Preconditioner) -> None: ...
    def __xgpu_preconditioner__(self) -> _xgpu.Preconditioner: ...
    def matvec(self, x: Array) -> Array: ...
    def __matmul__(self, x: Array) -> Array: ...

class Jacobi(NativePreconditioner):
    def __init__(self, A: Any, *, context: _xgpu.Context | None = None) -> None: ...

class Chebyshev(NativePreconditioner):
    def __init__(self, A: Any, degree: int = 4, *, lanczos_steps: int = 12, safety: float = 1.1,
                 lower_ratio: float = 30.0, context: _xgpu.Context | None = None) -> None: ...

def cg(A: Any, b: Array | Any, x0: Array | Any | None = None, *, rtol: float = 1e-05, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None, callback: Callable[[Array], object] | None = None,
       variant: str = "automatic", check_interval: int = 10) -> SolveResult: ...
def bicgstab(A: Any, b: Array | Any, x0: Array | Any | None = None, *, rtol: float = 1e-05, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None, callback: Callable[[Array], object] | None = None,
             check_interval: int = 10) -> SolveResult: ...
def gmres(A: Any, b: Array | Any, x0: Array | Any | None = None, *, rtol: float = 1e-05, atol: float = 0.0,
          restart: int | None = None, maxiter: int | None = None, M: Any = None,
          callback: Callable[[Any], object] | None = None, callback_type: str | None = None,
          flexible: bool = False) -> SolveResult: ...
