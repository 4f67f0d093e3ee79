"""A scipy.sparse system solved by CG on the device, in a few lines: the 2-D Poisson matrix built
with scipy, moved to the device once, solved to a relative residual of 1e-8, and checked against
scipy.sparse.linalg on the host.

    python3 examples/python/scipy_cg.py [n]      (an n x n grid; default 64)
"""

import sys

import numpy as np
import scipy.sparse as sp

import xgpu

n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
A_host = sp.kron(sp.eye(n), t) + sp.kron(t, sp.eye(n))  # COO, CSR, ...: any scipy.sparse format
b_host = np.random.default_rng(0).uniform(-1, 1, n * n)

ctx = xgpu.Context.from_env()
A = xgpu.sparse.csr_matrix(ctx, A_host)
b = xgpu.to_device(ctx, b_host)

result = xgpu.solvers.cg(A, b, rtol=1e-8, M="jacobi")
x, info = result
print(result.report)  # method, status, iterations, relative residual

residual = np.linalg.norm(b_host - A_host @ x.get()) / np.linalg.norm(b_host)
print(f"{ctx.backend} on {ctx.device.name}: info {info}, |b - A x| / |b| = {residual:.2e} (checked on the host)")
assert info == 0 and residual <= 1e-8
