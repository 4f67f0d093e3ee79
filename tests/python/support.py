"""Helpers of the Python tests: random data of every dtype, and skipping what a device lacks."""

import numpy as np
import pytest


def random_array(rng, shape, dtype):
    """Random values of `dtype` in a range where every operation the tests use is exact enough."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        hi = 100 if dtype.itemsize > 1 else 10
        lo = 0 if dtype.kind == "u" else -hi
        return rng.integers(lo, hi, shape).astype(dtype)
    if dtype.kind == "f":
        return rng.uniform(-1, 1, shape).astype(dtype)
    return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)


def needs_fp64(ctx, *dtypes):
    if not ctx.device.has_fp64 and any(np.dtype(d) in (np.float64, np.complex128) for d in dtypes):
        pytest.skip(f"{ctx.device.name} has no double precision")
