"""cuSPARSE SpMV through CuPy on the matrices spmv-bench saved (spmv-bench --save DIR), for the
figures spmv-bench compares with; run it in the same job.

  python3 cupy_spmv.py DIR

Same counting as spmv-bench: values and column indices once, row pointers once, x and y once
each; GFLOP/s at 2 per entry; median of timed runs after a warm-up, timed with CUDA events.
"""
import glob
import os
import sys

import cupy as cp
import cupyx.scipy.sparse as csp
import numpy as np

from cupy_bench import median_ms  # the same timing as the other CuPy figures


def main():
    d = sys.argv[1]
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"cupy {cp.__version__} (cuSPARSE) on {name}\n")
    print("| matrix | ms | GB/s | GFLOP/s |\n|---|---|---|---|")
    for rp in sorted(glob.glob(os.path.join(d, "*.row_ptr"))):
        stem = rp[: -len(".row_ptr")]
        row_ptr = np.fromfile(rp, dtype=np.int32)
        col = np.fromfile(stem + ".col_idx", dtype=np.int32)
        val = np.fromfile(stem + ".values", dtype=np.float64)
        rows = row_ptr.size - 1
        cols = int(col.max()) + 1 if col.size else rows
        cols = max(cols, rows)  # spmv-bench's matrices are square
        a = csp.csr_matrix((cp.asarray(val), cp.asarray(col), cp.asarray(row_ptr)), shape=(rows, cols))
        x = cp.ones(cols, dtype=cp.float64)

        ms = median_ms(lambda: a @ x, keep_busy=True)
        nnz = val.size
        nbytes = nnz * (8 + 4) + (rows + 1) * 4 + (cols + rows) * 8
        print(f"| {os.path.basename(stem)} | {ms:.3f} | {nbytes / (ms * 1e6):.0f} | {2 * nnz / (ms * 1e6):.1f} |")


if __name__ == "__main__":
    main()
