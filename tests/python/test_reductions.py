"""Reductions against numpy: whole arrays, fused expressions, along an axis, device scalars."""

import numpy as np
import pytest

import xgpu
from support import assert_sum_close, needs_fp64, random_array


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint32", "int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("n", [1, 31, 1000, 100003])
def test_sum(ctx, rng, dtype, n):
    needs_fp64(ctx, dtype)
    h = random_array(rng, (n,), dtype)
    got, want = xgpu.sum(xgpu.to_device(ctx, h)), np.sum(h)
    assert got.shape == () and got.dtype == want.dtype
    assert_sum_close(got.get(), h.astype(want.dtype))


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64"])
def test_extrema(ctx, rng, dtype):
    needs_fp64(ctx, dtype)
    h = random_array(rng, (5000,), dtype)
    a = xgpu.to_device(ctx, h)
    assert xgpu.min(a).get() == h.min() and xgpu.max(a).get() == h.max()
    assert a.min().item() == h.min() and a.max().item() == h.max()
    assert xgpu.argmin(a).get() == np.argmin(h) and xgpu.argmax(a).get() == np.argmax(h)
    assert bool(xgpu.any(a > h.max())) is False and bool(xgpu.all(a >= h.min())) is True


def test_fused_and_axis(ctx, rng):
    h = random_array(rng, (64, 33), np.float32)
    a = xgpu.to_device(ctx, h)
    before = ctx.launch_count
    s = xgpu.sum(a * a + 1)
    launches = ctx.launch_count - before
    np.testing.assert_allclose(s.get(), np.sum(h * h + 1), rtol=1e-5)
    assert launches <= 2  # one pass over memory (and a second stage where the device needs one)
    for axis in (0, 1, -1):
        np.testing.assert_allclose(xgpu.sum(a, axis=axis).get(), h.sum(axis=axis), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(a.max(axis=axis).get(), h.max(axis=axis))
    with pytest.raises(xgpu.AxisError):
        xgpu.sum(a, axis=2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
def test_dot_vdot_norm(ctx, rng, dtype):
    needs_fp64(ctx, dtype)
    hx, hy = random_array(rng, (4097,), dtype), random_array(rng, (4097,), dtype)
    x, y = xgpu.to_device(ctx, hx), xgpu.to_device(ctx, hy)
    assert_sum_close(xgpu.dot(x, y).get(), hx * hy)
    assert_sum_close(x.dot(y).get(), hx * hy)
    assert_sum_close(xgpu.vdot(x, y).get(), np.conj(hx) * hy)
    rtol = 1e-4 if dtype in ("float32", "complex64") else 1e-12
    for ord in (None, 1, np.inf):
        np.testing.assert_allclose(xgpu.norm(x, ord).get(), np.linalg.norm(hx, ord), rtol=rtol)
    with pytest.raises(xgpu.ShapeError):
        xgpu.dot(x, x[1:])


def test_matrix_norms(ctx, rng):
    h = random_array(rng, (13, 7), np.float32)
    a = xgpu.to_device(ctx, h)
    for ord in (None, "fro", 1, np.inf):
        np.testing.assert_allclose(xgpu.norm(a, ord).get(), np.linalg.norm(h, ord), rtol=1e-5)
    with pytest.raises(ValueError):
        xgpu.norm(a, 2)  # numpy's is the largest singular value


def test_dtype_is_the_accumulator(ctx):
    """sum(dtype=float64) of float32 values adds in float64, as numpy does."""
    needs_fp64(ctx, np.float64)
    h = np.ones(2**20 + 3, np.float32)
    h[0] = 2**25  # float32 sums stop at 2^25 + n: 1 + 2^25 rounds back to 2^25
    x = xgpu.to_device(ctx, h)
    assert float(xgpu.sum(x, dtype=np.float64)) == np.sum(h, dtype=np.float64)
    assert float(xgpu.dot(x, x, dtype=np.float64)) == np.dot(h.astype(np.float64), h.astype(np.float64))
    m = xgpu.to_device(ctx, h[:2**20].reshape(1024, 1024))
    np.testing.assert_array_equal(xgpu.sum(m, axis=0, dtype=np.float64).get(),
                                  h[:2**20].reshape(1024, 1024).sum(axis=0, dtype=np.float64))


def test_device_scalar_in_expressions(ctx, rng):
    h = random_array(rng, (1000,), np.float32)
    x = xgpu.to_device(ctx, h)
    y = x / xgpu.norm(x)  # the norm stays on the device
    np.testing.assert_allclose(y.get(), h / np.linalg.norm(h), rtol=1e-5)
