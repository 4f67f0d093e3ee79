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


def assert_sum_close(got, terms):
    """A reduction's result against the exact sum of `terms`. Floating sums may cancel, so the
    tolerance scales with sum(|terms|) (the rounding bound of any summation order), not with the
    result: a correct sum near zero passes, a lost or doubled term still fails."""
    terms = np.asarray(terms)
    if terms.dtype.kind not in "fc":
        assert got == terms.sum()
        return
    wide = terms.astype(np.complex128 if terms.dtype.kind == "c" else np.float64)
    eps = np.finfo(terms.dtype).eps
    np.testing.assert_allclose(got, wide.sum(), rtol=0, atol=4 * eps * np.abs(wide).sum())
