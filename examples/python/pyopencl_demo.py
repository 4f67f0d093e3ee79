"""PyOpenCL's demo.py on xgpu: add two vectors with a kernel compiled at run time and check the
result on the host. Runs on OpenCL or CUDA (XGPU_BACKEND), unchanged.

    python3 examples/python/pyopencl_demo.py
"""

import numpy as np

import xgpu

rng = np.random.default_rng()
a_np = rng.random(50000, dtype=np.float32)
b_np = rng.random(50000, dtype=np.float32)

ctx = xgpu.Context.from_env()
queue = ctx.queue

a_g = xgpu.to_device(ctx, a_np)
b_g = xgpu.to_device(ctx, b_np)

# PyOpenCL's kernel in xgpu's dialect (the same text compiles with OpenCL C and NVRTC); each
# array is one pointer, passed as PyOpenCL passes it: a_g.data.
prg = ctx.compile("""
XGPU_KERNEL void sum(XGPU_GLOBAL const float* a_g, XGPU_GLOBAL const float* b_g, XGPU_GLOBAL float* res_g) {
    const size_t gid = XGPU_GLOBAL_ID(0);
    res_g[gid] = a_g[gid] + b_g[gid];
}
""")

res_g = xgpu.empty_like(a_g)
knl = prg.sum  # the kernel by name, as PyOpenCL's (lookups are cached)
knl(queue, a_np.shape, None, a_g.data, b_g.data, res_g.data)

res_np = res_g.get()

# Check on the host:
print(res_np - (a_np + b_np))
print(np.linalg.norm(res_np - (a_np + b_np)))
assert np.allclose(res_np, a_np + b_np)
