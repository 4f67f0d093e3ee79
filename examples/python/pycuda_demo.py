"""PyCUDA's demo.py on xgpu: double a 4 x 4 array with a kernel compiled at run time, then the same
with an array expression. Runs on CUDA or OpenCL (XGPU_BACKEND), unchanged.

    python3 examples/python/pycuda_demo.py
"""

import numpy as np

import xgpu

ctx = xgpu.Context.from_env()

a = np.random.randn(4, 4).astype(np.float32)
a_gpu = xgpu.to_device(ctx, a)

# PyCUDA's kernel in xgpu's dialect: the same source compiles with NVRTC and with OpenCL C.
# Launched as PyCUDA launches it: the array is one pointer, block= and grid= the launch's shape.
module = ctx.compile("""
XGPU_KERNEL void doublify(XGPU_GLOBAL float* a) {
    const int idx = (int)(XGPU_LOCAL_ID(0) + XGPU_LOCAL_ID(1) * 4);
    a[idx] *= 2;
}
""")
doublify = module.get_function("doublify")
doublify(a_gpu, block=(4, 4, 1), grid=(1, 1))

a_doubled = a_gpu.get()
print("original array:")
print(a)
print("doubled with kernel:")
print(a_doubled)
assert np.allclose(a_doubled, 2 * a)

# The same with an array expression (one generated kernel).
a_doubled = (2 * xgpu.to_device(ctx, a)).get()
print("doubled with an array expression:")
print(a_doubled)
assert np.allclose(a_doubled, 2 * a)
