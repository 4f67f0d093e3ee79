#!/bin/sh
# The h-convergence table of the dg example: the L2 error of the cavity mode at the final time for
# orders 1..6 on M x M meshes, and the observed order log2(e(M/2) / e(M)) between successive
# meshes, as a Markdown table. Runs on the device XGPU_BACKEND / XGPU_DEVICE select.
#
#   examples/dg/convergence.sh [path/to/dg] [final time] [meshes...]
#   (defaults: build/examples/dg/dg, 1.0, meshes 2 4 8 16; more options through DG_ARGS,
#    e.g. DG_ARGS="--perturb 0.1 --precision f64")
set -eu
dg=${1:-build/examples/dg/dg}
final_time=${2:-1.0}
[ $# -ge 2 ] && shift 2 || shift $#
meshes=${*:-2 4 8 16}
[ -x "$dg" ] || { echo "convergence.sh: $dg is not an executable (build the dg target first)" >&2; exit 1; }

printf '| N |'
for m in $meshes; do printf ' M=%s error | order |' "$m"; done
printf '\n|---|'
for m in $meshes; do printf -- '---|---|'; done
printf '\n'
for n in 1 2 3 4 5 6; do
    printf '| %s |' "$n"
    previous=
    for m in $meshes; do
        # shellcheck disable=SC2086
        error=$("$dg" --order "$n" --mesh "$m" --final-time "$final_time" ${DG_ARGS:-} | awk '/^L2 error/ {print $3}')
        [ -n "$error" ] || { echo "convergence.sh: no error from $dg at N=$n M=$m" >&2; exit 1; }
        if [ -n "$previous" ]; then
            order=$(awk -v a="$previous" -v b="$error" 'BEGIN { printf "%.2f", log(a / b) / log(2) }')
        else
            order=-
        fi
        printf ' %s | %s |' "$error" "$order"
        previous=$error
    done
    printf '\n'
done
