"""xgpu's errors as Python exceptions, raised before any work."""

import threading

import numpy as np
import pytest

import xgpu


def test_hierarchy():
    assert issubclass(xgpu.ShapeError, ValueError) and issubclass(xgpu.ShapeError, xgpu.Error)
    assert issubclass(xgpu.DTypeError, TypeError) and issubclass(xgpu.InvalidArgument, ValueError)
    assert issubclass(xgpu.CompileError, xgpu.Error) and issubclass(xgpu.OutOfMemory, MemoryError)


def test_compile_error_carries_the_log(ctx):
    with pytest.raises(xgpu.CompileError) as e:
        ctx.compile("XGPU_KERNEL void k(XGPU_GLOBAL float* p) { p[0] = undeclared_name; }", options=["-DX=1"])
    assert "undeclared_name" in e.value.log
    assert "-DX=1" in e.value.options
    assert "undeclared_name" in e.value.source
    assert e.value.backend == ctx.backend


def test_shape_and_type_errors_before_work(ctx):
    a, b = xgpu.zeros(ctx, (3, 4), np.float32), xgpu.zeros(ctx, (5,), np.float32)
    c = xgpu.zeros(ctx, (3, 3), np.float32)
    before = ctx.launch_count
    with pytest.raises(ValueError):
        a + b
    with pytest.raises(ValueError):
        a.reshape(5, 5)
    with pytest.raises(xgpu.DTypeError):
        xgpu.zeros(ctx, 3, "U4")
    with pytest.raises(xgpu.DTypeError):
        xgpu.empty(ctx, 3, np.float16)
    with pytest.raises(xgpu.InvalidArgument):
        c.view(np.complex128)  # a row of 12 bytes holds no whole number of 16-byte elements
    # Axes as numpy's: negative from the end, out of range an AxisError (numpy's too).
    with pytest.raises(getattr(np, "exceptions", np).AxisError):  # numpy 2 moved it
        xgpu.sum(a, axis=2)
    with pytest.raises(xgpu.AxisError):
        a.squeeze(axis=7)
    with pytest.raises(xgpu.AxisError):
        xgpu.diff(a, axis=5)
    with pytest.raises(xgpu.ShapeError):
        a.reshape(-2, 6)
    with pytest.raises(ValueError):
        a.transpose(0, 0)
    # Writes the type cannot hold, and host arrays of the wrong type or shape.
    with pytest.raises(OverflowError):
        xgpu.zeros(ctx, 3, np.int8)[0] = 1000
    with pytest.raises(OverflowError):
        xgpu.zeros(ctx, 3, np.uint8).fill(-1)
    with pytest.raises(xgpu.DTypeError):
        c[0, 0] = 1j
    with pytest.raises(xgpu.DTypeError):
        a.get(np.zeros((3, 4), np.float64))
    with pytest.raises(xgpu.ShapeError):
        a.get(np.zeros((4, 3), np.float32).T)
    assert ctx.launch_count == before


def test_bad_backend():
    with pytest.raises(xgpu.Error):
        xgpu.Context.create("no-such-backend")


def test_threads(ctx):
    """Python threads sharing a context: compiles, transfers and waits release the GIL."""
    errors, results = [], {}

    def work(t):
        try:
            x = xgpu.to_device(ctx, np.arange(1000, dtype=np.float32) + t)
            k = xgpu.ElementwiseKernel(ctx, "float* x, float c", f"x[i] = x[i] * c + {t}", f"thread_{t}")
            for _ in range(20):
                k(x, 1.0)
            results[t] = float(xgpu.sum(x))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for t in range(4):
        assert results[t] == pytest.approx(np.sum(np.arange(1000) + t + 20 * t), rel=1e-6)
