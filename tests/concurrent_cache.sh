#!/bin/sh
# Processes started together on one empty compile cache (xgpu's and, on PoCL, PoCL's own) all
# succeed: PROCESSES copies of PROGRAM ARGS..., ROUNDS times, each round on fresh caches.
#   concurrent_cache.sh PROCESSES ROUNDS PROGRAM [ARGS...]
n=$1 rounds=$2
shift 2
failed=0
r=0
while [ "$r" -lt "$rounds" ]; do
    dir=$(mktemp -d)
    pids=
    i=0
    while [ "$i" -lt "$n" ]; do
        POCL_CACHE_DIR="$dir/pocl" XGPU_CACHE_DIR="$dir/xgpu" "$@" >"$dir/out$i" 2>&1 &
        pids="$pids $!"
        i=$((i + 1))
    done
    i=0
    for pid in $pids; do
        wait "$pid"
        rc=$?
        if [ "$rc" -ne 0 ]; then
            failed=$((failed + 1))
            echo "process $i of round $r failed (exit status $rc):"
            tail -n 3 "$dir/out$i"
        fi
        i=$((i + 1))
    done
    rm -rf "$dir"
    r=$((r + 1))
done
echo "$failed of $((n * rounds)) processes failed"
[ "$failed" -eq 0 ]
