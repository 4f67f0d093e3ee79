# Types of xgpu's Krylov solvers (solvers.py).
from typing import Any

from . import _xgpu
from ._array import Array

class SolveResult(tuple[Array, int]):
    report: _xgpu.SolverReport
    def __new__(cls, x: Array, info: int, report: _xgpu.SolverReport) -> SolveResult: ...
    @property
    def x(self) -> Array: ...
    @property
    def info(self) -> int: ...

def cg(A: Any, b: Array, x0: Array | None = None, *, rtol: float = 1e-05, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None, variant: str = "automatic",
       check_interval: int = 10) -> SolveResult: ...
def bicgstab(A: Any, b: Array, x0: Array | None = None, *, rtol: float = 1e-05, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None, check_interval: int = 10) -> SolveResult: ...
