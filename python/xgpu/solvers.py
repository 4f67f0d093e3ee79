"""Krylov solvers on the device, called as scipy.sparse.linalg's, and their preconditioners:

    x, info = xgpu.solvers.cg(A, b, rtol=1e-8, M="jacobi")
    x, info = xgpu.solvers.cg(A, b, M=xgpu.solvers.Chebyshev(A, degree=4))
    result = xgpu.solvers.bicgstab(A, b, callback=lambda xk: print(xgpu.norm(xk)))
    result.report.iterations

``A`` is an ``xgpu.sparse.csr_matrix``, an ``xgpu.sparse.Laplacian``, a scipy sparse matrix (moved
to the device), or any object with ``shape`` and ``matvec`` (scipy's LinearOperator protocol:
matvec gets an xgpu array and may return an xgpu array or anything numpy takes). ``b`` is an xgpu
array, or a host array moved to A's context (the default context, ``xgpu.default_context()``, where
neither has one), float32 or float64. They return ``(x, info)`` as scipy does (info 0: converged;
the iteration count where the limit came first; -1 for a breakdown, NaN or stagnation) with the
solver's report as ``.report`` (status, iterations, residual, time per iteration, ...).

A preconditioner the library applies itself (no Python call per application) is any object with
``__xgpu_preconditioner__()`` returning a native preconditioner (``xgpu._xgpu.Preconditioner``):
``Jacobi`` and ``Chebyshev`` below, a multigrid hierarchy (``xgpu.amg``), an xgpu sparse matrix or
Laplacian applied as M. Anything else with ``shape`` and ``matvec`` is called from the solver once
per application.
"""

import numpy as np

from . import _xgpu
from ._array import Array, to_device, zeros
from ._context import default_context
from ._errors import DTypeError, InvalidArgument, ShapeError
from .sparse import csr_matrix


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


class NativePreconditioner:
    """A preconditioner applied on the device, as a LinearOperator: ``shape``, ``dtype``,
    ``matvec(x)`` (also ``M @ x``) and ``__xgpu_preconditioner__()``, the native object the solvers
    take."""

    def __init__(self, native):
        self._p = native
        self.context = native.context
        self.shape = (native.rows, native.rows)
        self.dtype = np.dtype(native.dtype)

    def __xgpu_preconditioner__(self):
        return self._p

    def matvec(self, x):
        """M x, a new xgpu array (x: an xgpu array of the preconditioner's rows and dtype)."""
        if not isinstance(x, Array):
            x = to_device(self.context, np.asarray(x, dtype=self.dtype))
        if not x.flags["C_CONTIGUOUS"]:
            x = x.copy()
        y = zeros(self.context, self.shape[0], self.dtype)
        self._p.apply(x.desc, y.desc)
        return y

    __matmul__ = matvec


class Jacobi(NativePreconditioner):
    """M = diag(A)^-1 for an xgpu sparse matrix or a scipy sparse matrix (moved to ``context``, else
    the default context); fused into the solvers' kernels. A zero on the diagonal is refused."""

    def __init__(self, A, *, context=None):
        super().__init__(_xgpu.jacobi(_device_operator(A, context, "Jacobi")._m))


class Chebyshev(NativePreconditioner):
    """A polynomial preconditioner: ``degree`` steps of Chebyshev iteration for A y = x from y = 0 on
    [lmax / lower_ratio, lmax], lmax from ``lanczos_steps`` Lanczos steps on the device times
    ``safety``. Symmetric positive definite where A is (CG may take it). ``A``: an xgpu sparse
    matrix, a Laplacian, or a scipy sparse matrix (moved to ``context``, else the default context)."""

    def __init__(self, A, degree=4, *, lanczos_steps=12, safety=1.1, lower_ratio=30.0, context=None):
        op = _device_operator(A, context, "Chebyshev")
        native = op._s if hasattr(op, "_s") else op._m
        super().__init__(_xgpu.chebyshev(native, int(degree), int(lanczos_steps), float(safety), float(lower_ratio)))


def _device_operator(A, context, what):
    """A as an xgpu sparse matrix or Laplacian: a scipy sparse matrix moved to ``context``."""
    if isinstance(A, csr_matrix) or hasattr(A, "_s"):
        return A
    import scipy.sparse as sp

    if sp.issparse(A):
        return csr_matrix(context or default_context(), A)
    raise DTypeError(f"xgpu: {what} takes an xgpu sparse matrix, a Laplacian or a scipy sparse matrix, not "
                     f"{type(A).__name__}")


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


def _native_operator(a):
    """The library's own object for an xgpu sparse matrix or Laplacian, else None."""
    from .sparse import Laplacian

    if isinstance(a, csr_matrix):
        return a._m
    if isinstance(a, Laplacian):
        return a._s
    return None


def _checked(what, shape, dtype, n, want):
    if tuple(shape) != (n, n):
        raise ShapeError(f"xgpu: {what} is {tuple(shape)}, the system has {n} rows")
    if np.dtype(dtype) != want:
        raise DTypeError(f"xgpu: {what} is {np.dtype(dtype)}, b is {want}: convert one with astype")


def _operator(a, n, dtype, context):
    """A: the library's own operator, or a Python one (n, call)."""
    native = _native_operator(a)
    if native is not None:
        _checked("A", a.shape, a.dtype, n, dtype)
        return native
    if not (hasattr(a, "shape") and hasattr(a, "matvec")):
        raise DTypeError(f"xgpu: A must be an xgpu sparse matrix, a Laplacian, a scipy sparse matrix, or an object "
                         f"with shape and matvec, not {type(a).__name__}")
    _checked("A", a.shape, getattr(a, "dtype", dtype), n, dtype)
    return _python_operator(a, n, dtype, context)


def _preconditioner(M, n, dtype, context):
    """M: None, "jacobi", a native preconditioner (the protocol), or a Python operator (n, call)."""
    if M is None:
        return None
    if isinstance(M, str):
        if M != "jacobi":
            raise InvalidArgument(f"xgpu: M='{M}': the only named preconditioner is 'jacobi'")
        return M
    import scipy.sparse as sp

    if sp.issparse(M) or isinstance(M, np.ndarray):
        # scipy's M may be a matrix: moved to the device, applied by its SpMV.
        M = csr_matrix(context, sp.csr_matrix(M), dtype=dtype)
    if hasattr(M, "__xgpu_preconditioner__"):
        native = M.__xgpu_preconditioner__()
        if not isinstance(native, _xgpu.Preconditioner):
            raise DTypeError(f"xgpu: {type(M).__name__}.__xgpu_preconditioner__() returned {type(native).__name__}, "
                             "not a native preconditioner")
    else:
        if not (hasattr(M, "shape") and hasattr(M, "matvec")):
            raise DTypeError(f"xgpu: M must be 'jacobi', a preconditioner (xgpu.solvers.Jacobi, Chebyshev, a "
                             f"multigrid hierarchy), an xgpu or scipy sparse matrix, or an object with shape and "
                             f"matvec, not {type(M).__name__}")
        _checked("M", M.shape, getattr(M, "dtype", dtype), n, dtype)
        return _python_operator(M, n, dtype, context)
    return native  # its rows, dtype and context checked by the solver's binding and the solver


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


def _solve(method, A, b, x0, rtol, atol, maxiter, M, callback, variant="automatic", check_interval=10, restart=30,
           progress=None):
    import scipy.sparse as sp

    if not hasattr(A, "shape"):
        raise TypeError(f"xgpu: {method}: A must be an xgpu sparse matrix, a Laplacian, a scipy sparse matrix or an "
                        f"object with shape and matvec, not {type(A).__name__}")
    shape = tuple(A.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ShapeError(f"xgpu: {method}: A is {shape}: it must be square")
    if callback is not None and not callable(callback):
        raise TypeError(f"xgpu: {method}: callback must be callable, not {type(callback).__name__}")
    n = shape[0]
    context = getattr(A, "context", None) or (b.context if isinstance(b, Array) else None) or default_context()
    if sp.issparse(A):
        A = csr_matrix(context, A, dtype=np.float64 if A.dtype.kind in "biu" else None)
    b, x = _vectors(method, context, n, getattr(A, "dtype", None) or np.float64, b, x0)
    if b.context != context:
        raise InvalidArgument(f"xgpu: {method}: b lives on another context than A")
    dtype = b.dtype
    op = _operator(A, n, dtype, context)
    m = _preconditioner(M, n, dtype, context)
    hook = None if callback is None else (lambda desc: callback(Array(desc)))
    report = _xgpu.solve(method, op, m, b.desc, x.desc, float(rtol), float(atol), int(maxiter or 0), variant,
                         int(check_interval), hook, int(restart), progress)
    info = 0 if report.converged else report.iterations if report.status == "max_iterations" else -1
    return SolveResult(x, info, report)


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, variant="automatic",
       check_interval=10):
    """Conjugate gradients for a symmetric positive definite A: scipy.sparse.linalg.cg's stopping
    rule |b - A x| <= max(rtol |b|, atol), checked on the true residual at the end. ``M``: None,
    "jacobi", ``Jacobi``, ``Chebyshev``, a multigrid hierarchy (xgpu.amg; or its
    aspreconditioner()), an xgpu sparse matrix, a scipy sparse matrix or ndarray (moved to the
    device), a Laplacian (each applied on the device, no Python call per application), or any
    object with shape and matvec applying the inverse of a preconditioner. ``callback(xk)``: called
    after each iteration with the current iterate (the solver's own array: copy it to keep it), as
    scipy's; the host then waits for every iteration, which costs a round trip to the device and
    the call per iteration. ``variant``: "classic", "pipelined", "ghysels_vanroose" or "automatic"
    (docs/solvers.md); ``check_interval``: the iterations between the host's looks at the
    residual."""
    return _solve("cg", A, b, x0, rtol, atol, maxiter, M, callback, variant, check_interval)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, check_interval=10):
    """BiCGStab for a general square A, with the arguments and results of cg."""
    return _solve("bicgstab", A, b, x0, rtol, atol, maxiter, M, callback, check_interval=check_interval)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None, callback=None,
          callback_type=None, flexible=False):
    """Restarted GMRES(restart) for a general square A, right-preconditioned, with scipy's
    arguments: ``restart`` the Arnoldi vectors kept before a restart (scipy's default 20; at most
    256), ``maxiter`` the restart cycles (default 10 n), the stopping rule and the results of cg
    (iterations count Arnoldi steps). ``callback_type``: "x" calls ``callback(xk)`` with the
    iterate at each restart and where the solve stops mid-cycle; "pr_norm" (the default) calls
    ``callback(rel)`` after each step with the relative residual |r| / |b| that GMRES minimises
    (right preconditioning: the true residual's, not a preconditioned one's); "legacy" is
    "pr_norm" with ``maxiter`` counting steps, as scipy's legacy mode. With a callback the host
    waits for every step. ``flexible``: FGMRES, for an M that changes from one application to the
    next (restart more vectors)."""
    if callback_type not in (None, "x", "pr_norm", "legacy"):
        raise ValueError(f"xgpu: gmres: callback_type must be 'x', 'pr_norm' or 'legacy', not {callback_type!r}")
    if callback is not None and not callable(callback):
        raise TypeError(f"xgpu: gmres: callback must be callable, not {type(callback).__name__}")
    m = 20 if restart is None else int(restart)
    if not 1 <= m <= 256:
        raise ValueError(f"xgpu: gmres: restart must be from 1 to 256, not {restart}")
    n = tuple(A.shape)[0] if hasattr(A, "shape") and len(tuple(A.shape)) == 2 else 0
    if maxiter is not None and int(maxiter) < 1:
        raise ValueError(f"xgpu: gmres: maxiter must be >= 1, not {maxiter}")
    if maxiter is None:
        steps = 10 * max(n, 1) * m
    else:  # restart cycles; scipy's legacy mode (with a callback) counts steps
        steps = int(maxiter) if callback_type == "legacy" and callback is not None else int(maxiter) * m
    per_restart = callback if callback is not None and callback_type == "x" else None
    per_step = callback if callback is not None and callback_type != "x" else None
    return _solve("fgmres" if flexible else "gmres", A, b, x0, rtol, atol, steps, M, per_restart,
                  check_interval=1 if per_step is not None else 10, restart=m, progress=per_step)
