#!/usr/bin/env python3
"""Render one field of a dg VTK file (examples/dg, `dg --vtk DIR`) into a PNG.

The file is the legacy-VTK ASCII unstructured grid that examples/dg/vtk.cpp writes: the
elements' nodes as points (element-major, Np = (N+1)(N+2)/2 per element), each element cut into
the N^2 triangles of its nodal lattice, and point data Hx, Hy, Ez. The field is drawn on those
triangles, linearly within each (what ParaView shows), as filled contours or smoothly shaded.

    python3 examples/dg/render.py out/dg_0100.vtk dg-ez.png [--field Ez] [--dpi 100]

Needs numpy and matplotlib (Debian: python3-numpy, python3-matplotlib); nothing else.
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

FIELDS = ("Hx", "Hy", "Ez")


class VtkError(Exception):
    """The file is missing, unreadable or not the VTK that dg writes."""


def read_vtk(path):
    """Return a dict with the points (n x 2), triangles (c x 3), point fields, title, order, time."""
    try:
        with open(path, encoding="ascii") as f:
            text = f.read()
    except OSError as e:
        raise VtkError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise VtkError(f"{path}: not an ASCII legacy-VTK file") from None

    lines = text.split("\n", 3)
    if len(lines) < 4 or not lines[0].startswith("# vtk DataFile Version"):
        raise VtkError(f"{path}: not a legacy-VTK file (no '# vtk DataFile Version' header)")
    title = lines[1].strip()
    if lines[2].strip().upper() != "ASCII":
        raise VtkError(f"{path}: only ASCII legacy VTK is read (dg writes ASCII), found {lines[2].strip()!r}")
    tokens = lines[3].split()
    pos = 0

    def take(count, what):
        nonlocal pos
        if pos + count > len(tokens):
            raise VtkError(f"{path}: truncated in {what}")
        chunk = tokens[pos:pos + count]
        pos += count
        return chunk

    def numbers(count, dtype, what):
        try:
            return np.array(take(count, what), dtype=dtype)
        except ValueError:
            raise VtkError(f"{path}: a non-number in {what}") from None

    def count_of(token, what):
        try:
            value = int(token)
        except ValueError:
            raise VtkError(f"{path}: {what}: expected a count, found {token!r}") from None
        if value < 0:
            raise VtkError(f"{path}: {what}: negative count {value}")
        return value

    points = cells = None
    fields = {}
    npoint_data = None
    while pos < len(tokens):
        key = take(1, "a section name")[0].upper()
        if key == "DATASET":
            kind = take(1, "DATASET")[0].upper()
            if kind != "UNSTRUCTURED_GRID":
                raise VtkError(f"{path}: DATASET {kind}, expected UNSTRUCTURED_GRID")
        elif key == "POINTS":
            n = count_of(take(2, "POINTS")[0], "POINTS")
            points = numbers(3 * n, float, "POINTS").reshape(n, 3)
        elif key == "CELLS":
            c, size = (count_of(t, "CELLS") for t in take(2, "CELLS"))
            if size != 4 * c:
                raise VtkError(f"{path}: CELLS {c} {size}: only triangles are read (size 4 per cell)")
            cells = numbers(size, np.int64, "CELLS").reshape(c, 4)
            if c and (cells[:, 0] != 3).any():
                raise VtkError(f"{path}: a cell that is not a triangle")
            cells = cells[:, 1:]
        elif key == "CELL_TYPES":
            c = count_of(take(1, "CELL_TYPES")[0], "CELL_TYPES")
            types = numbers(c, np.int64, "CELL_TYPES")
            if (types != 5).any():
                raise VtkError(f"{path}: a cell type other than 5 (VTK_TRIANGLE)")
        elif key == "POINT_DATA":
            npoint_data = count_of(take(1, "POINT_DATA")[0], "POINT_DATA")
        elif key == "SCALARS":
            name, _, ncomp = take(3, "SCALARS")
            if ncomp != "1":
                raise VtkError(f"{path}: SCALARS {name} with {ncomp} components, expected 1")
            lookup = take(2, "LOOKUP_TABLE")
            if lookup[0].upper() != "LOOKUP_TABLE":
                raise VtkError(f"{path}: SCALARS {name} without LOOKUP_TABLE")
            if npoint_data is None:
                raise VtkError(f"{path}: SCALARS {name} before POINT_DATA")
            fields[name] = numbers(npoint_data, float, f"SCALARS {name}")
        else:
            raise VtkError(f"{path}: unexpected section {key!r} (not a file dg writes?)")

    if points is None or cells is None:
        raise VtkError(f"{path}: no POINTS or no CELLS")
    n = len(points)
    if npoint_data is not None and npoint_data != n:
        raise VtkError(f"{path}: POINT_DATA {npoint_data} for {n} points")
    if not np.isfinite(points).all():
        raise VtkError(f"{path}: a point with a non-finite coordinate")
    if len(cells) and (cells.min() < 0 or cells.max() >= n):
        raise VtkError(f"{path}: a cell refers to a point that does not exist")

    # dg's title line: "xgpu dg Maxwell TM, order N, t = T".
    order = time = None
    match = re.search(r"order\s+(\d+)", title)
    if match:
        order = int(match.group(1))
    match = re.search(r"t\s*=\s*([-+0-9.eE]+)", title)
    if match:
        try:
            time = float(match.group(1))
        except ValueError:
            time = None
    return {"points": points[:, :2], "triangles": cells, "fields": fields, "title": title,
            "order": order, "time": time}


def describe(data):
    """Order, mesh and time for the plot's title, as far as the file tells them."""
    parts = []
    order = data["order"]
    if order:
        parts.append(f"order {order}")
        np_ = (order + 1) * (order + 2) // 2
        n = len(data["points"])
        if n % np_ == 0:
            k = n // np_
            m = math.isqrt(k // 2)
            if 2 * m * m == k:
                parts.append(f"mesh {m} x {m} ({k} elements)")
            else:
                parts.append(f"{k} elements")
    if data["time"] is not None:
        parts.append(f"t = {data['time']:.4g}")
    return ", ".join(parts) if parts else data["title"]


def element_edges(data):
    """The straight edges of dg's elements as (e x 2 x 2) segments: an element's vertices are its
    local nodes 0, N and Np - 1 (the lattice's corners, numbered row by row as vtk.cpp says)."""
    order = data["order"]
    n = len(data["points"])
    if not order:
        raise VtkError("--elements: the file's title gives no order")
    np_ = (order + 1) * (order + 2) // 2
    if n % np_:
        raise VtkError(f"--elements: {n} points are not whole elements of {np_} nodes")
    corners = np.arange(0, n, np_)[:, None] + np.array([0, order, np_ - 1])
    pairs = corners[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    xy = data["points"]
    # An interior edge comes twice (once per element, other nodes): keep one, keyed by its rounded
    # end points (x0, y0, x1, y1), ordered so that (x0, y0) < (x1, y1).
    ends = np.round(xy[pairs], 9).reshape(-1, 4)
    swap = (ends[:, 0] > ends[:, 2]) | ((ends[:, 0] == ends[:, 2]) & (ends[:, 1] > ends[:, 3]))
    ends[swap] = ends[swap][:, [2, 3, 0, 1]]
    return np.unique(ends, axis=0).reshape(-1, 2, 2)


def render(data, args):
    """Draw data's field args.field into the PNG args.output."""
    field = args.field
    if field not in data["fields"]:
        have = ", ".join(data["fields"]) or "none"
        raise VtkError(f"the file has no point data {field} (it has: {have})")
    values = data["fields"][field]
    if not np.isfinite(values).all():
        raise VtkError(f"{field} has non-finite values (nan or inf): did the run blow up?")
    if len(data["triangles"]) == 0:
        raise VtkError("the file has no triangles to draw")
    try:
        cmap = matplotlib.colormaps[args.cmap]
    except KeyError:
        raise VtkError(f"no matplotlib colormap {args.cmap!r}") from None
    edges = element_edges(data) if args.elements else None
    xy = data["points"]
    tri = mtri.Triangulation(xy[:, 0], xy[:, 1], data["triangles"])
    # Symmetric limits: the fields are signed waves, zero sits at the colormap's middle.
    limit = float(np.max(np.abs(values))) or 1.0

    fig, ax = plt.subplots(figsize=tuple(args.size), dpi=args.dpi, layout="constrained")
    if args.levels:
        image = ax.tricontourf(tri, values, levels=np.linspace(-limit, limit, args.levels + 1), cmap=cmap)
    else:
        image = ax.tripcolor(tri, values, shading="gouraud", cmap=cmap, vmin=-limit, vmax=limit)
    if edges is not None:
        ax.add_collection(LineCollection(edges, colors="black", linewidths=0.4, alpha=0.25))
    ax.set_aspect("equal")
    ax.margins(0)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(f"{field}, {describe(data)}")
    bar = fig.colorbar(image, ax=ax, label=field, shrink=0.9)
    bar.locator = MaxNLocator(nbins=8, symmetric=True)
    bar.update_ticks()
    try:
        fig.savefig(args.output, dpi=args.dpi)
    except OSError as e:
        raise VtkError(f"cannot write {args.output}: {e.strerror or e}") from None
    finally:
        plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Render one field of a dg VTK file (dg --vtk DIR) into a PNG.")
    parser.add_argument("input", help="a VTK file written by dg --vtk, e.g. out/dg_0100.vtk")
    parser.add_argument("output", help="the PNG to write")
    parser.add_argument("--field", choices=FIELDS, default="Ez", help="the field to draw (default: Ez)")
    parser.add_argument("--dpi", type=int, default=100, help="dots per inch (default: 100)")
    parser.add_argument("--size", type=float, nargs=2, default=(8.0, 7.0), metavar=("W", "H"),
                        help="figure size in inches (default: 8 7, 800 x 700 pixels at 100 dpi)")
    parser.add_argument("--cmap", default="viridis",
                        help="a matplotlib colormap (default: viridis, perceptually uniform)")
    parser.add_argument("--levels", type=int, default=32,
                        help="filled contour levels (default: 32); 0: smooth (Gouraud) shading")
    parser.add_argument("--elements", action="store_true", help="draw the elements' edges")
    args = parser.parse_args(argv)
    if args.dpi < 1:
        parser.error("--dpi must be positive")
    if args.levels < 0:
        parser.error("--levels must be 0 or positive")
    if min(args.size) <= 0:
        parser.error("--size must be positive")
    matplotlib.use("Agg")  # files only, no display needed
    try:
        data = read_vtk(args.input)
        render(data, args)
    except VtkError as e:
        print(f"render.py: {e}", file=sys.stderr)
        return 1
    print(f"render.py: {args.field} of {args.input} ({describe(data)}) -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
