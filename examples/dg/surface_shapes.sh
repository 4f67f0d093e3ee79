#!/bin/sh
# The surface kernel's work-group on the selected device (XGPU_BACKEND / XGPU_DEVICE): for each
# order, elements per work-group (E), LIFT read from memory (batches B = 0) or its rows in
# registers over B = 1-4 batches of E elements, and the face fluxes read back from local memory a
# value (V = 0) or 16 bytes (V = 1) at a time, on a mesh of about 2 million degrees of freedom;
# the surface kernel's ms per call and GB/s as dg prints them (device events, bytes counted from
# the algorithm), one Markdown row per shape, the fastest per order marked. Shapes over 256
# work-items are left out (NVIDIA's OpenCL takes no more for this kernel). Use it to choose
# default_surface_shape (examples/dg/device.cpp) for a device.
#
#   examples/dg/surface_shapes.sh [path/to/dg] [precision] [orders...]
#   (defaults: build/examples/dg/dg, f64, orders 4 5 6 7; DG_ELEMENTS="2 4 6 9 12 17" and
#   DG_BATCHES="0 1 2 3 4" narrow or widen the sweep, DG_FINAL_TIME its length)
set -eu
dg=${1:-build/examples/dg/dg}
precision=${2:-f64}
[ $# -ge 2 ] && shift 2 || shift $#
orders=${*:-4 5 6 7}
[ -x "$dg" ] || { echo "surface_shapes.sh: $dg is not an executable (build the dg_main target first)" >&2; exit 1; }

echo "| N | E | B | V | work-items per group | surface ms | GB/s | |"
echo "|---|---|---|---|---|---|---|---|"
for n in $orders; do
    np=$(( (n + 1) * (n + 2) / 2 ))
    # M with 3 * 2 M^2 * np close to 2 million.
    m=${DG_MESH:-$(awk -v np="$np" 'BEGIN { printf "%d", sqrt(2000000 / (6 * np)) + 0.5 }')}
    rows=""
    for e in ${DG_ELEMENTS:-2 4 6 9 12 17}; do
        items=$(( e * np ))
        [ "$items" -le 256 ] || continue
        for b in ${DG_BATCHES:-0 1 2 3 4}; do
            for v in 0 1; do
                out=$("$dg" --order "$n" --mesh "$m" --final-time "${DG_FINAL_TIME:-0.004}" --precision "$precision" \
                    --elements-per-group "$e" --surface-batches "$b" --surface-vector "$v" 2>&1) || {
                    echo "surface_shapes.sh: N=$n E=$e B=$b V=$v: $(printf '%s\n' "$out" | grep -m1 'dg: ')" >&2
                    continue
                }
                line=$(printf '%s\n' "$out" | awk '$1 == "surface" { print $3, $5 }')
                rows="$rows$n $e $b $v $items $line
"
            done
        done
    done
    printf '%s' "$rows" | sort -k6,6g | awk 'NR == 1 { best = "fastest" } NR > 1 { best = "" }
        { printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, best }'
done
