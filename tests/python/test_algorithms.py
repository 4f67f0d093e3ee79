"""searchsorted, unique, bincount, histogram, nonzero and its forms, boolean masks, concatenate,
stack and PyOpenCL's copy_if, remove_if and partition against numpy."""

import numpy as np
import pytest

import xgpu
from support import needs_fp64

AxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(ctx, rng, dtype, side):
    needs_fp64(ctx, dtype)
    a = np.sort(rng.integers(0, 50, 3000).astype(dtype))
    if a.dtype.kind == "f":
        a[-5:] = np.nan
    v = rng.integers(-5, 60, (7, 9)).astype(dtype)
    got = xgpu.searchsorted(xgpu.to_device(ctx, a), xgpu.to_device(ctx, v), side=side)
    assert got.dtype == np.int64 and got.shape == v.shape
    np.testing.assert_array_equal(got.get(), np.searchsorted(a, v, side=side))
    assert int(xgpu.searchsorted(xgpu.to_device(ctx, a), 7, side).get()) == np.searchsorted(a, 7, side)
    perm = rng.permutation(a.size)
    np.testing.assert_array_equal(
        xgpu.searchsorted(xgpu.to_device(ctx, a[perm]), xgpu.to_device(ctx, v), side,
                          sorter=xgpu.to_device(ctx, np.argsort(a[perm], kind="stable"))).get(),
        np.searchsorted(a, v, side))


@pytest.mark.parametrize("n", [1, 2, 1000, 40001])
def test_unique(ctx, rng, n):
    h = rng.integers(-n // 5 - 1, n // 5 + 1, (n,)).astype(np.int32)
    x = xgpu.to_device(ctx, h)
    values, index, inverse, counts = xgpu.unique(x, return_index=True, return_inverse=True, return_counts=True)
    w_values, w_index, w_inverse, w_counts = np.unique(h, return_index=True, return_inverse=True,
                                                       return_counts=True)
    np.testing.assert_array_equal(values.get(), w_values)
    np.testing.assert_array_equal(index.get(), w_index)
    np.testing.assert_array_equal(inverse.get(), w_inverse.ravel())
    np.testing.assert_array_equal(counts.get(), w_counts)
    np.testing.assert_array_equal(xgpu.unique(x).get(), w_values)
    f = xgpu.unique(xgpu.to_device(ctx, np.array([np.nan, 1, -0.0, np.nan, 0.0], np.float32)), return_counts=True)
    np.testing.assert_array_equal(f[0].get(), [0.0, 1.0, np.nan])
    np.testing.assert_array_equal(f[1].get(), [2, 1, 2])


@pytest.mark.parametrize("hi", [4, 500, 10000])
def test_bincount(ctx, rng, hi):
    h = rng.integers(0, hi, 50001).astype(np.int16 if hi < 30000 else np.int32)
    x = xgpu.to_device(ctx, h)
    np.testing.assert_array_equal(xgpu.bincount(x).get(), np.bincount(h))
    np.testing.assert_array_equal(xgpu.bincount(x, minlength=hi + 7).get(), np.bincount(h, minlength=hi + 7))
    if ctx.device.has_fp64:
        w = rng.standard_normal(h.size)
        got = xgpu.bincount(x, xgpu.to_device(ctx, w))
        assert got.dtype == np.float64
        np.testing.assert_allclose(got.get(), np.bincount(h, w), rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(xgpu.bincount(x, w).get(), got.get())  # the same bits again
    with pytest.raises(TypeError):
        xgpu.bincount(x.astype(np.float32))
    with pytest.raises(ValueError):
        xgpu.bincount(xgpu.to_device(ctx, np.array([1, -1, 2], np.int32)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_histogram(ctx, rng, dtype):
    needs_fp64(ctx, "float64")
    h = (rng.standard_normal(100003) * 40).astype(dtype)
    x = xgpu.to_device(ctx, h)
    for bins, rng_ in [(10, None), (256, (-50.5, 75)), (1, (0, 1)), (33, (-3, -3))]:
        counts, edges = xgpu.histogram(x, bins, range=rng_)
        w_counts, w_edges = np.histogram(h, bins, range=rng_)
        assert counts.dtype == np.int64 and edges.dtype == w_edges.dtype
        np.testing.assert_array_equal(edges.get(), w_edges)
        np.testing.assert_array_equal(counts.get(), w_counts)
    # Values exactly on the edges, and explicit uneven edges.
    _, e = np.histogram(h, 16)
    np.testing.assert_array_equal(xgpu.histogram(xgpu.to_device(ctx, e), e)[0].get(), np.histogram(e, e)[0])
    np.testing.assert_array_equal(xgpu.histogram(x, 16)[0].get(), np.histogram(h, 16)[0])
    uneven = np.array([-100, -3, 0, 0.5, 20, 200])
    np.testing.assert_array_equal(xgpu.histogram(x, uneven)[0].get(), np.histogram(h, uneven)[0])
    w = rng.random(h.size).astype(np.float64)
    got, _ = xgpu.histogram(x, 20, weights=xgpu.to_device(ctx, w))
    np.testing.assert_allclose(got.get(), np.histogram(h, 20, weights=w)[0], rtol=1e-10)
    got, _ = xgpu.histogram(x, 20, density=True)
    np.testing.assert_allclose(got.get(), np.histogram(h, 20, density=True)[0], rtol=1e-12)
    with pytest.raises(ValueError):
        xgpu.histogram(x, [3, 2, 1])
    with pytest.raises(ValueError):
        xgpu.histogram(x, 0)
    with pytest.raises(ValueError):
        xgpu.histogram(x, 5, range=(2, 1))


def test_nonzero_and_masks(ctx, rng):
    h = rng.integers(-3, 4, (6, 7, 8)).astype(np.int32)
    x = xgpu.to_device(ctx, h)
    for got, want in zip(xgpu.nonzero(x > 0), np.nonzero(h > 0)):
        np.testing.assert_array_equal(got.get(), want)
    for got, want in zip((x > 0).nonzero(), (h > 0).nonzero()):
        np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(xgpu.flatnonzero(x).get(), np.flatnonzero(h))
    np.testing.assert_array_equal(xgpu.argwhere(x > 1).get(), np.argwhere(h > 1))
    with pytest.raises(ValueError):
        xgpu.nonzero(xgpu.zeros(ctx, (), np.int32))
    # a[mask] of the whole shape, of leading dimensions, with numpy and xgpu masks.
    np.testing.assert_array_equal(x[x > 0].get(), h[h > 0])
    np.testing.assert_array_equal(x[h > 0].get(), h[h > 0])
    lead = h[:, :, 0] > 0
    np.testing.assert_array_equal(x[xgpu.to_device(ctx, lead)].get(), h[lead])
    np.testing.assert_array_equal(x[h[:, 0, 0] > 0].get(), h[h[:, 0, 0] > 0])
    with pytest.raises(IndexError):
        x[np.ones((6, 8), bool)]
    # a[mask] = scalar | values, on a view too.
    y, want = x.copy(), h.copy()
    y[y < 0] = 9
    want[want < 0] = 9
    np.testing.assert_array_equal(y.get(), want)
    k = int((h > 1).sum())
    y[x > 1] = np.arange(k)
    want[h > 1] = np.arange(k)
    np.testing.assert_array_equal(y.get(), want)
    v = y[:, ::2, 1::3]
    v[v == 9] = -1
    want[:, ::2, 1::3][want[:, ::2, 1::3] == 9] = -1
    np.testing.assert_array_equal(y.get(), want)
    with pytest.raises(ValueError):
        y[x > 1] = np.arange(k + 1)
    np.testing.assert_array_equal(y.get(), want)  # untouched by the refusal
    # a[mask] = ... with a mask of the leading dimensions: a scalar, the sub-arrays, one sub-array
    # broadcast over them (host or device), as numpy's.
    rows = h[:, 0, 0] > 0
    lead = h[:, :, 0] < 0
    n, m = int(rows.sum()), int(lead.sum())
    for key, value in ((rows, 7), (lead, -5), (rows, rng.integers(0, 9, (n, 7, 8))), (rows, np.arange(8)),
                       (xgpu.to_device(ctx, lead), xgpu.to_device(ctx, np.arange(m * 8).reshape(m, 8))),
                       (lead, xgpu.to_device(ctx, np.arange(8, dtype=np.int64)))):
        host_value = value.get() if isinstance(value, xgpu.Array) else value
        host_key = key.get() if isinstance(key, xgpu.Array) else key
        y[key] = value
        want[host_key] = host_value
        np.testing.assert_array_equal(y.get(), want)
    with pytest.raises(ValueError):
        y[rows] = np.arange(7)
    np.testing.assert_array_equal(y.get(), want)


def test_copy_if_remove_if_partition(ctx, rng):
    h = rng.standard_normal(10007).astype(np.float32)
    x = xgpu.to_device(ctx, h)
    for pred in ("ary[i] > 0.5f", x > 0.5):
        out, count, _ = xgpu.copy_if(x, pred)
        n = int(count.get())
        np.testing.assert_array_equal(out.get()[:n], h[h > 0.5])
        out, count, _ = xgpu.remove_if(x, pred)
        np.testing.assert_array_equal(out.get()[:int(count.get())], h[~(h > 0.5)])
        yes, no, count, _ = xgpu.partition(x, pred)
        n = int(count.get())
        np.testing.assert_array_equal(yes.get()[:n], h[h > 0.5])
        np.testing.assert_array_equal(no.get()[:h.size - n], h[~(h > 0.5)])


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_concatenate_and_stack(ctx, rng, axis):
    needs_fp64(ctx, "float64")
    a, b = rng.integers(0, 9, (3, 4, 5)).astype(np.int32), rng.random((3, 4, 5)).astype(np.float32)
    xa, xb = xgpu.to_device(ctx, a), xgpu.to_device(ctx, b)
    got = xgpu.concatenate([xa, xb, xa], axis=axis)
    want = np.concatenate([a, b, a], axis=axis)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
    if axis is not None:
        np.testing.assert_array_equal(xgpu.stack([xa, xb], axis=axis).get(), np.stack([a, b], axis=axis))
        np.testing.assert_array_equal(xgpu.stack([xa, xb], axis=3 if axis == -1 else axis).get(),
                                      np.stack([a, b], axis=3 if axis == -1 else axis))
    with pytest.raises(ValueError):
        xgpu.concatenate([xa, xa[:, :2, :1]], axis=0)
    with pytest.raises(ValueError):
        xgpu.stack([xa, xa[:2]])
    with pytest.raises(ValueError):
        xgpu.concatenate([])
    with pytest.raises(AxisError):
        xgpu.concatenate([xa, xa], axis=3)
    with pytest.raises(AxisError):
        xgpu.stack([xa, xa], axis=-5)
