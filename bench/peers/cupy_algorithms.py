"""The CuPy peer of algorithm-bench: cupy.sort of uint32, float32 and uint64 keys, cupy.argsort of
float32, rows of 64 float32 sorted along the last axis, cupy.unique with counts, cupy.histogram,
and sum and max of a square float32 matrix along each axis, the same sizes; medians of timed runs
after a warm-up, CUDA events.

    python3 bench/peers/cupy_algorithms.py [n]
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
    print(f"cupy-algorithms: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cp.__version__}\n")
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
    del rows

    print("\n| work | elements | ms | GB/s |\n|---|---|---|---|")

    def gbs(work, elements, nbytes, ms):
        print(f"| CuPy {work} | {elements} | {ms:.3f} | {nbytes / (ms * 1e6):.0f} |")

    k = rng.integers(0, 1 << 16, m, dtype=cp.int32)
    gbs("unique int32, 2^16 values, return_counts", m, 4 * m, median_ms(lambda: cp.unique(k, return_counts=True)))
    del k
    x = rng.random(n, dtype=cp.float32)
    gbs("histogram float32, 256 bins", n, 4 * n, median_ms(lambda: cp.histogram(x, 256, range=(0, 1))))
    del x
    side = int(round(n ** 0.5))
    a = rng.random((side, side), dtype=cp.float32)
    for axis in (0, 1):
        gbs(f"sum float32 {side}^2 along axis {axis}", side * side, 4 * side * side,
            median_ms(lambda: a.sum(axis=axis)))
        gbs(f"max float32 {side}^2 along axis {axis}", side * side, 4 * side * side,
            median_ms(lambda: a.max(axis=axis)))


if __name__ == "__main__":
    main()
