"""cuSPARSE's sparse matrix-matrix product through CuPy (`A @ B` of cupyx.scipy.sparse) on the
operands spgemm-bench saved (spgemm-bench --save DIR): A * A, A * P and R * (A P); run it in the
same job as spgemm-bench.

  python3 cupy_spgemm.py DIR [--repeat R]

Timed as spgemm-bench times xgpu's: the host's clock around the call with the device finished
before and after, the median of R after a warm-up; multiply-adds counted the same way (one per
entry a_ik and entry of B's row k).
"""
import argparse
import os
import time

import cupy as cp
import cupyx.scipy.sparse as csp
import numpy as np


def load(d, name):
    with open(os.path.join(d, name + ".shape")) as f:
        rows, cols = (int(v) for v in f.read().split())
    ptr = np.fromfile(os.path.join(d, name + ".row_ptr"), dtype=np.int32)
    col = np.fromfile(os.path.join(d, name + ".col_idx"), dtype=np.int32)
    val = np.fromfile(os.path.join(d, name + ".values"), dtype=np.float64)
    m = csp.csr_matrix((cp.asarray(val), cp.asarray(col), cp.asarray(ptr)), shape=(rows, cols))
    return m, ptr, col


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"cupy {cp.__version__} (cuSPARSE) on {name}, median of {args.repeat} after a warm-up\n")
    print("| product | C nnz | ms | G multiply-adds/s |\n|---|---|---|---|")
    mats = {n: load(args.dir, n) for n in ("A", "P", "R", "AP")}
    for label, left, right in (("A * A", "A", "A"), ("A * P", "A", "P"), ("R * (A P)", "R", "AP")):
        a, _, a_col = mats[left]
        b, b_ptr, _ = mats[right]
        count = float(np.sum(np.diff(b_ptr)[a_col]))
        c = a @ b  # warm-up
        times = []
        for _ in range(args.repeat):
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            c = a @ b
            cp.cuda.Device().synchronize()
            times.append(time.perf_counter() - t0)
        t = float(np.median(times))
        print(f"| {label} | {c.nnz} | {t * 1e3:.3f} | {count / t * 1e-9:.2f} |")


if __name__ == "__main__":
    main()
