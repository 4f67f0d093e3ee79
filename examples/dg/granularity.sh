#!/bin/sh
# The volume kernel's granularity on the selected device (XGPU_BACKEND / XGPU_DEVICE): for each
# order, nodes per work-item (NPW) 1, 2, 3, 4, 6, then matrix rows in registers over VB = 1, 4, 16
# batches (NPW 1; VB 0 is the first kernel), each with volume work-groups of about 64, 128 and 256
# work-items, then the matrices as constants with an element's nodes split among 1, 2 or 4
# work-items (VB shown as E, NPW the nodes each) over groups of 32-128 elements, then the tiled
# kernel (NPW nodes of u elements a work-item, VB shown as Tu) over 32 elements a group, then the
# tensor-core kernel (VB shown as Mb: b batches a group; form 3 in f64, form 4 in f32; NVIDIA
# devices of compute capability 8.0 and later, either backend; skipped elsewhere) over 16-64
# elements a group, the volume kernel's ms per call and GFLOP/s as dg prints them (device events,
# flops counted from the algorithm), on a mesh of about 2 million degrees of freedom; one Markdown row
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
    for wb in 1:0 2:0 3:0 4:0 6:0 1:1 1:4 1:16 1:E 2:E 4:E 2:T1 2:T2 4:T1 4:T2 3:T2 2:T4 1:M1 1:M2 1:M4; do
        w=${wb%:*}
        b=${wb#*:}
        [ "$w" -le "$np" ] || continue
        per=$(( (np + w - 1) / w ))
        # E: w is the number of work-items an element (parts), each ceil(NP / w) nodes.
        [ "$b" = E ] && per=$w w=$(( (np + w - 1) / w ))
        form="--volume-batches $b"
        sizes="64 128 256"
        # E: the matrices as constants (form 1), an element split among `per` work-items of NPW
        # nodes each; Tu: tiled (form 2), NPW nodes of u elements per work-item. The VB column
        # shows E or Tu.
        case $b in
        E) form="--volume-form 1" sizes="32 64 128" ;;
        T*) form="--volume-form 2 --volume-elements-per-item ${b#T}" sizes=32 ;;
        M*) # form 3 in f64, form 4 (three TF32 products) in f32
            mform=3
            [ "$precision" = f32 ] && mform=4
            form="--volume-form $mform --volume-batches ${b#M}" sizes="16 32 64" ;;
        esac
        for g in $sizes; do
            e=$(( (g + per - 1) / per ))
            items=$(( e * per ))
            case $b in
            E) e=$g items=$(( g * per )) ;;
            T*) e=$g items=$(( g / ${b#T} * per )) ;;
            M*) e=$g items=$(( 4 * g )) ;; # a warp per 8 elements
            esac
            # shellcheck disable=SC2086
            out=$("$dg" --order "$n" --mesh "$m" --final-time 0.004 --precision "$precision" \
                --nodes-per-item "$w" --volume-elements-per-group "$e" $form 2>&1) || {
                # A shape the device refuses (registers: matrix rows at high orders) is skipped.
                echo "granularity.sh: N=$n NPW=$w VB=$b, $items work-items: $(printf '%s\n' "$out" | grep -m1 'dg: ')" >&2
                continue
            }
            line=$(printf '%s\n' "$out" | awk '$1 == "volume" { print $3, $4 }')
            rows="$rows$n $w $b $items $line
"
        done
    done
    printf '%s' "$rows" | sort -k5,5g | awk 'NR == 1 { best = "fastest" } NR > 1 { best = "" }
        { printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, best }'
done
