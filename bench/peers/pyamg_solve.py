"""The CPU peer of solve-bench: PyAMG's smoothed aggregation with CG (pip's pyamg) on the same 2-D
or 3-D Poisson problem, to rtol 1e-8 from x = 0; setup and solve timed as solve-bench times them
(median of R after a warm-up). PyAMG's defaults except the strength threshold (theta 0.08, as
xgpu's).

    python3 bench/peers/pyamg_solve.py [--2d N | --3d N] [--repeat R]
"""

import argparse
import time

import numpy as np
import pyamg

parser = argparse.ArgumentParser()
parser.add_argument("--2d", dest="n2", type=int)
parser.add_argument("--3d", dest="n3", type=int)
parser.add_argument("--repeat", type=int, default=3)
parser.add_argument("--tol", type=float, default=1e-8)
args = parser.parse_args()
shape = (args.n3,) * 3 if args.n3 else (args.n2 or 1024,) * 2
A = pyamg.gallery.poisson(shape, format="csr")
i = np.arange(A.shape[0])
b = A @ (1.0 + np.sin(0.001 * i) + 0.01 * np.sin(0.7 * i))


def run():
    t0 = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(A, strength=("symmetric", {"theta": 0.08}))
    t1 = time.perf_counter()
    residuals = []
    x = ml.solve(b, tol=args.tol, accel="cg", residuals=residuals)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, len(residuals) - 1, np.linalg.norm(b - A @ x) / np.linalg.norm(b)


run()
runs = sorted((run() for _ in range(args.repeat)), key=lambda r: r[0] + r[1])
setup, solve, iterations, residual = runs[len(runs) // 2]
print(f"pyamg {pyamg.__version__}: {len(shape)}-D Poisson {shape[0]}^{len(shape)}, {A.shape[0]} rows, f64, "
      f"rtol {args.tol:.0e}, median of {args.repeat} after a warm-up")
print(f"{'sa+cg':<10} {iterations:11d} {setup:10.4f} {solve:10.4f} {setup + solve:11.4f} {residual:12.3e}")
