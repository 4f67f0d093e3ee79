#!/usr/bin/env bash
# Runs each libFuzzer harness (tests/fuzz: kernel argument declarations, cache entries,
# environment values, Matrix Market files, the tuning database) for the given number of seconds,
# from its committed seed corpus; fails on the first crash, leak or sanitizer report, leaving the
# input that caused it in build-asan/fuzz/<name>/. CI runs the short default; releases run longer.
#
#   scripts/fuzz.sh                 # 30 s each
#   scripts/fuzz.sh 300             # 5 minutes each
#   scripts/fuzz.sh 60 env          # one harness
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
[ $# -gt 0 ] && shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(declarations cache_entry env matrix_market tuning_database)

scripts/asan-build.sh "${names[@]/#/fuzz_}"

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:report_error_type=1"
export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer)
passed=0
for name in "${names[@]}"; do
  work=build-asan/fuzz/$name
  mkdir -p "$work/corpus"
  # New inputs go to the scratch corpus (first directory); the committed seeds are only read.
  status=0
  build-asan/tests/fuzz/fuzz_"$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "tests/fuzz/corpus/$name" >"$work/log" 2>&1 ||
    status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
  echo "xgpu fuzz: $name: ${runs:-?} executions in $seconds s, exit $status"
  if [ $status -ne 0 ]; then
    tail -n 60 "$work/log"
    echo "fuzz: $passed passed, 1 failed"
    exit $status
  fi
  passed=$((passed + 1))
done
echo "fuzz: $passed passed, 0 failed"
