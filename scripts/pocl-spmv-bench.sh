#!/usr/bin/env bash
# pocl-spmv-bench.sh: SpMV on PoCL against its peer, measured in one run on an otherwise idle machine:
# spmv-bench on the 2-D Poisson matrix (its table starts with the DRAM triad, timed in the same
# interleaved rounds as the formats) and ViennaCL's SpMV (bench/peers/viennacl_spmv.cpp), run
# alternately `repeats` times; then one table of each format's GB/s (median over the repeats) as a
# share of the same repeat's triad (target >= 0.7 for the automatic choice) and against ViennaCL's
# (target >= 2.5x), the latter also against ViennaCL's fastest repeat (the conservative figure:
# a shared machine's speed drifts between repeats, so a repeat's ratios are taken within it).
#
#   scripts/pocl-spmv-bench.sh [N] [repeats]     (defaults 1024 3)
#
# BUILD (default build) holds bench/spmv-bench and bench/viennacl-spmv; XGPU_BACKEND defaults to
# opencl. The load average is printed before and after: another process disturbs every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1024}
REPS=${2:-3}
BUILD=${BUILD:-build}
export XGPU_BACKEND=${XGPU_BACKEND:-opencl}
BENCH=$BUILD/bench/spmv-bench
PEER=$BUILD/bench/viennacl-spmv
for f in "$BENCH" "$PEER"; do
    [[ -x $f ]] || { echo "pocl-spmv-bench: $f is not built (ViennaCL's peer needs libviennacl-dev)" >&2; exit 1; }
done

# Idleness: the CPU's idle share over 3 s (this script's own runs raise the load average).
idle() { vmstat 3 2 | tail -1 | awk '{print $15 "% idle over 3 s"}'; }
echo "before: $(idle), load average $(cut -d' ' -f1-3 /proc/loadavg)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((r = 0; r < REPS; r++)); do
    "$BENCH" --n "$N" --p 0 >"$tmp/xgpu.$r"
    "$PEER" "$N" 2>/dev/null >"$tmp/vcl.$r"
    cat "$tmp/xgpu.$r" "$tmp/vcl.$r"
done
echo "after: $(idle), load average $(cut -d' ' -f1-3 /proc/loadavg)"

# rows "name gbps" of one repeat: the triad, each spmv row (by the format asked for), the stencil
rows() {
    awk -F'|' '
        /^\| triad/ { printf "triad %s\n", $4 }
        /^\| spmv / { split($2, w, " "); printf "%s %s\n", w[2], $4 }
        /^\| matrix-free 5-point stencil \(/ { printf "stencil %s\n", $4 }' "$1"
}
for ((r = 0; r < REPS; r++)); do
    rows "$tmp/xgpu.$r" | sed "s/^/$r /"
    echo "$r viennacl $(sed -n 's/^result: viennacl_spmv_gbps=//p' "$tmp/vcl.$r")"
done >"$tmp/all"

echo
echo "2-D Poisson ${N}^2 f64, SpMV GB/s (values, indices, row pointers, x, y counted once): median over $REPS repeats (min-max)"
echo
echo "| row | GB/s | min-max | of the same repeat's triad (target >= 0.7) | x ViennaCL's SpMV of the same repeat (target >= 2.5) | x ViennaCL's fastest repeat |"
echo "|---|---|---|---|---|---|"
awk '
    { g[$1, $2] = $3; if (!($2 in seen)) { seen[$2] = 1; order[++k] = $2 } if ($1 + 1 > reps) reps = $1 + 1 }
    function med(a, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return a[int((n + 1) / 2)]
    }
    END {
        best = 0
        for (r = 0; r < reps; r++) if (g[r, "viennacl"] > best) best = g[r, "viennacl"]
        for (i = 1; i <= k; i++) {
            name = order[i]
            for (r = 0; r < reps; r++) { v[r + 1] = g[r, name]; s[r + 1] = g[r, name] / g[r, "triad"]; x[r + 1] = g[r, name] / g[r, "viennacl"] }
            m = med(v, reps); lo = v[1]; hi = v[reps]
            share = (name == "triad") ? "" : sprintf("%.2f", med(s, reps))
            ratio = (name == "triad" || name == "viennacl") ? "" : sprintf("%.2f", med(x, reps))
            vsbest = (name == "triad" || name == "viennacl") ? "" : sprintf("%.2f", m / best)
            printf "| %s | %.1f | %.1f-%.1f | %s | %s | %s |\n", name, m, lo, hi, share, ratio, vsbest
        }
    }' "$tmp/all"
