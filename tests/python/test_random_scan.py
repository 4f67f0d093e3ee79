"""Philox random numbers (their statistics, reproducibility and the stream's continuation) and
scans against numpy."""

import numpy as np
import pytest

import xgpu
from support import needs_fp64, random_array


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_and_normal(ctx, dtype):
    needs_fp64(ctx, dtype)
    gen = xgpu.random.Philox(ctx, seed=1234)
    u = gen.uniform((200000,), dtype, lo=-2, hi=3).get()
    after_uniform = gen.counter
    assert after_uniform > 0
    assert u.dtype == np.dtype(dtype) and u.min() >= -2 and u.max() < 3
    assert abs(u.mean() - 0.5) < 0.02 and abs(u.var() - 25 / 12) < 0.05
    z = gen.normal((200000,), dtype, mean=1, stddev=2).get()
    assert abs(z.mean() - 1) < 0.03 and abs(z.std() - 2) < 0.03
    # The same seed and counter give the same numbers; the stream moves on.
    again = xgpu.random.Philox(ctx, seed=1234)
    np.testing.assert_array_equal(again.uniform((200000,), dtype, lo=-2, hi=3).get(), u)
    assert again.counter == after_uniform
    fresh = xgpu.random.Philox(ctx, 1234).uniform((100,), dtype).get()
    assert not np.array_equal(again.uniform((100,), dtype).get(), fresh)  # the stream went on


def test_integers(ctx):
    gen = xgpu.random.Philox(ctx, seed=7)
    k = gen.integers(-5, 5, (100000,), np.int32).get()
    assert k.min() == -5 and k.max() == 4
    counts = np.bincount(k + 5)
    assert counts.min() > 9000
    assert gen.integers(3, shape=(10,), dtype=np.uint8).get().max() < 3
    with pytest.raises(xgpu.InvalidArgument):
        gen.integers(5, 5, (3,), np.int32)
    with pytest.raises(xgpu.DTypeError):
        gen.fill_uniform(xgpu.zeros(ctx, 3, np.int32))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_scans(ctx, rng, dtype):
    h = random_array(rng, (10007,), dtype)
    x = xgpu.to_device(ctx, h)
    np.testing.assert_allclose(xgpu.cumsum(x).get(), np.cumsum(h), rtol=1e-4, atol=1e-3)
    big = "-2147483647" if dtype == "int32" else "-9223372036854775807" if dtype == "int64" else "-INFINITY"
    running_max = xgpu.InclusiveScanKernel(ctx, dtype, "a > b ? a : b", big)
    np.testing.assert_array_equal(running_max(x).get(), np.maximum.accumulate(h))
    total = xgpu.ExclusiveScanKernel(ctx, dtype, "a + b", "0")
    want = np.concatenate([[0], np.cumsum(h)[:-1]]).astype(dtype)
    np.testing.assert_allclose(total(x).get(), want, rtol=1e-4, atol=1e-3)
    # An expression as the input, a segmented scan, and the output as the input.
    flags = xgpu.to_device(ctx, (np.arange(10007) % 100 == 0))
    seg = xgpu.ScanKernel(ctx, dtype, "a + b", "0").inclusive(x * 2, flags=flags).get()
    want = np.concatenate([np.cumsum(2 * h[i:i + 100]) for i in range(0, 10007, 100)])
    np.testing.assert_allclose(seg, want, rtol=1e-4, atol=1e-3)
    total.exclusive(x, out=x)
    np.testing.assert_allclose(x.get(), np.concatenate([[0], np.cumsum(h)[:-1]]), rtol=1e-4, atol=1e-3)


def test_cumsum_types(ctx):
    needs_fp64(ctx, np.float64)
    assert xgpu.cumsum(xgpu.ones(ctx, 5, np.int8)).dtype == np.int64
    assert xgpu.cumsum(xgpu.ones(ctx, 5, np.uint16)).dtype == np.uint64
    assert xgpu.cumsum(xgpu.ones(ctx, (2, 3), np.float32)).shape == (6,)
