"""xgpu from Python against the Python peers on the same device, in one run:

1. the host time of the statement `y = 2*x + sin(x)` on 1000 float32 elements (what a small
   statement costs the interpreter and the launch path), against CuPy (CUDA) or PyOpenCL (OpenCL);
2. CG per iteration on the 2-D Poisson matrix (f64, no preconditioner), xgpu.solvers.cg on an
   xgpu.sparse.csr_matrix against cupyx.scipy.sparse.linalg.cg where CuPy is installed.

    XGPU_BACKEND=cuda python3 bench/peers/python_bench.py [N ...]    (CG sizes; default 4096 256)
    XGPU_BACKEND=opencl python3 bench/peers/python_bench.py 512 256   (PoCL: smaller sizes)

with xgpu installed (pip install .) or found through PYTHONPATH=build/python.

Host times: the median of 15 batches of 2000 statements each (after a warm-up), the queue
finished after each batch, not after each statement; xgpu's statement is computed (y.finish())
inside the timed loop, since its statements are otherwise pending until used. CG: solves of a
fixed iteration count (rtol = atol = 0), the median of 5 after 2 warm-ups, divided by the
iterations; xgpu also reports its own device-timed figure (report.ms_per_iteration).
"""

import sys
import time

import numpy as np
import scipy.sparse as sp

import xgpu


def median_us(statement, finish, batches=15, per_batch=2000):
    for _ in range(per_batch):
        statement()
    finish()
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            statement()
        finish()
        times.append((time.perf_counter() - t0) / per_batch)
    return 1e6 * float(np.median(times))


def poisson2d(n):
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    i = sp.identity(n, format="csr")
    return (sp.kron(i, t) + sp.kron(t, i)).tocsr()


def median_ms(solve, reps=5):
    for _ in range(2):
        solve()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        solve()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [4096, 256]
    ctx = xgpu.Context.from_env()
    print(f"xgpu {xgpu.__version__} ({ctx.backend}) on {ctx.device.name}, Python {sys.version.split()[0]}\n")

    # 1. The statement's host time.
    rows = []
    h = np.linspace(0, 1, 1000, dtype=np.float32)
    x = xgpu.to_device(ctx, h)

    def xgpu_statement():
        y = 2 * x + xgpu.sin(x)
        y.finish()

    rows.append(("xgpu", median_us(xgpu_statement, ctx.queue.finish)))
    if ctx.backend == "cuda":
        try:
            import cupy as cp

            cx = cp.asarray(h)
            rows.append((f"CuPy {cp.__version__}", median_us(lambda: 2 * cx + cp.sin(cx),
                                                             cp.cuda.get_current_stream().synchronize)))
        except ImportError:
            print("(CuPy is not installed: no peer for the statement)")
    else:
        try:
            import pyopencl as cl
            import pyopencl.array as cla
            import pyopencl.clmath as clmath

            cl_ctx = cl.create_some_context(interactive=False)
            q = cl.CommandQueue(cl_ctx)
            px = cla.to_device(q, h)
            rows.append((f"PyOpenCL {cl.VERSION_TEXT} ({cl_ctx.devices[0].name.strip()})",
                         median_us(lambda: 2 * px + clmath.sin(px), q.finish)))
        except ImportError:
            print("(PyOpenCL is not installed: no peer for the statement)")
    print("| `y = 2*x + sin(x)`, 1000 float32 | host time per statement (us) |\n|---|---|")
    for name, us in rows:
        print(f"| {name} | {us:.2f} |")

    # 2. CG per iteration.
    print("\n| Poisson 2-D, f64, CG | rows | iterations | xgpu ms/iteration (wall) | xgpu (device events) | peer |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        a = poisson2d(n)
        rows_n = a.shape[0]
        i = np.arange(rows_n, dtype=np.float64)
        xs = 1.0 + np.sin(0.001 * i) + 0.01 * np.sin(0.7 * i)
        b_host = a @ xs
        iters = 200 if n <= 1024 else 100
        A = xgpu.sparse.csr_matrix(ctx, a)
        b = xgpu.to_device(ctx, b_host)
        reports = []

        def solve():
            r = xgpu.solvers.cg(A, b, rtol=0.0, atol=0.0, maxiter=iters)
            reports.append(r.report)

        wall = median_ms(solve) / iters
        device = float(np.median([r.ms_per_iteration for r in reports[2:]]))
        peer = "-"
        if ctx.backend == "cuda":
            try:
                import cupy as cp
                import cupyx.scipy.sparse as csp
                import cupyx.scipy.sparse.linalg as cla_cp

                ca, cb = csp.csr_matrix(a), cp.asarray(b_host)

                def cupy_solve():
                    try:
                        cla_cp.cg(ca, cb, x0=cp.zeros(rows_n), rtol=0.0, atol=0.0, maxiter=iters)
                    except TypeError:  # older CuPy: tol
                        cla_cp.cg(ca, cb, x0=cp.zeros(rows_n), tol=0.0, atol=0.0, maxiter=iters)
                    cp.cuda.get_current_stream().synchronize()

                peer = f"CuPy {median_ms(cupy_solve) / iters:.4f}"
            except ImportError:
                pass
        print(f"| {n}^2 | {rows_n} | {iters} | {wall:.4f} | {device:.4f} | {peer} |")


if __name__ == "__main__":
    main()
