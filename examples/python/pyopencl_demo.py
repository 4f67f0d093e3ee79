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

prg = ctx.compile("""
XGPU_KERNEL void sum(XGPU_GLOBAL const float* a_g, long a_off, XGPU_GLOBAL const float* b_g, long b_off,
                     XGPU_GLOBAL float* res_g, long res_off, int n) {
    const int gid = (int)XGPU_GLOBAL_ID(0);
    if (gid < n) res_g[res_off + gid] = a_g[a_off + gid] + b_g[b_off + gid];
}
""")

res_g = xgpu.empty_like(a_g)
knl = prg.kernel("sum")  # kernel lookups are cached
knl(queue, a_np.shape, a_g, b_g, res_g, np.int32(a_np.size))

res_np = res_g.get()

# Check on the host:
print(res_np - (a_np + b_np))
print(np.linalg.norm(res_np - (a_np + b_np)))
assert np.allclose(res_np, a_np + b_np)
