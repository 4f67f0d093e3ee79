"""Sparse matrices on the device: ``xgpu.sparse.csr_matrix(ctx, m)`` from any scipy.sparse matrix
or array (CSR, CSC, COO, ...) or a dense array, with ``A @ x`` / ``A.dot(x)`` on xgpu arrays (the
library picks the SpMV format for the matrix and device) and ``A.get()`` back to scipy; and the
Laplacian stencils (matrix-free 5- and 7-point operators) for the solvers."""

import numpy as np

from . import _xgpu
from ._array import Array, empty
from ._context import default_context
from ._errors import DTypeError, ShapeError

_VALUES = ("float32", "float64", "complex64", "complex128")


class csr_matrix:  # noqa: N801 (scipy's name)
    """A CSR matrix on the device.

        A = xgpu.sparse.csr_matrix(ctx, scipy.sparse.random(1000, 1000, 0.01, format="coo"))
        A = xgpu.sparse.csr_matrix(scipy_matrix)    # on the default context (xgpu.default_context())
        y = A @ x              # x: an xgpu array of the matrix's dtype
        B = A.get()            # a scipy.sparse.csr_matrix

    Values are float32, float64, complex64 or complex128 (integers and bool become float64, as
    scipy's ``astype(float)``); indices int32 unless the matrix needs int64.
    """

    def __init__(self, context, matrix=None, dtype=None):
        import scipy.sparse as sp

        if matrix is None and not isinstance(context, _xgpu.Context):  # csr_matrix(A): the default context
            context, matrix = default_context(), context
        m = sp.csr_matrix(matrix, dtype=dtype, copy=True)  # duplicates are summed below, in place
        if m.dtype.name not in _VALUES:
            if m.dtype.kind in "biu":
                m = m.astype(np.float64)
            else:
                raise DTypeError(f"xgpu: sparse matrices hold float32, float64, complex64 or complex128, not {m.dtype}")
        m.sum_duplicates()
        m.sort_indices()
        big = max(m.shape[0], m.shape[1], m.nnz) >= 2**31 - 1
        index = np.int64 if big else np.int32
        self._m = _xgpu.csr_matrix(context, m.shape[0], m.shape[1], np.ascontiguousarray(m.indptr, index),
                                   np.ascontiguousarray(m.indices, index), np.ascontiguousarray(m.data))
        self.context = context

    @classmethod
    def _wrap(cls, context, m):
        """A matrix made on the device (a multigrid level): no copy."""
        self = cls.__new__(cls)
        self._m = m
        self.context = context
        return self

    @property
    def shape(self):
        """(rows, columns)."""
        return tuple(self._m.shape)

    @property
    def nnz(self):
        """The number of stored entries."""
        return self._m.nnz

    @property
    def dtype(self):
        """The values' type, a numpy dtype."""
        return np.dtype(self._m.dtype)

    @property
    def ndim(self):
        """2, as scipy's."""
        return 2

    def diagonal(self):
        """The main diagonal, an xgpu array."""
        return Array(self._m.diagonal())

    def dot(self, x):
        """A @ x for a 1-D xgpu array x of the matrix's dtype: a new array."""
        if not isinstance(x, Array):
            raise TypeError(f"xgpu: a sparse matrix multiplies xgpu arrays, not {type(x).__name__} "
                            "(move it with xgpu.to_device)")
        if x.shape != (self.shape[1],):
            raise ShapeError(f"xgpu: a {self.shape[0]}x{self.shape[1]} matrix times a vector of shape {x.shape}")
        if x.dtype != self.dtype:
            raise DTypeError(f"xgpu: a {self.dtype} matrix times a {x.dtype} vector: convert one with astype")
        if not x.flags["C_CONTIGUOUS"]:
            x = x.copy()
        y = empty(self.context, self.shape[0], self.dtype)
        self._m.spmv(x.desc, y.desc)
        return y

    def __matmul__(self, x):
        return self.dot(x)

    def matvec(self, x):
        """The product with the vector ``x`` (scipy's LinearOperator.matvec), a new xgpu array."""
        return self.dot(x)

    def __xgpu_preconditioner__(self):
        """The matrix applied as a preconditioner (M = the matrix: y = M x by its SpMV)."""
        return _xgpu.operator_preconditioner(self._m)

    def get(self):
        """The matrix as a scipy.sparse.csr_matrix."""
        import scipy.sparse as sp

        indptr, indices, data = self._m.to_host()
        return sp.csr_matrix((data, indices, indptr), shape=self.shape)

    def __repr__(self):
        return f"<xgpu.sparse.csr_matrix {self.shape[0]}x{self.shape[1]}, {self.nnz} stored {self.dtype} elements>"


class Laplacian:
    """The 2-D (5-point) or 3-D (7-point) Laplacian with Dirichlet boundaries on an n1 x n2 (x n3)
    grid, matrix-free: the operator of ``poisson`` (docs/solvers.md)."""

    def __init__(self, context, *n, dtype=np.float64):
        self._s = _xgpu.laplacian(context, np.dtype(dtype).name, [int(v) for v in n])
        self.context = context

    @property
    def shape(self):
        """(unknowns, unknowns)."""
        return tuple(self._s.shape)

    @property
    def dtype(self):
        """The values' type, a numpy dtype."""
        return np.dtype(self._s.dtype)

    def dot(self, x):
        """The product with the vector ``x``, a new xgpu array (also ``@`` and ``matvec``)."""
        if not isinstance(x, Array) or x.shape != (self.shape[1],):
            raise ShapeError(f"xgpu: the Laplacian takes an xgpu array of shape ({self.shape[1]},)")
        if x.dtype != self.dtype:
            raise DTypeError(f"xgpu: the Laplacian of {self.dtype} takes an array of {self.dtype}, not {x.dtype}")
        y = empty(self.context, self.shape[0], self.dtype)
        self._s.apply(x.desc, y.desc)
        return y

    __matmul__ = matvec = dot

    def __xgpu_preconditioner__(self):
        """The stencil applied as a preconditioner (y = M x by its product)."""
        return _xgpu.operator_preconditioner(self._s)
