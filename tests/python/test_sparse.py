"""Sparse matrices against scipy.sparse: construction from every scipy format, products, the
round trip back to scipy, and misuse."""

import numpy as np
import pytest

import xgpu
from support import needs_fp64

sp = pytest.importorskip("scipy.sparse")


def random_matrix(rng, rows, cols, density, dtype):
    m = sp.random(rows, cols, density, format="coo", random_state=rng, dtype=np.float64)
    if np.dtype(dtype).kind == "c":
        m = m + 1j * sp.random(rows, cols, density, format="coo", random_state=rng)
    return m.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dia", "bsr"])
def test_product(ctx, rng, dtype, fmt):
    needs_fp64(ctx, dtype)
    m = random_matrix(rng, 300, 200, 0.05, dtype).asformat(fmt)
    a = xgpu.sparse.csr_matrix(ctx, m)
    assert a.shape == (300, 200) and a.dtype == np.dtype(dtype) and a.nnz == m.tocsr().nnz
    hx = (rng.uniform(-1, 1, 200) + (1j * rng.uniform(-1, 1, 200) if "complex" in dtype else 0)).astype(dtype)
    x = xgpu.to_device(ctx, hx)
    rtol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose((a @ x).get(), m @ hx, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(a.dot(x[::1]).get(), m @ hx, rtol=rtol, atol=rtol)
    back = a.get()
    assert isinstance(back, sp.csr_matrix)
    np.testing.assert_array_equal(back.toarray(), m.toarray())


def test_duplicates_are_summed_and_strided_vectors_taken(ctx, rng):
    needs_fp64(ctx, np.float64)
    coo = sp.coo_matrix(([1.0, 2.0, 3.0, 4.0], ([0, 0, 1, 2], [1, 1, 0, 2])), shape=(3, 3))
    a = xgpu.sparse.csr_matrix(ctx, coo)
    np.testing.assert_array_equal(a.get().toarray(), coo.toarray())
    hx = rng.uniform(-1, 1, 6)
    x = xgpu.to_device(ctx, hx)
    np.testing.assert_allclose((a @ x[::2]).get(), coo @ hx[::2])
    np.testing.assert_allclose(a.diagonal().get(), coo.diagonal())


def test_the_scipy_matrix_is_left_as_it_was(ctx):
    needs_fp64(ctx, np.float64)
    data, indices, indptr = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 2, 1]), np.array([0, 3, 4])
    m = sp.csr_matrix((data, indices, indptr), shape=(2, 3))  # unsorted, with a duplicate
    a = xgpu.sparse.csr_matrix(ctx, m)
    np.testing.assert_array_equal(data, [1, 2, 3, 4])
    np.testing.assert_array_equal(indices, [2, 0, 2, 1])
    assert m.nnz == 4
    np.testing.assert_array_equal(a.get().toarray(), m.toarray())


def test_integer_matrices_become_float64(ctx):
    needs_fp64(ctx, np.float64)
    a = xgpu.sparse.csr_matrix(ctx, sp.eye(4, dtype=np.int32))
    assert a.dtype == np.float64


def test_misuse(ctx, rng):
    a = xgpu.sparse.csr_matrix(ctx, random_matrix(rng, 10, 8, 0.3, np.float32))
    with pytest.raises(xgpu.ShapeError):
        a @ xgpu.zeros(ctx, 10, np.float32)
    with pytest.raises(xgpu.DTypeError):
        a @ xgpu.zeros(ctx, 8, np.int32)
    with pytest.raises(TypeError):
        a @ np.zeros(8, np.float32)
