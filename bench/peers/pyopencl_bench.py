"""PyOpenCL on the same OpenCL device (PoCL on the CPU machine), for the figures xgpu's benchmarks
compare with. Same counting as xgpu: inputs read once, outputs written once; median of timed runs
after a warm-up. Run with Debian's python3 (python3-pyopencl): /usr/bin/python3 pyopencl_bench.py [n]
"""
import sys
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.elementwise as clew


def gbs(queue, nbytes, fn, reps=9):
    for _ in range(2):
        fn()
    queue.finish()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        queue.finish()
        times.append(time.perf_counter() - t0)
    return nbytes / (np.median(times) * 1e9)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 25
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx)
    print(f"pyopencl {cl.VERSION_TEXT} on {ctx.devices[0].name}, n = {n}\n")
    print("| work (PyOpenCL) | GB/s |\n|---|---|")
    rng = np.random.default_rng(1)
    x = cla.to_device(q, rng.random(n))
    y = cla.to_device(q, rng.random(n))
    z = cla.empty_like(x)
    axpy = clew.ElementwiseKernel(ctx, "double a, double *x, double b, double *y, double *z",
                                  "z[i] = a*x[i] + b*y[i]", "axpy")
    print(f"| fused `z = a*x + b*y` f64 (ElementwiseKernel) | {gbs(q, 24 * n, lambda: axpy(2.5, x, -0.5, y, z)):.1f} |")
    print(f"| sum f64 | {gbs(q, 8 * n, lambda: cla.sum(x)):.1f} |")
    print(f"| max f64 | {gbs(q, 8 * n, lambda: cla.max(x)):.1f} |")
    print(f"| dot f64 | {gbs(q, 16 * n, lambda: cla.dot(x, y)):.1f} |")
    print(f"| norm f64 (sqrt(dot(x, x))) | {gbs(q, 8 * n, lambda: cla.dot(x, x).get() ** 0.5):.1f} |")


if __name__ == "__main__":
    main()
