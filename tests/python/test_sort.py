"""Sorting against numpy's stable sort: every key dtype, special floats, axes and views, in place,
sort_by_key, numpy's keywords and numpy's errors."""

import numpy as np
import pytest

import xgpu
from support import needs_fp64

# One of each width and kind (the C++ tests take every type; each is kernels to compile).
KEYS = ["bool", "int8", "uint16", "int32", "uint64", "float32", "float64"]


def keys(rng, n, dtype):
    """Keys over the whole range of `dtype`, floats with NaNs, infinities, signed zeros and
    denormals mixed in."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    x = rng.uniform(-1000, 1000, n).astype(dtype)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, np.finfo(dtype).smallest_subnormal,
                        -np.finfo(dtype).smallest_subnormal, np.finfo(dtype).max, np.finfo(dtype).min], dtype)
    pick = rng.random(n) < 0.1
    x[pick] = rng.choice(special, int(pick.sum()))
    return x


@pytest.mark.parametrize("dtype", KEYS)
@pytest.mark.parametrize("n", [0, 1, 1023, 30001])
def test_sort_and_argsort_match_numpy(ctx, rng, dtype, n):
    needs_fp64(ctx, dtype)
    h = keys(rng, n, dtype)
    x = xgpu.to_device(ctx, h)
    want = np.argsort(h, kind="stable")
    got = xgpu.argsort(x)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.get(), want)
    # Bit for bit: the signs of zeros and the NaNs' bits where numpy put them.
    assert xgpu.sort(x).get().tobytes() == h[want].tobytes()
    assert x.get().tobytes() == h.tobytes()


@pytest.mark.parametrize("shape", [(6, 250), (3, 4, 700), (2500, 3)])
def test_every_axis(ctx, rng, shape):
    h = rng.integers(-30, 30, shape).astype(np.int32)
    x = xgpu.to_device(ctx, h)
    for axis in [*range(len(shape)), -1, None]:
        np.testing.assert_array_equal(xgpu.sort(x, axis=axis).get(), np.sort(h, axis=axis, kind="stable"))
        np.testing.assert_array_equal(xgpu.argsort(x, axis=axis).get(), np.argsort(h, axis=axis, kind="stable"))
        np.testing.assert_array_equal(x.argsort(axis=axis).get(), np.argsort(h, axis=axis, kind="stable"))


def test_in_place_on_a_view(ctx, rng):
    h = rng.standard_normal((40, 90)).astype(np.float32)
    base = xgpu.to_device(ctx, h)
    view = base[1::3, ::2].T
    doubled = view * 2  # pending: must see the old values
    view.sort(axis=0)
    want = h.copy()
    want[1::3, ::2].T.sort(axis=0)
    np.testing.assert_array_equal(base.get(), want)
    np.testing.assert_array_equal(doubled.get(), h[1::3, ::2].T * 2)
    row = xgpu.to_device(ctx, h[0])
    assert row.sort() is None
    np.testing.assert_array_equal(row.get(), np.sort(h[0]))


@pytest.mark.parametrize("vdtype", ["int64", "uint8", "float32", "complex128"])
def test_sort_by_key(ctx, rng, vdtype):
    needs_fp64(ctx, vdtype)
    n = 5000
    hk = rng.integers(0, 20, n).astype(np.int32)  # ties: stability shows
    hv = (rng.standard_normal(n) * 100).astype(vdtype) if vdtype != "complex128" else \
        (rng.standard_normal(n) + 1j * rng.standard_normal(n))
    k, v = xgpu.to_device(ctx, hk), xgpu.to_device(ctx, hv)
    assert xgpu.sort_by_key(k, v) is None
    order = np.argsort(hk, kind="stable")
    np.testing.assert_array_equal(k.get(), hk[order])
    np.testing.assert_array_equal(v.get(), hv[order])


def test_keywords_and_errors(ctx):
    x = xgpu.to_device(ctx, np.array([3, 1, 2], np.int32))
    for kind in ("quicksort", "mergesort", "heapsort", "stable"):
        np.testing.assert_array_equal(xgpu.sort(x, kind=kind).get(), [1, 2, 3])
    np.testing.assert_array_equal(xgpu.argsort(x, stable=True).get(), [1, 2, 0])
    with pytest.raises(ValueError):
        xgpu.sort(x, kind="bogo")
    with pytest.raises(ValueError):
        xgpu.sort(x, order="f0")
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        xgpu.sort(x, axis=1)
    with pytest.raises(xgpu.AxisError):
        xgpu.argsort(xgpu.to_device(ctx, np.zeros((2, 3))), axis=-3)
    with pytest.raises(xgpu.AxisError):
        xgpu.sort(xgpu.zeros(ctx, (), np.float32))  # 0-d: numpy has no axis -1 either
    with pytest.raises(TypeError):
        xgpu.sort(x, axis=1.0)
    with pytest.raises(TypeError):
        xgpu.sort(np.array([1, 2]))
    with pytest.raises(xgpu.DTypeError):
        xgpu.sort(xgpu.to_device(ctx, np.array([1j, 2], np.complex64)))
    with pytest.raises(xgpu.ShapeError):
        xgpu.sort_by_key(x, xgpu.zeros(ctx, 4, np.int32))
    with pytest.raises(xgpu.InvalidArgument):
        xgpu.sort_by_key(x, x)
    np.testing.assert_array_equal(x.get(), [3, 1, 2])  # nothing happened to it
    assert xgpu.sort(x, axis=None).shape == (3,)
    assert xgpu.sort(xgpu.zeros(ctx, (0, 4), np.float32), axis=0).shape == (0, 4)
