"""The CuPy peer of sort-bench: cupy.sort of uint32, float32 and uint64 keys, cupy.argsort of
float32, and rows of 64 float32 sorted along the last axis, the same sizes; medians of timed runs
after a warm-up, CUDA events.

    python3 bench/peers/cupy_sort.py [n]
"""
import sys

import cupy as cp


def median_ms(work, reps=15):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(2):
        work()
    times = []
    for _ in range(reps):
        start.record()
        work()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    times.sort()
    return times[len(times) // 2]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
    rng = cp.random.default_rng(7)
    print(f"cupy-sort: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cp.__version__}\n")
    print("| work | keys | ms | GKeys/s |\n|---|---|---|---|")

    def row(work, keys, ms):
        print(f"| CuPy {work} | {keys} | {ms:.3f} | {keys / (ms * 1e6):.2f} |")

    for dtype in ("uint32", "float32", "uint64"):
        if dtype == "float32":
            x = rng.random(n, dtype=cp.float32) * 2 - 1
        else:
            x = rng.integers(0, cp.iinfo(dtype).max, n, dtype=dtype, endpoint=True)
        row(f"sort {dtype}", n, median_ms(lambda: cp.sort(x)))
        del x
    m = n // 4
    x = rng.random(m, dtype=cp.float32) * 2 - 1
    row("argsort float32", m, median_ms(lambda: cp.argsort(x)))
    rows = rng.random((n // 256, 64), dtype=cp.float32)
    row(f"sort {n // 256} rows of 64 float32", rows.size, median_ms(lambda: cp.sort(rows, axis=-1)))


if __name__ == "__main__":
    main()
