#!/usr/bin/env python3
"""The scaling model of the distributed solvers (docs/distributed.md): the time of one classic CG
iteration on P GPUs, from parameters measured on one GPU and on the ranks of one node.

    t(P) = t0 + bytes(n / P) / bw                   the local product and vector updates
         + halo(P)                                  the exchange not hidden behind the product
         + sums * (s0 + alpha + beta * log2(P))     the sums across ranks (2 per iteration)

with n the global rows, bytes(rows) the traffic of an iteration over `rows` rows (152 bytes a row
for the 5-point matrix, 176 for the 7-point one, in f64 with 32-bit indices), t0 the launch floor
of an iteration, bw the streaming rate, halo(P) = h0 + neighbours * message / link where a rank has
neighbours (contiguous rows: slabs, 2 neighbours in the middle, messages of one grid line or
plane; weak scaling grows the domain along its slowest axis so each rank keeps the same slab), s0 the
device round trip a sum makes (the local totals to the host and back), alpha + beta log2 P the
MPI_Allreduce latency. Prints the weak and strong scaling tables (markdown) and writes an SVG plot.

    python3 bench/scaling_model.py [--svg docs/scaling-model.svg] [--t0 US] [--bw GBS] [--h0 US]
        [--link GBS] [--s0 US] [--alpha US] [--beta US]
"""
import argparse
import math

P_LIST = [1, 2, 8, 64, 512, 4096]


def model(a, dims, side, P, weak):
    """us an iteration on P GPUs: weak, each GPU holds side^dims rows (the domain grows along its
    slowest axis, so each rank's contiguous rows are a slab of that size); strong, side^dims rows
    in all, split into P slabs."""
    row_bytes = 152.0 if dims == 2 else 176.0
    rows = side ** dims if weak else side ** dims / P
    local = a.t0 + rows * row_bytes / (a.bw * 1e3)  # us (GB/s = 1e3 bytes/us)
    if P == 1:
        return local
    message = 8.0 * min(side ** (dims - 1), rows)  # one grid line (2-D) or plane (3-D) a neighbour
    halo = a.h0 + 2 * message / (a.link * 1e3)
    sums = 2 * (a.s0 + a.alpha + a.beta * math.log2(P))
    return local + halo + sums


def table(a):
    lines = []
    for dims, side in ((2, 4096), (3, 256)):
        one = model(a, dims, side, 1, True)
        lines.append(f"\n{dims}-D Poisson, {side}^{dims} rows per GPU (weak) and in all (strong):\n")
        lines.append("| GPUs | weak: us an iteration | weak efficiency | strong: us an iteration | strong speed-up |")
        lines.append("|---|---|---|---|---|")
        for P in P_LIST:
            w = model(a, dims, side, P, True)
            s = model(a, dims, side, P, False)
            lines.append(f"| {P} | {w:.1f} | {one / w:.2f} | {s:.1f} | {one / s:.1f} |")
    return "\n".join(lines)


def svg(a, path):
    W, H, L, B = 640, 360, 60, 40
    series = []
    for dims, side, colour in ((2, 4096, "#1f77b4"), (3, 256, "#d62728")):
        one = model(a, dims, side, 1, True)
        series.append((f"{dims}-D weak efficiency", colour, "", [one / model(a, dims, side, P, True) for P in P_LIST]))
        series.append(
            (f"{dims}-D strong speed-up / P", colour, "6,4", [one / model(a, dims, side, P, False) / P for P in P_LIST]))
    x = lambda i: L + i * (W - L - 20) / (len(P_LIST) - 1)
    y = lambda v: H - B - v * (H - B - 20)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{L}" y1="{y(v):.1f}" x2="{W - 20}" y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.2f}</text>')
    for i, P in enumerate(P_LIST):
        out.append(f'<text x="{x(i):.1f}" y="{H - B + 18}" text-anchor="middle">{P}</text>')
    out.append(f'<text x="{(W + L) / 2:.0f}" y="{H - 4}" text-anchor="middle">GPUs (model)</text>')
    for k, (name, colour, dash, values) in enumerate(series):
        pts = " ".join(f"{x(i):.1f},{y(min(v, 1.05)):.1f}" for i, v in enumerate(values))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>')
        out.append(f'<text x="{L + 10}" y="{H - B - 10 - 16 * k}" fill="{colour}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # Defaults: the H200 and its node, as docs/distributed.md says where each comes from.
    p.add_argument("--t0", type=float, default=21.4, help="launch floor of an iteration, us")
    p.add_argument("--bw", type=float, default=4076.0, help="streaming rate of an iteration, GB/s")
    p.add_argument("--h0", type=float, default=30.0, help="fixed cost of an exchange not hidden, us")
    p.add_argument("--link", type=float, default=20.0, help="bandwidth of a halo message, GB/s")
    p.add_argument("--s0", type=float, default=25.0, help="device round trip of a sum, us")
    p.add_argument("--alpha", type=float, default=0.0, help="MPI_Allreduce latency at P = 1, us")
    p.add_argument("--beta", type=float, default=0.92, help="MPI_Allreduce latency per doubling of P, us")
    p.add_argument("--svg", help="write the plot here")
    a = p.parse_args()
    print(table(a))
    if a.svg:
        svg(a, a.svg)


if __name__ == "__main__":
    main()
