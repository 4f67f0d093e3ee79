"""The CPU peers of algorithm-bench's sort of uint32 keys: PyOpenCL's RadixSort on the OpenCL
device PyOpenCL picks (PoCL here; Debian's python3-pyopencl) and numpy.sort(kind="stable"), the
same keys; medians of timed runs after a warm-up, wall time (PyOpenCL: until its result is done).

    /usr/bin/python3 bench/peers/pyopencl_sort.py [n]
"""
import sys
import time

import numpy as np


def median_s(work, reps=5):
    work()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    keys = np.random.default_rng(3).integers(0, 1 << 32, n, dtype=np.uint32)
    print("| work | keys | ms | GKeys/s |\n|---|---|---|---|")
    s = median_s(lambda: np.sort(keys, kind="stable"))
    print(f"| numpy.sort(kind='stable') uint32 | {n} | {s * 1e3:.1f} | {n / s / 1e9:.3f} |")
    try:
        import pyopencl as cl
        import pyopencl.array as cla
        from pyopencl.algorithm import RadixSort
    except ImportError as e:
        print(f"| PyOpenCL RadixSort | not run: {e} | | |")
        return
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    sort = RadixSort(ctx, "unsigned int *ary", key_expr="ary[i]", sort_arg_names=["ary"], key_dtype=np.uint32)
    d = cla.to_device(queue, keys)

    def run():
        (out,), event = sort(d, key_bits=32)
        event.wait()

    s = median_s(run)
    print(f"| PyOpenCL RadixSort uint32 ({ctx.devices[0].name.strip()}) | {n} | {s * 1e3:.1f} | {n / s / 1e9:.3f} |")


if __name__ == "__main__":
    main()
