"""Reductions along any axes against numpy: every set of axes, keepdims, numpy's result types,
argmin and argmax along an axis, mean, var and std with ddof, cumsum and cumprod along an axis."""

import itertools

import numpy as np
import pytest

import xgpu
from support import needs_fp64

AxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError
SHAPE = (4, 5, 67)
# Each with keepdims on or off; sized to check (each op, type and set of axes is a kernel to compile).
CASES = [("int32", None, False), ("int32", 0, True), ("float32", -1, False), ("float32", (0, 2), True),
         ("int32", (1, 2), False)]


@pytest.mark.parametrize("dtype,axis,keepdims", CASES)
def test_reductions_along_axes(ctx, rng, dtype, axis, keepdims):
    needs_fp64(ctx, "float64")
    h = (rng.integers(0, 3, SHAPE) if dtype != "float32" and dtype != "float64" else
         rng.standard_normal(SHAPE)).astype(dtype)
    x = xgpu.to_device(ctx, h)
    for name in ("sum", "min", "max", "any", "all", "mean", "var", "std"):
        got, want = getattr(xgpu, name)(x, axis=axis, keepdims=keepdims), getattr(np, name)(h, axis=axis,
                                                                                                keepdims=keepdims)
        assert got.shape == np.shape(want), name
        assert got.dtype == np.asarray(want).dtype, name
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(got.get(), want, rtol=tol, atol=tol, err_msg=name)
    # Products of factors near 1 (a product of a thousand normal deviates underflows).
    hp = (h % 3 + 1) if dtype == "int32" else (1 + h / 100).astype(dtype)
    got = xgpu.to_device(ctx, hp).prod(axis=axis, keepdims=keepdims)
    want = np.prod(hp, axis=axis, keepdims=keepdims)
    if dtype == "float32":
        np.testing.assert_allclose(got.get(), want, rtol=1e-4)
    else:
        np.testing.assert_array_equal(got.get(), want)  # int64, wrapping as numpy's
    np.testing.assert_allclose(x.var(axis=axis, ddof=1, keepdims=keepdims).get(),
                               h.var(axis=axis, ddof=1, keepdims=keepdims), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_argmin_argmax_along_an_axis(ctx, rng, axis):
    h = rng.integers(-5, 5, SHAPE).astype(np.int16)  # ties: the first one wins
    x = xgpu.to_device(ctx, h)
    for name in ("argmin", "argmax"):
        np.testing.assert_array_equal(getattr(xgpu, name)(x, axis=axis).get(), getattr(np, name)(h, axis=axis))
        np.testing.assert_array_equal(getattr(x, name)(axis=axis, keepdims=True).get(),
                                      getattr(np, name)(h, axis=axis, keepdims=True))
    with pytest.raises(TypeError):
        xgpu.argmax(x, axis=(0, 1))
    with pytest.raises(ValueError):
        xgpu.argmax(xgpu.zeros(ctx, (3, 0), np.int32), axis=1)


def test_fused_expressions_and_views(ctx, rng):
    needs_fp64(ctx, "float64")
    a, b = rng.standard_normal((300, 40)), rng.standard_normal((300, 40))
    x, y = xgpu.to_device(ctx, a), xgpu.to_device(ctx, b)
    before = ctx.launch_count
    s = xgpu.sum(x * y, axis=1)
    assert ctx.launch_count - before == 1  # one pass
    np.testing.assert_allclose(s.get(), (a * b).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(xgpu.mean(x.T[::2], axis=0).get(), a.T[::2].mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(x[:, 3:30:3].std(axis=(0, 1)).get(), a[:, 3:30:3].std(), rtol=1e-12)
    with pytest.raises(AxisError):
        xgpu.sum(x, axis=2)
    with pytest.raises(ValueError):
        xgpu.sum(x, axis=(0, 0))
    assert xgpu.mean(xgpu.to_device(ctx, np.arange(7, dtype=np.int32))).dtype == np.float64


@pytest.mark.parametrize("axis", [None, 1, -1])
def test_cumsum_cumprod(ctx, rng, axis):
    h = rng.integers(-2, 3, SHAPE).astype(np.int32)
    x = xgpu.to_device(ctx, h)
    np.testing.assert_array_equal(xgpu.cumsum(x, axis=axis).get(), np.cumsum(h, axis=axis))
    np.testing.assert_array_equal(xgpu.cumprod(x % 2 + 1, axis=axis).get(), np.cumprod(h % 2 + 1, axis=axis))
    assert xgpu.cumsum(x, axis=axis).dtype == np.cumsum(h, axis=axis).dtype


def test_every_pair_of_axes_of_a_4d_array(ctx, rng):
    h = rng.integers(0, 9, (3, 4, 5, 6)).astype(np.int64)
    x = xgpu.to_device(ctx, h)
    for axes in itertools.islice(itertools.combinations(range(4), 2), 0, None, 2):
        np.testing.assert_array_equal(xgpu.sum(x, axis=axes).get(), h.sum(axis=axes))
        np.testing.assert_array_equal(xgpu.max(x, axis=axes, keepdims=True).get(), h.max(axis=axes, keepdims=True))
