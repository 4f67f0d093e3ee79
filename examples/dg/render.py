#!/usr/bin/env python3
"""Render one field of a dg VTK file (`dg --vtk DIR`, written by examples/dg/vtk.cpp) into a PNG.

The file holds the elements' nodes as points (element-major, Np = (N+1)(N+2)/2 an element), each
element cut into the N^2 triangles of its nodal lattice, and the point data Hx, Hy, Ez. The field
is drawn on those triangles, linearly within each (what ParaView shows).

    python3 examples/dg/render.py out/dg_0100.vtk dg-ez.png [--field Ez] [--dpi 100] [--elements]

Needs numpy and matplotlib (Debian: python3-numpy, python3-matplotlib).
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
    from matplotlib.collections import LineCollection
    from matplotlib.ticker import MaxNLocator
except ImportError as missing:
    sys.exit(f"render.py: {missing.name} is needed (Debian: python3-matplotlib python3-numpy)")


def read_vtk(path):
    """The points (n x 2), triangles (c x 3), fields by name, order and time of a file dg wrote."""
    with open(path, encoding="ascii") as f:
        lines = f.read().split("\n", 3)
    if len(lines) < 4 or not lines[0].startswith("# vtk DataFile Version") or lines[2].strip() != "ASCII":
        raise ValueError(f"{path}: not an ASCII legacy-VTK file")
    tokens, pos, data = lines[3].split(), 0, {"fields": {}}
    while pos < len(tokens):
        key = tokens[pos].upper()
        if key == "POINTS":
            n = int(tokens[pos + 1])
            data["points"] = np.array(tokens[pos + 3:pos + 3 + 3 * n], float).reshape(n, 3)[:, :2]
            pos += 3 + 3 * n
        elif key == "CELLS":
            c = int(tokens[pos + 1])
            data["triangles"] = np.array(tokens[pos + 3:pos + 3 + 4 * c], np.int64).reshape(c, 4)[:, 1:]
            pos += 3 + 4 * c
        elif key == "CELL_TYPES":
            pos += 2 + int(tokens[pos + 1])
        elif key == "SCALARS":  # SCALARS name double 1 LOOKUP_TABLE default, then a value a point
            n = len(data["points"])
            data["fields"][tokens[pos + 1]] = np.array(tokens[pos + 6:pos + 6 + n], float)
            pos += 6 + n
        else:  # DATASET UNSTRUCTURED_GRID, POINT_DATA n
            pos += 2
    title = lines[1]
    order, time = re.search(r"order\s+(\d+)", title), re.search(r"t\s*=\s*([-+0-9.eE]+)", title)
    data["order"] = int(order.group(1)) if order else None
    data["time"] = float(time.group(1)) if time else None
    return data


def describe(data):
    """Order, mesh and time, for the title."""
    order, n = data["order"], len(data["points"])
    np_ = (order + 1) * (order + 2) // 2
    k = n // np_
    m = math.isqrt(k // 2)
    mesh = f"mesh {m} x {m} ({k} elements)" if 2 * m * m == k else f"{k} elements"
    return f"order {order}, {mesh}, t = {data['time']:.4g}"


def element_edges(data):
    """The elements' straight edges, each once: an element's vertices are its nodes 0, N, Np - 1."""
    order, n = data["order"], len(data["points"])
    np_ = (order + 1) * (order + 2) // 2
    corners = np.arange(0, n, np_)[:, None] + np.array([0, order, np_ - 1])
    ends = np.round(data["points"][corners[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)], 9).reshape(-1, 4)
    swap = (ends[:, 0] > ends[:, 2]) | ((ends[:, 0] == ends[:, 2]) & (ends[:, 1] > ends[:, 3]))
    ends[swap] = ends[swap][:, [2, 3, 0, 1]]
    return np.unique(ends, axis=0).reshape(-1, 2, 2)


def render(data, args):
    values, xy = data["fields"][args.field], data["points"]
    tri = mtri.Triangulation(xy[:, 0], xy[:, 1], data["triangles"])
    limit = float(np.max(np.abs(values))) or 1.0  # symmetric: zero at the colormap's middle
    fig, ax = plt.subplots(figsize=(8.0, 7.0), dpi=args.dpi, layout="constrained")
    if args.levels:
        image = ax.tricontourf(tri, values, levels=np.linspace(-limit, limit, args.levels + 1), cmap="viridis")
    else:
        image = ax.tripcolor(tri, values, shading="gouraud", cmap="viridis", vmin=-limit, vmax=limit)
    if args.elements:
        ax.add_collection(LineCollection(element_edges(data), colors="black", linewidths=0.4, alpha=0.25))
    ax.set_aspect("equal")
    ax.margins(0)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(f"{args.field}, {describe(data)}")
    bar = fig.colorbar(image, ax=ax, label=args.field, shrink=0.9)
    bar.locator = MaxNLocator(nbins=8, symmetric=True)
    bar.update_ticks()
    fig.savefig(args.output, dpi=args.dpi)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description="Render one field of a dg VTK file (dg --vtk DIR) into a PNG.")
    parser.add_argument("input", help="a VTK file written by dg --vtk, e.g. out/dg_0100.vtk")
    parser.add_argument("output", help="the PNG to write")
    parser.add_argument("--field", choices=("Hx", "Hy", "Ez"), default="Ez", help="the field (default: Ez)")
    parser.add_argument("--dpi", type=int, default=100, help="dots per inch (default: 100)")
    parser.add_argument("--levels", type=int, default=32, help="contour levels (default: 32); 0: smooth shading")
    parser.add_argument("--elements", action="store_true", help="draw the elements' edges")
    args = parser.parse_args()
    matplotlib.use("Agg")  # files only, no display needed
    try:
        data = read_vtk(args.input)
        render(data, args)
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"render.py: {args.input}: {e}", file=sys.stderr)
        return 1
    print(f"render.py: {args.field} of {args.input} ({describe(data)}) -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
