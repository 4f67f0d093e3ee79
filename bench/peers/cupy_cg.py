"""CuPy's CG (cupyx.scipy.sparse.linalg.cg, cuSPARSE SpMV, cuBLAS dots) on the 2-D Poisson matrix
in f64, Jacobi off: the time per iteration, for comparison with examples/poisson (--2d N --solver
cg|pipecg) in the same job.

  python3 cupy_cg.py [N ...]      (default: 256 1024 4096)

Each solve runs a fixed number of iterations (tol=0, maxiter=ITER) from x = 0 with the right-hand
side made from a known smooth solution, as the example does; the median of a few solves, timed
with CUDA events after a warm-up, divided by the iterations. cupyx's CG synchronises with the host
every iteration (its convergence test reads the residual norm).
"""
import sys

import cupy as cp
import cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as cla
import numpy as np


def poisson2d(n):
    e = np.ones(n)
    t = csp.diags([-e[:-1], 2 * e, -e[:-1]], [-1, 0, 1], format="csr")
    i = csp.identity(n, format="csr")
    return (csp.kron(i, t) + csp.kron(t, i)).tocsr()


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [256, 1024, 4096]
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"cupy {cp.__version__} cupyx.scipy.sparse.linalg.cg on {name}, f64, no preconditioner\n")
    print("| problem | rows | nnz | iterations | ms per iteration |\n|---|---|---|---|---|")
    for n in sizes:
        a = poisson2d(n)
        rows = a.shape[0]
        i = cp.arange(rows, dtype=cp.float64)
        xs = 1.0 + cp.sin(0.001 * i) + 0.01 * cp.sin(0.7 * i)
        b = a @ xs
        iters = 200 if n <= 1024 else 100

        def solve():
            try:  # newer CuPy follows scipy: rtol replaced tol
                cla.cg(a, b, x0=cp.zeros(rows), rtol=0.0, atol=0.0, maxiter=iters)
            except TypeError:
                cla.cg(a, b, x0=cp.zeros(rows), tol=0.0, atol=0.0, maxiter=iters)

        for _ in range(2):
            solve()
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for _ in range(5):
            start.record()
            solve()
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        ms = float(np.median(times)) / iters
        print(f"| Poisson 2-D {n}^2 | {rows} | {a.nnz} | {iters} | {ms:.4f} |")


if __name__ == "__main__":
    main()
