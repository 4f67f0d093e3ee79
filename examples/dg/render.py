#!/usr/bin/env python3
"""Draw one field of a dg VTK file (`dg --vtk DIR`) into a PNG: 32 filled contours on the file's
triangles (each element cut into the N^2 triangles of its nodal lattice). Needs numpy and matplotlib
(Debian: python3-numpy, python3-matplotlib).

    python3 examples/dg/render.py out/dg_0100.vtk dg-ez.png [--field Ez] [--dpi 100]
"""

import argparse
import math
import re
import sys

try:
    import matplotlib
    import matplotlib.pyplot as plt
    import matplotlib.tri as mtri
    import numpy as np
    from matplotlib.ticker import MaxNLocator
except ImportError as missing:
    sys.exit(f"render.py: {missing.name} is needed (Debian: python3-matplotlib python3-numpy)")


def read_vtk(path, field):
    """The points (n x 2), triangles (c x 3) and values of `field` of a file dg wrote, and what it shows."""
    with open(path, encoding="ascii") as f:
        lines = f.read().split("\n", 3)
    title = re.fullmatch(r"xgpu dg Maxwell TM, order (\d+), t = (\S+)", lines[1]) if len(lines) == 4 else None
    if not title or lines[2] != "ASCII":
        raise ValueError("not a legacy-VTK file that dg wrote")
    words = lines[3].split()

    def block(key, skip, count, dtype=float):  # `count` numbers, `skip` words after `key`
        start = words.index(key) + skip
        return np.array(words[start:start + count], dtype)

    n, c = (int(words[words.index(key) + 1]) for key in ("POINTS", "CELLS"))
    points = block("POINTS", 3, 3 * n).reshape(n, 3)[:, :2]  # POINTS n double, then x y z a point
    triangles = block("CELLS", 3, 4 * c, np.int64).reshape(c, 4)[:, 1:]  # CELLS c 4c, then 3 i j k a cell
    values = block(field, 5, n)  # SCALARS field double 1 LOOKUP_TABLE default, then a value a point
    order = int(title.group(1))
    k = n // ((order + 1) * (order + 2) // 2)
    m = math.isqrt(k // 2)
    mesh = f"mesh {m} x {m} ({k} elements)" if 2 * m * m == k else f"{k} elements"
    return points, triangles, values, f"order {order}, {mesh}, t = {float(title.group(2)):.4g}"


def main():
    parser = argparse.ArgumentParser(description="Draw one field of a dg VTK file (dg --vtk DIR) into a PNG.")
    parser.add_argument("input", help="a VTK file written by dg --vtk, e.g. out/dg_0100.vtk")
    parser.add_argument("output", help="the PNG to write")
    parser.add_argument("--field", choices=("Hx", "Hy", "Ez"), default="Ez", help="the field (default: Ez)")
    parser.add_argument("--dpi", type=int, default=100, help="dots per inch (default: 100)")
    args = parser.parse_args()
    matplotlib.use("Agg")  # files only, no display needed
    try:
        xy, triangles, values, about = read_vtk(args.input, args.field)
        limit = float(np.max(np.abs(values))) or 1.0  # symmetric: zero at the colormap's middle
        fig, ax = plt.subplots(figsize=(8.0, 7.0), dpi=args.dpi, layout="constrained")
        tri = mtri.Triangulation(xy[:, 0], xy[:, 1], triangles)
        image = ax.tricontourf(tri, values, levels=np.linspace(-limit, limit, 33), cmap="viridis")
        ax.set_aspect("equal")
        ax.margins(0)
        ax.set(xlabel="x", ylabel="y", title=f"{args.field}, {about}")
        bar = fig.colorbar(image, ax=ax, label=args.field, shrink=0.9)
        bar.locator = MaxNLocator(nbins=8, symmetric=True)
        bar.update_ticks()
        fig.savefig(args.output, dpi=args.dpi)
    except (OSError, ValueError, IndexError) as e:
        print(f"render.py: {args.input}: {e}", file=sys.stderr)
        return 1
    print(f"render.py: {args.field} of {args.input} ({about}) -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
