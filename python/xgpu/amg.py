"""Algebraic multigrid on the device, with PyAMG's names:

    ml = xgpu.amg.smoothed_aggregation_solver(A)      # A: xgpu.sparse.csr_matrix or scipy.sparse
    print(ml)                                         # levels, unknowns, nonzeros, complexities
    x = ml.solve(b, tol=1e-8, accel="cg", callback=lambda xk: ...)
    x, info = xgpu.solvers.cg(A, b, rtol=1e-8, M=ml.aspreconditioner())
    ml = xgpu.amg.smoothed_aggregation_solver(A, strength=("symmetric", {"theta": 0.08}),
                                              presmoother=("jacobi", {"omega": 1.7, "iterations": 1}),
                                              smooth=("jacobi", {"omega": 4 / 3}))

The hierarchy is built and applied on the device (C++'s xgpu::amg::SmoothedAggregation,
docs/solvers.md): ``M=ml.aspreconditioner()`` (or ``M=ml``) costs no Python call per application.
A scipy matrix goes to ``context=``, else to the default context (``xgpu.default_context()``).
"""

import numpy as np

from . import _xgpu
from ._array import Array, to_device
from ._context import default_context
from ._errors import DTypeError, InvalidArgument, ShapeError
from .solvers import NativePreconditioner, SolveResult, _vectors, bicgstab, cg
from .sparse import csr_matrix


class Level:
    """One level of the hierarchy: ``A`` (and, above the coarsest, ``P`` and ``R = P^T``) as
    ``xgpu.sparse.csr_matrix``, made on demand (device matrices, no copy to the host)."""

    def __init__(self, ml, index):
        self._ml = ml
        self._index = index

    def _matrix(self, which):
        return csr_matrix._wrap(self._ml.context, self._ml._h.level(self._index, which))

    @property
    def A(self):  # noqa: N802 (PyAMG's name)
        """The level's operator, an xgpu.sparse.csr_matrix on the device."""
        return self._matrix("A")

    @property
    def P(self):  # noqa: N802
        """The prolongator from the next coarser level (none on the coarsest)."""
        return self._matrix("P")

    @property
    def R(self):  # noqa: N802
        """The restriction to the next coarser level, P transposed."""
        return self._matrix("R")

    @property
    def aggregates(self):
        """Each row's aggregate (negative: in none), an xgpu int64 array."""
        return Array(self._ml._h.aggregates(self._index))

    @property
    def B(self):  # noqa: N802 (PyAMG's name)
        """The level's near-null-space vectors, an xgpu array of shape (n, k) as PyAMG's (k = 1 for
        the constant); on coarser levels each aggregate's R of the QR of the level above's."""
        b = Array(self._ml._h.candidates(self._index))
        return b.reshape(b.shape[0], 1) if b.ndim == 1 else b


class _Preconditioner(NativePreconditioner):
    """The hierarchy as a preconditioner: a V-cycle per application, on the device."""

    def __init__(self, ml):
        super().__init__(ml._h)
        self._ml = ml

    def matvec(self, x):
        return self._ml._cycle(x)

    __matmul__ = matvec


class MultilevelSolver:
    """A smoothed aggregation hierarchy (returned by smoothed_aggregation_solver)."""

    def __init__(self, h, A):
        self._h = h  # a native preconditioner (xgpu._xgpu.Preconditioner)
        self._A = A  # the matrix solve() solves: the user's (a float32 hierarchy's levels[0].A is rounded)
        self.context = A.context
        self.dtype = np.dtype(A.dtype)
        self.levels = [Level(self, i) for i in range(h.levels)]

    def _report(self):
        return self._h.report()

    def __xgpu_preconditioner__(self):
        return self._h

    @property
    def shape(self):
        """(unknowns, unknowns)."""
        return (self._h.rows, self._h.rows)

    def operator_complexity(self):
        """All levels' nonzeros over the finest's."""
        return self._report()["operator_complexity"]

    def grid_complexity(self):
        """All levels' unknowns over the finest's."""
        return self._report()["grid_complexity"]

    @property
    def setup_seconds(self):
        """(strength and aggregation, prolongator, Galerkin products, smoothers and coarse inverse, total)."""
        return self._report()["setup"]

    @property
    def bytes(self):
        """Device memory the hierarchy holds, bytes."""
        return self._report()["bytes"]

    def _cycle(self, b):
        if not isinstance(b, Array):
            b = to_device(self.context, np.asarray(b, dtype=self.dtype))
        if b.shape != (self._h.rows,):
            raise ShapeError(f"xgpu: the hierarchy has {self._h.rows} rows, the vector shape {b.shape}")
        if b.dtype != self.dtype:
            raise DTypeError(f"xgpu: the hierarchy is {self.dtype}, the vector {b.dtype}")
        if not b.flags["C_CONTIGUOUS"]:
            b = b.copy()
        y = Array(b.desc).copy()
        self._h.apply(b.desc, y.desc)
        return y

    def aspreconditioner(self, cycle="V"):
        """The hierarchy as a preconditioner for xgpu.solvers.cg / bicgstab (M=): a V-cycle per
        application, on the device."""
        if cycle != "V":
            raise ValueError(f"xgpu: cycle '{cycle}': the hierarchy cycles V only")
        return _Preconditioner(self)

    def solve(self, b, x0=None, tol=1e-5, maxiter=None, cycle="V", accel="cg", callback=None, residuals=None,
              return_info=False):
        """Solves A x = b to |b - A x| <= tol |b|, by ``accel`` ("cg" or "bicgstab") preconditioned
        by a V-cycle, or with ``accel=None`` by V-cycles alone (PyAMG's stationary iteration, 100 of
        them at most unless ``maxiter`` says). A is the matrix the hierarchy was built (or last
        refreshed) for. b has shape (n,) or (n, 1), on the host or the device; x comes back as an
        xgpu array of b's shape, or ``(x, info)`` with ``return_info`` (scipy's info: 0 converged,
        > 0 the iterations run without converging, < 0 a breakdown). ``callback(xk)``: called after
        each iteration (each V-cycle with ``accel=None``) with the current iterate, as PyAMG's (the
        host then waits for every iteration). ``residuals``, a list, receives |b - A x| at each
        check the solver made, the first x0's (PyAMG's residual norms). ``last_report`` is the
        Krylov solver's report (None after V-cycles alone)."""
        if callback is not None and not callable(callback):
            raise TypeError(f"xgpu: callback must be callable, not {type(callback).__name__}")
        if cycle != "V":
            raise ValueError(f"xgpu: cycle '{cycle}': the hierarchy cycles V only")
        if accel not in ("cg", "bicgstab", None):
            raise ValueError(f"xgpu: accel '{accel}': cg, bicgstab or None (V-cycles alone)")
        n = self._h.rows
        column = np.shape(b) == (n, 1)  # PyAMG's column vectors, taken as (n,)
        b, x0 = _flat(b, n), _flat(x0, n)
        if accel is None:
            x, info, history = self._stationary(b, x0, tol, 100 if maxiter is None else maxiter, callback)
            self.last_report = None
        else:
            method = cg if accel == "cg" else bicgstab
            result: SolveResult = method(self._A, b, x0, rtol=tol, maxiter=maxiter, M=self, callback=callback)
            x, info = result
            self.last_report = result.report
            history = [r * result.report.rhs_norm for _, r in result.report.history]
        if residuals is not None:
            residuals.extend(history)
        if column:
            x = x.reshape(n, 1)
        return (x, info) if return_info else x

    def _stationary(self, b, x0, tol, maxiter, callback):
        """x <- x + M (b - A x), the residual's norm checked each step."""
        from ._array import norm

        b, x = _vectors("amg", self.context, self._h.rows, self.dtype, b, x0)
        target = tol * float(norm(b).get())
        r = b - self._A @ x
        history = [float(norm(r).get())]
        steps = 0
        while history[-1] > target and steps < maxiter:
            x = x + self._cycle(r)
            steps += 1
            if callback is not None:
                callback(x)
            r = b - self._A @ x
            history.append(float(norm(r).get()))
        return x, 0 if history[-1] <= target else steps, history

    def refresh(self, A):
        """New values for A on the same sparsity pattern: aggregates and patterns kept, the numbers
        recomputed. A matrix of another pattern is refused, the hierarchy left as it was."""
        A = _matrix(A, self.context)
        self._h.refresh(A._m)
        self._A = A

    def __repr__(self):
        r = self._report()
        total = sum(n for _, n, _ in r["levels"])
        lines = ["MultilevelSolver (xgpu smoothed aggregation, %s)" % r["precision"],
                 "Number of Levels:     %d" % len(r["levels"]),
                 "Operator Complexity: %6.3f" % r["operator_complexity"],
                 "Grid Complexity:     %6.3f" % r["grid_complexity"],
                 "Coarse Solver:        %s" % r["coarse"],
                 "  level   unknowns     nonzeros"]
        for i, (rows, nnz, _) in enumerate(r["levels"]):
            lines.append("   %2d   %10d   %10d [%5.2f%%]" % (i, rows, nnz, 100.0 * nnz / total))
        return "\n".join(lines) + "\n"

    __str__ = __repr__


def _flat(v, n):
    """A vector of shape (n, 1) as (n,); anything else as it is."""
    if v is None or np.shape(v) != (n, 1):
        return v
    return v.reshape(n) if isinstance(v, Array) else np.asarray(v).reshape(n)


def _matrix(A, context):
    if isinstance(A, csr_matrix):
        return A
    import scipy.sparse as sp

    if sp.issparse(A):
        return csr_matrix(context if context is not None else default_context(), A)
    raise TypeError(f"xgpu: smoothed aggregation takes an xgpu.sparse.csr_matrix or a scipy.sparse matrix, not "
                    f"{type(A).__name__}")


def _method(option, what):
    """PyAMG's form of an option, a name or (name, {options}), as (name, dict)."""
    if isinstance(option, str):
        return option, {}
    if isinstance(option, (tuple, list)) and len(option) == 2 and isinstance(option[0], str) and \
            isinstance(option[1], dict):
        return option[0], dict(option[1])
    raise InvalidArgument(f"xgpu: {what}={option!r}: a name or a (name, {{options}}) pair, as PyAMG's")


def _take(options, what, name, known):
    """options' values for the keys of ``known`` (key: default); another key is refused."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidArgument(f"xgpu: {what}=('{name}', ...): unknown options {unknown} (it takes {sorted(known)})")
    return [options.get(k, d) for k, d in known.items()]


_SMOOTHERS = ("jacobi", "l1_jacobi", "chebyshev")


def _relaxation(option, what):
    """A presmoother or postsmoother: (smoother, sweeps, omega or None, degree or None)."""
    name, options = _method(option, what)
    if name not in _SMOOTHERS:
        raise InvalidArgument(f"xgpu: {what}='{name}': the hierarchy smooths with {', '.join(_SMOOTHERS)} (the same "
                              "before and after the coarse correction, so that the cycle is symmetric)")
    if name == "jacobi":
        omega, sweeps, withrho = _take(options, what, name, {"omega": None, "iterations": 1, "withrho": True})
        if not withrho:
            raise InvalidArgument(f"xgpu: {what}: the Jacobi smoother's omega is over rho(D^-1 A) (PyAMG's "
                                  "withrho=True)")
        return name, int(sweeps), omega, None
    if name == "chebyshev":
        degree, sweeps = _take(options, what, name, {"degree": None, "iterations": 1})
        return name, int(sweeps), None, degree
    (sweeps,) = _take(options, what, name, {"iterations": 1})
    return name, int(sweeps), None, None


def smoothed_aggregation_solver(A, B=None, *, context=None, strength=None, smooth=None, presmoother=None,
                                postsmoother=None, max_coarse=400, max_levels=12, theta=None, theta_decay=0.5,
                                smoother=None, presmooth=None, postsmooth=None, single_precision=False):
    """Builds a smoothed aggregation hierarchy of A (square, float32 or float64, positive diagonal)
    on the device. A scipy.sparse A is moved to ``context`` (else the default context,
    ``xgpu.default_context()``). ``B``: the near-null-space vectors (PyAMG's name): one column, none
    of its entries zero, or k columns (n x k, such as rigid body modes), each aggregate then taking
    k columns of P from a QR of its block; the constant by default.

    PyAMG's options, each a name or a (name, {options}) pair:

    - ``strength``: "symmetric", {"theta": t} (a_ij^2 >= t^2 |a_ii a_jj|; 0.08 by default), the
      finest level's; level l takes ``theta * theta_decay**l``;
    - ``smooth``: the prolongator's smoothing, "jacobi", {"omega": w} (over rho(D^-1 A); 4/3);
    - ``presmoother``, ``postsmoother``: "jacobi" {"omega": w (over rho(D^-1 A), 1.7),
      "iterations": k}, "l1_jacobi" {"iterations": k} or "chebyshev" {"degree": d, "iterations":
      k}; both the same smoother (a symmetric cycle), their iterations the sweeps before and after.

    xgpu's shorter names do the same: ``theta``, ``smoother`` ("jacobi", "l1_jacobi",
    "chebyshev"), ``presmooth`` and ``postsmooth`` (sweeps); ``single_precision``: a float32
    hierarchy for a float64 A."""
    options = {"max_coarse": int(max_coarse), "max_levels": int(max_levels), "theta_decay": float(theta_decay),
               "single_precision": bool(single_precision)}
    if strength is not None:
        name, opts = _method(strength, "strength")
        if name != "symmetric":
            raise InvalidArgument(f"xgpu: strength='{name}': the hierarchy's strength of connection is 'symmetric'")
        (t,) = _take(opts, "strength", name, {"theta": 0.08})
        if theta is not None and float(theta) != float(t):
            raise InvalidArgument(f"xgpu: theta={theta} and strength's theta {t} differ: give one")
        theta = t
    options["theta"] = 0.08 if theta is None else float(theta)
    if smooth is not None:
        name, opts = _method(smooth, "smooth")
        if name != "jacobi":
            raise InvalidArgument(f"xgpu: smooth='{name}': the prolongator is smoothed by 'jacobi'")
        (w,) = _take(opts, "smooth", name, {"omega": 4.0 / 3.0})
        options["prolongator_omega"] = float(w)
    if presmoother is not None or postsmoother is not None:
        if smoother is not None or presmooth is not None or postsmooth is not None:
            raise InvalidArgument("xgpu: give presmoother/postsmoother (PyAMG's) or smoother/presmooth/postsmooth, "
                                  "not both")
        pre = _relaxation(presmoother if presmoother is not None else postsmoother, "presmoother")
        post = _relaxation(postsmoother if postsmoother is not None else presmoother, "postsmoother")
        if pre[0] != post[0] or pre[2:] != post[2:]:
            raise InvalidArgument(f"xgpu: presmoother {presmoother!r} and postsmoother {postsmoother!r}: the "
                                  "hierarchy smooths with the same smoother and options before and after")
        options.update(smoother=pre[0], presmooth=pre[1], postsmooth=post[1])
        if pre[2] is not None:
            options["omega"] = float(pre[2])
        if pre[3] is not None:
            options["chebyshev_degree"] = int(pre[3])
    else:
        options.update(smoother="jacobi" if smoother is None else str(smoother),
                       presmooth=1 if presmooth is None else int(presmooth),
                       postsmooth=1 if postsmooth is None else int(postsmooth))
    if context is None and isinstance(A, csr_matrix):
        context = A.context
    A = _matrix(A, context)
    if A.dtype not in (np.float32, np.float64):
        raise DTypeError(f"xgpu: smoothed aggregation takes float32 or float64 matrices, not {A.dtype}")
    if A._m.index_dtype != "int32":
        raise DTypeError("xgpu: smoothed aggregation takes matrices with int32 indices")
    b = None
    if B is not None:
        if not isinstance(B, Array):
            B = np.asarray(B)
            if B.dtype.kind not in "iuf":
                raise DTypeError(f"xgpu: B must hold real numbers, not {B.dtype}")
        if B.ndim == 2 and B.shape[1] == 1:
            B = B.reshape(B.shape[0])
        if not (B.shape == (A.shape[0],) or (B.ndim == 2 and B.shape[0] == A.shape[0] and B.shape[1] >= 1)):
            raise ShapeError(f"xgpu: B has shape {B.shape}: near-null-space vectors of {A.shape[0]} values, one "
                             f"(shape ({A.shape[0]},) or ({A.shape[0]}, 1)) or k of them (shape ({A.shape[0]}, k)), "
                             "are taken")
        if isinstance(B, Array):
            if B.dtype != A.dtype:
                raise DTypeError(f"xgpu: B is {B.dtype}, the matrix {A.dtype}")
            B = B if B.flags["C_CONTIGUOUS"] else B.copy()
        else:
            B = to_device(A.context, B.astype(A.dtype))
        b = B.desc
    h = _xgpu.smoothed_aggregation(A._m, options, b)
    return MultilevelSolver(h, A)
