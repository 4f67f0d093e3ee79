"""Kernels from source and from argument declarations, against numpy."""

import numpy as np
import pytest

import xgpu
from support import random_array

SOURCE = """
XGPU_KERNEL void axpy(XGPU_GLOBAL float* y, long y_off, XGPU_GLOBAL const float* x, long x_off, float a, int n) {
    const int i = (int)XGPU_GLOBAL_ID(0);
    if (i < n) y[y_off + i] += a * x[x_off + i];
}
"""


def test_compile_and_launch(ctx, rng):
    hx, hy = random_array(rng, (1000,), np.float32), random_array(rng, (1000,), np.float32)
    x, y = xgpu.to_device(ctx, hx), xgpu.to_device(ctx, hy)
    prg = ctx.compile(SOURCE, options=["-DUNUSED=1"])
    assert "axpy" in prg.kernel_names
    k = prg.kernel("axpy")
    k(ctx.queue, xgpu.Grid(1024, 64), y, x, np.float32(0.5), np.int32(1000))
    np.testing.assert_allclose(y.get(), hy + 0.5 * hx, rtol=1e-6)
    # A view is passed at its offset.
    k(ctx.queue, 512, y[500:], x[:500], np.float32(2), np.int32(500))
    hy = hy + 0.5 * hx
    hy[500:] += 2 * hx[:500]
    np.testing.assert_allclose(y.get(), hy, rtol=1e-6)


def test_launch_arguments_are_checked(ctx):
    k = ctx.compile(SOURCE).kernel("axpy")
    y = xgpu.zeros(ctx, 4, np.float32)
    before = ctx.launch_count
    with pytest.raises(xgpu.DTypeError, match="numpy scalar"):
        k(ctx.queue, 4, y, y, 0.5, np.int32(4))
    with pytest.raises(xgpu.InvalidArgument):
        k(ctx.queue, 4, y, y, np.float32(1))  # too few
    with pytest.raises(xgpu.DTypeError):
        k(ctx.queue, 4, y, "y", np.float32(1), np.int32(4))
    with pytest.raises(xgpu.InvalidArgument, match="strided view"):
        k(ctx.queue, 2, y[::2], y[:2], np.float32(1), np.int32(2))  # the kernel sees a pointer, not strides
    # A scalar of another width than the kernel's parameter: the backend's check, a TypeError.
    with pytest.raises(xgpu.DTypeError, match="8 bytes") as caught:
        k(ctx.queue, 4, y, y, np.float64(0.5), np.int32(4))
    assert isinstance(caught.value, TypeError)
    assert ctx.launch_count == before
    with pytest.raises(xgpu.InvalidArgument):
        ctx.compile(SOURCE).kernel("nope")


# PyOpenCL's and PyCUDA's own kernels (their documentation's first examples), in each one's
# language: one pointer per array.
PYOPENCL_TWICE = """
__kernel void twice(__global float *a)
{
  int gid = get_global_id(0);
  a[gid] = 2*a[gid];
}
"""
PYCUDA_DOUBLIFY = """
__global__ void doublify(float *a)
{
  int idx = threadIdx.x + threadIdx.y*4;
  a[idx] *= 2;
}
"""
# The C++ README's kernel, in xgpu's dialect (both backends).
README_TWICE = """
XGPU_KERNEL void twice(XGPU_GLOBAL double* a, const uint64_t n) {
    const size_t i = XGPU_GLOBAL_ID(0);
    if (i < n) a[i] *= 2.0;
}
"""


def test_one_pointer_idioms(ctx, rng):
    """a.data (PyOpenCL), arrays under block=/grid= (PyCUDA) and the README's kernel: one
    parameter per array; PyOpenCL's local-size argument."""
    queue = ctx.queue
    h = random_array(rng, (16,), np.float32)
    a = xgpu.to_device(ctx, h)
    if ctx.backend == "opencl":  # PyOpenCL's code, unchanged but for cl.Program(...).build()
        prg = ctx.compile(PYOPENCL_TWICE)
        prg.twice(queue, a.shape, None, a.data)
        np.testing.assert_array_equal(a.get(), 2 * h)
        prg.twice(queue, (16,), (4,), a.data)
        np.testing.assert_array_equal(a.get(), 4 * h)
        with pytest.raises(xgpu.ArrayHasOffsetError):
            a[4:].data
        with pytest.raises(ValueError):  # PyOpenCL users catch it as a ValueError
            a[4:].data
    else:  # PyCUDA's code, unchanged but for SourceModule(...)
        mod = ctx.compile(PYCUDA_DOUBLIFY)
        func = mod.get_function("doublify")
        func(a, block=(4, 4, 1), grid=(1, 1))
        np.testing.assert_array_equal(a.get(), 2 * h)
        func(a.data, block=(4, 4, 1))
        np.testing.assert_array_equal(a.get(), 4 * h)
        # On CUDA a view's pointer carries its offset.
        b = xgpu.to_device(ctx, np.zeros(20, np.float32))
        b[4:] = a
        func(b[4:], block=(4, 4, 1))
        np.testing.assert_array_equal(b.get(), np.r_[np.zeros(4, np.float32), 8 * h])
        assert a.data.int_ptr != 0 and b[4:].data.offset == 16
    # The README's kernel and the PyCUDA form on every backend.
    n = 1000 + int(rng.integers(0, 100))
    hy = rng.uniform(-1, 1, n)
    y = xgpu.to_device(ctx, hy)
    k = ctx.compile(README_TWICE).kernel("twice")
    k(queue, xgpu.Grid(((n + 255) // 256) * 256, 256), y.data, np.uint64(n))
    np.testing.assert_array_equal(y.get(), 2 * hy)
    k(y, np.uint64(n), block=(128, 1, 1), grid=((n + 127) // 128, 1))
    np.testing.assert_array_equal(y.get(), 4 * hy)
    k(queue, (n,), None, y.data, np.uint64(n))
    np.testing.assert_array_equal(y.get(), 8 * hy)
    assert y.data.size == 8 * n and y.data.offset == 0
    # Checked before any work.
    before = ctx.launch_count
    with pytest.raises(xgpu.InvalidArgument, match="shared"):
        k(y, np.uint64(n), block=(128, 1, 1), grid=(8, 1), shared=64)
    with pytest.raises(xgpu.InvalidArgument, match="stream"):
        k(np.uint64(n), block=(128, 1, 1))
    with pytest.raises(xgpu.InvalidArgument, match="unknown launch options"):
        k(y, np.uint64(n), block=(128, 1, 1), grdi=(8, 1))
    with pytest.raises(xgpu.InvalidArgument):
        k(queue, xgpu.Grid(n, 64), (64,), y.data, np.uint64(n))
    with pytest.raises(AttributeError):
        ctx.compile(README_TWICE).nope
    assert ctx.launch_count == before
    if ctx.backend != "cuda":
        with pytest.raises(xgpu.InvalidArgument, match="no device address"):
            y.data.int_ptr


def test_elementwise_kernel(ctx, rng):
    hx = random_array(rng, (1000,), np.float32)
    x, z = xgpu.to_device(ctx, hx), xgpu.zeros(ctx, 1000, np.float32)
    lin = xgpu.ElementwiseKernel(ctx, "float a, const float* x, float b, float* z", "z[i] = a * x[i] + b", "lin")
    lin(2, x, 0.5, z)
    np.testing.assert_allclose(z.get(), 2 * hx + 0.5, rtol=1e-6)
    lin(np.float32(3), x, 0, z, range=slice(0, 1000, 2))
    want = 2 * hx + 0.5
    want[::2] = 3 * hx[::2]
    np.testing.assert_allclose(z.get(), want, rtol=1e-6)
    with pytest.raises(xgpu.DTypeError):
        lin(2, xgpu.zeros(ctx, 1000, np.int32), 0.5, z)  # declared float*
    with pytest.raises(xgpu.DTypeError):
        lin(2.5j, x, 0.5, z)  # a complex value for a float
    with pytest.raises(xgpu.InvalidArgument):
        lin(2, x, z)
    # Every array must hold every index the kernel runs: a short one is refused before the launch.
    before = ctx.launch_count
    with pytest.raises(xgpu.InvalidArgument, match="'z' holds 10 elements"):
        lin(2, x, 0.5, xgpu.zeros(ctx, 10, np.float32))
    with pytest.raises(xgpu.InvalidArgument, match="'z' holds 10 elements"):
        lin(2, x, 0.5, xgpu.zeros(ctx, 10, np.float32), range=slice(0, 20))
    assert ctx.launch_count == before
    lin(2, x, 0.5, xgpu.zeros(ctx, 10, np.float32), range=slice(0, 10))  # the indices it runs fit
    lin(2, x, 0.5, z, range=slice(-2**70, 2**70))  # bounds past 64 bits clamp, as numpy's
    np.testing.assert_allclose(z.get(), 2 * hx + 0.5, rtol=1e-6)
    with pytest.raises(OverflowError):
        xgpu.ElementwiseKernel(ctx, "int a, int* y", "y[i] = a")(2**40 + 5, xgpu.zeros(ctx, 3, np.int32))


def test_reduction_kernel(ctx, rng):
    hx, hy = random_array(rng, (5000,), np.float32), random_array(rng, (5000,), np.float32)
    x, y = xgpu.to_device(ctx, hx), xgpu.to_device(ctx, hy)
    dot = xgpu.ReductionKernel(ctx, np.float32, "0", "a + b", "x[i] * y[i]", "const float* x, const float* y")
    # float32 sums in another order: the error is relative to the sum of |x_i y_i|, not to a sum
    # that may cancel.
    def close(got, n):
        want = np.dot(hx[:n].astype(np.float64), hy[:n])
        assert abs(float(got) - want) <= 1e-5 * np.abs(hx[:n].astype(np.float64) * hy[:n]).sum()

    close(dot(x, y).get(), 5000)
    close(dot(x, y, range=100).get(), 100)
    mx = xgpu.ReductionKernel(ctx, np.int32, "-2147483647", "a > b ? a : b", "w[i]", "const int* w")
    hv = (hx * 1000).astype(np.int32)
    assert mx(xgpu.to_device(ctx, hv)).get() == hv.max()
    # An argument may take any name the kernel around the map does not declare itself.
    total = xgpu.ReductionKernel(ctx, np.int64, "0", "a + b", "(long)v[i]", "const int* v")
    assert total(xgpu.to_device(ctx, hv)).get() == hv.astype(np.int64).sum()
    with pytest.raises(xgpu.InvalidArgument, match="'n' is taken"):
        xgpu.ReductionKernel(ctx, np.int64, "0", "a + b", "(long)w[i] * n", "const int* w, int n")
    before = ctx.launch_count
    with pytest.raises(xgpu.InvalidArgument, match="'y' holds 3 elements"):
        dot(x, xgpu.zeros(ctx, 3, np.float32))
    with pytest.raises(xgpu.InvalidArgument, match="range"):
        dot(x, y, range=-5)
    assert ctx.launch_count == before
    close(dot(x, y[:100], range=100).get(), 100)


def test_queues(ctx, rng):
    q = ctx.new_queue()
    h = random_array(rng, (100,), np.float32)
    x = xgpu.to_device(ctx, h)
    k = xgpu.ElementwiseKernel(ctx, "float* x", "x[i] = 2 * x[i]")
    k(x, queue=q)
    np.testing.assert_array_equal(x.get(queue=q), 2 * h)  # read on q: after its kernel
    k(x, queue=q)
    q.finish()  # or: after this, any queue sees the kernel's writes
    np.testing.assert_array_equal(x.get(), 4 * h)
    a, b = q.marker(), q.marker()
    b.wait()
    assert b.is_complete and a.elapsed_ms(b) >= 0
