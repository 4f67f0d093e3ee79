"""Counter-based random numbers on the device: Philox4x32-10, as numpy's ``Generator(Philox)``
takes its place in the C++ library (docs/arrays.md). The same (seed, counter) gives the same
numbers on every device and backend.

    gen = xgpu.random.Philox(ctx, seed=42)
    u = gen.uniform((1000,), np.float32)          # [0, 1)
    z = gen.normal((1000,), mean=0, stddev=1)
    k = gen.integers(0, 10, (1000,), np.int32)    # [0, 10)
"""

import os

import numpy as np

from . import _xgpu
from ._array import Array, compute_pending, empty
from ._errors import DTypeError, InvalidArgument


class Philox:
    """A generator; ``seed`` None draws one from the operating system, as numpy's default_rng().
    ``counter`` is the next block of the stream; setting it jumps anywhere."""

    def __init__(self, context, seed=None, counter=0):
        self.context = context
        self.seed = int.from_bytes(os.urandom(8), "little") if seed is None else int(seed) & (2**64 - 1)
        self.counter = int(counter)

    def _real(self, a, what):
        if not isinstance(a, Array) or a.dtype not in (np.float32, np.float64):
            raise DTypeError(f"xgpu: {what} fills float32 or float64 arrays")
        compute_pending()
        return a.desc

    def fill_uniform(self, a, lo=0.0, hi=1.0):
        """Fills ``a`` (any layout) with uniform numbers in [lo, hi); returns it."""
        self.counter += _xgpu.philox_uniform(self._real(a, "uniform"), self.seed, self.counter, float(lo), float(hi))
        return a

    def fill_normal(self, a, mean=0.0, stddev=1.0):
        """Fills the float array ``a`` with normal values (``mean``, ``stddev``); returns ``a``."""
        self.counter += _xgpu.philox_normal(self._real(a, "normal"), self.seed, self.counter, float(mean),
                                            float(stddev))
        return a

    def fill_integers(self, a, lo, hi):
        """Fills an integer array with integers in [lo, hi)."""
        if not isinstance(a, Array) or a.dtype.kind not in "iu":
            raise DTypeError("xgpu: integers fills integer arrays")
        lo, hi = int(lo), int(hi)
        info = np.iinfo(a.dtype)
        if not lo < hi or lo < info.min or hi - 1 > info.max:
            raise InvalidArgument(f"xgpu: integers: [{lo}, {hi}) is empty or outside {a.dtype}")
        compute_pending()
        self.counter += _xgpu.philox_integers(a.desc, self.seed, self.counter, lo & (2**64 - 1), hi - lo)
        return a

    def uniform(self, shape, dtype=np.float64, lo=0.0, hi=1.0):
        """A new array of ``shape`` and ``dtype`` with uniform values in [lo, hi)."""
        return self.fill_uniform(empty(self.context, shape, dtype), lo, hi)

    def normal(self, shape, dtype=np.float64, mean=0.0, stddev=1.0):
        """A new array of ``shape`` and ``dtype`` with normal values (``mean``, ``stddev``)."""
        return self.fill_normal(empty(self.context, shape, dtype), mean, stddev)

    def integers(self, lo, hi=None, shape=(), dtype=np.int64):
        """numpy's Generator.integers: [lo, hi), or [0, lo) with one bound."""
        if hi is None:
            lo, hi = 0, lo
        return self.fill_integers(empty(self.context, shape, dtype), lo, hi)
