#!/bin/sh
# The volume kernel's granularity on the selected device (XGPU_BACKEND / XGPU_DEVICE): for each
# order, nodes per work-item (NPW) 1, 2, 3, 4, 6, then matrix rows in registers over VB = 1, 4, 16
# batches (NPW 1; VB 0 is the first kernel), each with volume work-groups of about 64, 128 and 256
# work-items, the volume kernel's ms per call and GFLOP/s as dg prints them (device events, flops
# counted from the algorithm), on a mesh of about 2 million degrees of freedom; one Markdown row
# per variant, the fastest per order marked. Use it to choose default_volume_shape
# (examples/dg/device.cpp) for a device.
#
#   examples/dg/granularity.sh [path/to/dg] [precision] [orders...]
#   (defaults: build/examples/dg/dg, f64, orders 3 4 5 6 7)
set -eu
dg=${1:-build/examples/dg/dg}
precision=${2:-f64}
[ $# -ge 2 ] && shift 2 || shift $#
orders=${*:-3 4 5 6 7}
[ -x "$dg" ] || { echo "granularity.sh: $dg is not an executable (build the dg_main target first)" >&2; exit 1; }

echo "| N | NPW | VB | work-items per group | volume ms | GFLOP/s | |"
echo "|---|---|---|---|---|---|---|"
for n in $orders; do
    np=$(( (n + 1) * (n + 2) / 2 ))
    # M with 3 * 2 M^2 * np close to 2 million.
    m=$(awk -v np="$np" 'BEGIN { printf "%d", sqrt(2000000 / (6 * np)) + 0.5 }')
    rows=""
    for wb in 1:0 2:0 3:0 4:0 6:0 1:1 1:4 1:16; do
        w=${wb%:*}
        b=${wb#*:}
        [ "$w" -le "$np" ] || continue
        per=$(( (np + w - 1) / w ))
        for g in 64 128 256; do
            e=$(( (g + per - 1) / per ))
            out=$("$dg" --order "$n" --mesh "$m" --final-time 0.004 --precision "$precision" \
                --nodes-per-item "$w" --volume-elements-per-group "$e" --volume-batches "$b" 2>&1) || {
                # A shape the device refuses (registers: matrix rows at high orders) is skipped.
                echo "granularity.sh: N=$n NPW=$w VB=$b, $(( e * per )) work-items: $(printf '%s\n' "$out" | grep -m1 'dg: ')" >&2
                continue
            }
            line=$(printf '%s\n' "$out" | awk '$1 == "volume" { print $3, $4 }')
            rows="$rows$n $w $b $(( e * per )) $line
"
        done
    done
    printf '%s' "$rows" | sort -k5,5g | awk 'NR == 1 { best = "fastest" } NR > 1 { best = "" }
        { printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, best }'
done
