"""CuPy on the same GPU, for the figures xgpu's benchmarks compare with (run beside them).

Same counting as xgpu: each input read once, each output written once; median of timed runs
after a warm-up, timed with CUDA events.
"""
import sys

import cupy as cp
import numpy as np


def median_ms(fn, reps=21, keep_busy=False):
    """Median milliseconds of fn() on the device, timed with CUDA events after a warm-up.
    keep_busy: each timed call is queued behind an untimed one, so the start event waits for the
    device rather than for the host (the time of a kernel, not of Python's way to it; as
    spmv-bench times xgpu's)."""
    for _ in range(3):
        fn()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        if keep_busy:
            fn()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def gbs(nbytes, fn, reps=21):
    return nbytes / (median_ms(fn, reps) * 1e6)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 27
    print(f"cupy {cp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, n = {n}\n")
    print("| work (CuPy) | GB/s |\n|---|---|")
    rng = cp.random.default_rng(1)
    for dt in (cp.float64, cp.float32):
        size = np.dtype(dt).itemsize
        x = rng.random(n, dtype=dt)
        y = rng.random(n, dtype=dt)
        z = cp.empty_like(x)
        a, b = dt(2.5), dt(-0.5)
        name = "f64" if dt == cp.float64 else "f32"
        axpy = cp.ElementwiseKernel("T a, T x, T b, T y", "T z", "z = a * x + b * y", "axpy")
        print(f"| fused `z = a*x + b*y` {name} (ElementwiseKernel) | {gbs(3 * size * n, lambda: axpy(a, x, b, y, z)):.0f} |")
        print(f"| unfused `z = a*x + b*y` {name} (3 kernels; 3 arrays counted) | {gbs(3 * size * n, lambda: a * x + b * y):.0f} |")
        print(f"| copy {name} | {gbs(2 * size * n, lambda: cp.copyto(z, x)):.0f} |")
        print(f"| sum {name} | {gbs(size * n, lambda: x.sum()):.0f} |")
        print(f"| max {name} | {gbs(size * n, lambda: x.max()):.0f} |")
        print(f"| dot {name} | {gbs(2 * size * n, lambda: cp.dot(x, y)):.0f} |")
        print(f"| norm {name} | {gbs(size * n, lambda: cp.linalg.norm(x)):.0f} |")
        del x, y, z
    # A small dot with the result on the host (latency).
    x = rng.random(10000)
    y = rng.random(10000)
    for _ in range(10):
        float(cp.dot(x, y))
    import time
    t = []
    for _ in range(200):
        t0 = time.perf_counter()
        float(cp.dot(x, y))
        t.append(time.perf_counter() - t0)
    print(f"| dot of 1e4 f64 with the result on the host | {np.median(t) * 1e6:.1f} us |")


if __name__ == "__main__":
    main()
