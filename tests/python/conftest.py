"""The Python module's tests: each runs on every available backend (or on the one XGPU_BACKEND
and XGPU_DEVICE select), against numpy and scipy on the host, on fresh random data (the seed is
printed; XGPU_TEST_SEED repeats it)."""

import os
import zlib

import numpy as np
import pytest

import xgpu

# PyOpenCL's adapted test_array.py runs as a test of its own (ctest: python_pyopencl_array).
collect_ignore = ["pyopencl_compat"]


def _contexts():
    backend, device = os.environ.get("XGPU_BACKEND", ""), os.environ.get("XGPU_DEVICE", "")
    if (backend and backend != "auto") or device:
        return [("env", xgpu.Context.from_env)]
    return [(b.name, lambda name=b.name: xgpu.Context.create(name)) for b in xgpu.backends()
            if b.available and b.devices]


_CONTEXTS = _contexts()
_made = {}


@pytest.fixture(params=[name for name, _ in _CONTEXTS])
def ctx(request):
    """A context on each selected backend, made once for the whole run (contexts are costly to make)."""
    if request.param not in _made:
        _made[request.param] = dict(_CONTEXTS)[request.param]()
    return _made[request.param]


_SEED = int(os.environ.get("XGPU_TEST_SEED", np.random.SeedSequence().entropy % (1 << 63)))


def pytest_report_header(config):
    return f"xgpu backends: {[name for name, _ in _CONTEXTS]}; random seed {_SEED} (set XGPU_TEST_SEED to repeat)"


@pytest.fixture
def rng(request):
    """A generator seeded from the run's seed and the test's name."""
    return np.random.default_rng([_SEED, zlib.crc32(request.node.nodeid.encode())])
