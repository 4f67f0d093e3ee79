"""Handing arrays to and from other GPU libraries: DLPack and the CUDA array interface on CUDA (with
CuPy and PyTorch where they are installed), and a clear refusal on OpenCL."""

import numpy as np
import pytest

import xgpu
from support import assert_sum_close, random_array


def test_opencl_refuses_clearly(ctx):
    if ctx.backend != "opencl":
        pytest.skip("OpenCL only")
    a = xgpu.zeros(ctx, 4, np.float32)
    assert a.__dlpack_device__() == (4, ctx.device.index)  # kDLOpenCL
    with pytest.raises(BufferError, match="CUDA backend"):
        a.__dlpack__()
    assert not hasattr(a, "__cuda_array_interface__")
    with pytest.raises(xgpu.InvalidArgument, match="CUDA backend"):
        xgpu.from_dlpack(ctx, np.zeros(3))


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_cuda_export_without_copy(ctx, rng, library):
    if ctx.backend != "cuda":
        pytest.skip("CUDA only")
    lib = pytest.importorskip(library)
    h = random_array(rng, (64, 48), np.float32)
    a = xgpu.to_device(ctx, h)
    view = a[8:40:2, ::3]
    y = 2 * view + 1  # pending: computed, and the queue finished, before the hand-over
    t = lib.from_dlpack(y)
    got = t.get() if library == "cupy" else t.cpu().numpy()
    np.testing.assert_allclose(got, 2 * h[8:40:2, ::3] + 1, rtol=1e-6)
    v = lib.from_dlpack(view)  # a strided view keeps its strides: the same memory
    host = v.get() if library == "cupy" else v.cpu().numpy()
    np.testing.assert_array_equal(host, h[8:40:2, ::3])
    assert a.__dlpack_device__() == (2, ctx.device.index)
    assert '"dltensor_versioned"' in repr(a.__dlpack__(max_version=(1, 0)))
    c = lib.from_dlpack(a.__dlpack__(copy=True)) if library == "torch" else None
    if c is not None:  # a copy: later writes to a do not reach it
        a[0] = 5
        ctx.finish()
        np.testing.assert_array_equal(c.cpu().numpy(), h)
        a[0] = xgpu.to_device(ctx, h[0])
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(1, 0))  # the host
    cai = a.__cuda_array_interface__
    assert cai["shape"] == (64, 48) and cai["typestr"] == "<f4" and cai["data"][0] != 0
    if library == "cupy":
        np.testing.assert_array_equal(lib.asarray(a).get(), h)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_cuda_import_without_copy(ctx, rng, library):
    if ctx.backend != "cuda":
        pytest.skip("CUDA only")
    lib = pytest.importorskip(library)
    h = random_array(rng, (40, 30), np.float32)
    t = lib.asarray(h) if library == "cupy" else lib.as_tensor(h, device=f"cuda:{ctx.device.index}")
    t = t * 2  # the other library's own work, on its own stream
    a = xgpu.from_dlpack(ctx, t)
    assert a.shape == (40, 30) and a.dtype == np.float32
    np.testing.assert_allclose(a.get(), 2 * h, rtol=1e-6)
    a[3:5] = 0  # written by xgpu, seen by the other library: the same memory
    ctx.finish()
    back = t.get() if library == "cupy" else t.cpu().numpy()
    assert (back[3:5] == 0).all()
    view = t[::2, 1:]
    np.testing.assert_allclose(xgpu.from_dlpack(ctx, view).get(), back[::2, 1:], rtol=1e-6)
    del t, view  # the xgpu array keeps the memory alive
    assert_sum_close(xgpu.sum(a).get(), back)
    if library == "torch":
        with pytest.raises(xgpu.InvalidArgument):
            xgpu.from_dlpack(ctx, lib.as_tensor(h))  # on the CPU
