"""Krylov solvers on the device, called as scipy.sparse.linalg's:

    x, info = xgpu.solvers.cg(A, b, rtol=1e-8, M="jacobi")
    result = xgpu.solvers.bicgstab(A, b); result.report.iterations

``A`` is an ``xgpu.sparse.csr_matrix``, an ``xgpu.sparse.Laplacian``, or any object with
``shape`` and ``matvec`` (scipy's LinearOperator protocol: matvec gets an xgpu array and may
return an xgpu array or anything numpy takes). ``b`` is an xgpu array (or a host array, moved to
A's context), float32 or float64. They return ``(x, info)`` as scipy does (info 0: converged; the
iteration count where the limit came first; -1 for a breakdown, NaN or stagnation) with the
solver's report as ``.report`` (status, iterations, residual, time per iteration, ...).
"""

import numpy as np

from . import _xgpu
from ._array import Array, to_device, zeros
from ._errors import DTypeError, InvalidArgument, ShapeError
from .sparse import Laplacian, csr_matrix


class SolveResult(tuple):
    """(x, info), with the solver's report as ``.report``."""

    def __new__(cls, x, info, report):
        self = super().__new__(cls, (x, info))
        self.report = report
        return self

    @property
    def x(self):
        """The solution, an xgpu array."""
        return self[0]

    @property
    def info(self):
        """scipy's info: 0 converged, > 0 the iterations run without converging, < 0 a breakdown."""
        return self[1]


def _python_operator(op, n, dtype, context):
    """(n, call): the solver calls call(x) with the GIL taken, for an operator's product."""

    def call(desc):
        y = op.matvec(Array(desc))
        if not isinstance(y, Array):
            y = to_device(context, np.asarray(y, dtype=dtype).reshape(n))
        elif y.dtype != dtype:
            y = y.astype(dtype)
        if y.size != n:
            raise ShapeError(f"xgpu: matvec returned {y.size} values for an operator of {n} rows")
        return y.desc

    return (n, call)


def _native(a, n, dtype, context, what):
    """An operator the library applies itself (no Python call per product), checked; else None."""
    from .amg import MultilevelSolver, _Preconditioner

    if isinstance(a, (MultilevelSolver, _Preconditioner)):
        ml = a if isinstance(a, MultilevelSolver) else a._ml
        native, shape, adtype = ml._h, (ml._h.rows, ml._h.rows), ml.dtype
    elif isinstance(a, csr_matrix):
        native, shape, adtype = a._m, a.shape, a.dtype
    elif isinstance(a, Laplacian):
        native, shape, adtype = a._s, a.shape, a.dtype
    else:
        return None
    if tuple(shape) != (n, n):
        raise ShapeError(f"xgpu: {what} is {tuple(shape)}, the system has {n} rows")
    if adtype != dtype:
        raise DTypeError(f"xgpu: {what} is {adtype}, b is {dtype}: convert one with astype")
    return native


def _operator(a, n, dtype, context, what):
    native = _native(a, n, dtype, context, what)
    if native is not None:
        return native
    import scipy.sparse as sp

    if what == "M" and (sp.issparse(a) or isinstance(a, np.ndarray)):
        # scipy's M may be a matrix: moved to the device, applied by its SpMV.
        return _native(csr_matrix(context, sp.csr_matrix(a), dtype=dtype), n, dtype, context, what)
    if not (hasattr(a, "shape") and hasattr(a, "matvec")):
        raise DTypeError(f"xgpu: {what} must be an xgpu sparse matrix, a Laplacian, a multigrid hierarchy, a scipy "
                         f"sparse matrix or array, or an object with shape and matvec, not {type(a).__name__}")
    if tuple(a.shape) != (n, n):
        raise ShapeError(f"xgpu: {what} is {tuple(a.shape)}, the system has {n} rows")
    return _python_operator(a, n, dtype, context)


def _vectors(method, context, n, dtype, b, x0):
    """b and the starting x on the device, checked: b of n float32 or float64 values (a host b
    takes ``dtype``), x a copy of x0 (zero when None) in b's dtype."""
    if not isinstance(b, Array):
        host = np.asarray(b)
        if host.dtype.kind not in "biuf":
            raise DTypeError(f"xgpu: {method}: b holds {host.dtype}; the solvers take float32 or float64 vectors")
        b = to_device(context, host.astype(dtype))
    if b.shape != (n,):
        raise ShapeError(f"xgpu: {method}: b has shape {b.shape}, the system {n} rows")
    if b.dtype not in (np.float32, np.float64):
        raise DTypeError(f"xgpu: {method}: b is {b.dtype}; the solvers take float32 or float64 (b.astype)")
    dtype = b.dtype
    if not b.flags["C_CONTIGUOUS"]:
        b = b.copy()
    if x0 is None:
        x = zeros(context, n, dtype)
    elif isinstance(x0, Array):
        x = x0.astype(dtype)  # a copy: x0 is left as it is, as scipy leaves it
    else:
        x = to_device(context, np.asarray(x0, dtype=dtype))
    if x.shape != (n,):
        raise ShapeError(f"xgpu: {method}: x0 has shape {x.shape}, the system {n} rows")
    return b, x


def _solve(method, A, b, x0, rtol, atol, maxiter, M, variant="automatic", check_interval=10):
    if not hasattr(A, "shape"):
        raise TypeError(f"xgpu: {method}: A must be an xgpu sparse matrix, a Laplacian, or an object with shape "
                        f"and matvec, not {type(A).__name__}")
    shape = tuple(A.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ShapeError(f"xgpu: {method}: A is {shape}: it must be square")
    n = shape[0]
    context = getattr(A, "context", None) or (b.context if isinstance(b, Array) else None)
    if context is None:
        raise TypeError(f"xgpu: {method}: b must be an xgpu array when A has no context")
    b, x = _vectors(method, context, n, getattr(A, "dtype", None) or np.float64, b, x0)
    dtype = b.dtype
    op = _operator(A, n, dtype, context, "A")
    if isinstance(M, str) and M != "jacobi":
        raise InvalidArgument(f"xgpu: {method}: M='{M}': the only named preconditioner is 'jacobi'")
    m = M if M is None or isinstance(M, str) else _operator(M, n, dtype, context, "M")
    report = _xgpu.solve(method, op, m, b.desc, x.desc, float(rtol), float(atol), int(maxiter or 0), variant,
                         int(check_interval))
    info = 0 if report.converged else report.iterations if report.status == "max_iterations" else -1
    return SolveResult(x, info, report)


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, variant="automatic", check_interval=10):
    """Conjugate gradients for a symmetric positive definite A: scipy.sparse.linalg.cg's stopping
    rule |b - A x| <= max(rtol |b|, atol), checked on the true residual at the end. ``M``: None,
    "jacobi", a multigrid hierarchy (xgpu.amg; or its aspreconditioner()), an xgpu sparse matrix,
    a scipy sparse matrix or ndarray (moved to the device), a Laplacian (each applied on the
    device, no Python call per application), or any object with shape and matvec applying the
    inverse of a preconditioner. ``variant``: "classic",
    "pipelined", "ghysels_vanroose" or "automatic" (docs/solvers.md); ``check_interval``: the
    iterations between the host's looks at the residual."""
    return _solve("cg", A, b, x0, rtol, atol, maxiter, M, variant, check_interval)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, check_interval=10):
    """BiCGStab for a general square A, with the arguments and results of cg."""
    return _solve("bicgstab", A, b, x0, rtol, atol, maxiter, M, check_interval=check_interval)
