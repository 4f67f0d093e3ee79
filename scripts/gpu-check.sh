#!/usr/bin/env bash
# On the GPU machine (an NVIDIA GPU with its OpenCL driver installed), from the repository root with build/ carried along:
# registers NVIDIA's OpenCL driver, then runs the steps named (default: all) and leaves logs in
# $OUT (or /tmp/xgpu-out): tests on both backends, compute-sanitizer memcheck, racecheck and
# initcheck on the CUDA backend, and the benchmarks on both backends.
#   scripts/gpu-check.sh [tests] [dialect] [memcheck] [racecheck] [initcheck] [bench] [dg] [profile] [python]
# python: the Python module built for this machine's python3 (XGPU_PYTHON_DIR, default
# build/python; pytest found on PYTHONPATH or in XGPU_PYTHON_DEPS) on both backends, with CuPy and
# PyTorch, then bench/peers/python_bench.py on both.
set -u
out=${OUT:-/tmp/xgpu-out}
mkdir -p "$out"
# ctest's files name the build's absolute path on the CPU machine.
if [ "$(pwd)" != /work/main ]; then mkdir -p /work && ln -sfn "$(pwd)" /work/main; fi
cd /work/main
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null
export OCL_ICD_VENDORS=/tmp/icd
steps=${*:-tests bench memcheck racecheck initcheck}
nvidia-smi -L
build/tools/xgpu-info >"$out/info.txt" 2>&1
tail -n 1 "$out/info.txt"
for step in $steps; do
  case $step in
  python)
    pypath=${XGPU_PYTHON_DIR:-build/python}${XGPU_PYTHON_DEPS:+:$XGPU_PYTHON_DEPS}
    for b in cuda opencl; do
      dev=""
      [ $b = opencl ] && dev=nvidia
      XGPU_BACKEND=$b XGPU_DEVICE=$dev PYTHONPATH=$pypath python3 -m pytest -q -p no:cacheprovider -rs tests/python \
        >"$out/pytest-$b.txt" 2>&1
      echo "pytest $b: $(tail -n 1 "$out/pytest-$b.txt")"
      XGPU_BACKEND=$b XGPU_DEVICE=$dev PYTHONPATH=$pypath python3 bench/peers/python_bench.py \
        >"$out/python-bench-$b.txt" 2>&1
      cat "$out/python-bench-$b.txt"
    done
    ;;
  dialect)
    # Every kernel the suite generates, compiled with NVRTC as the CUDA backend would.
    rm -rf /tmp/xgpu-dump
    (cd build && XGPU_DUMP_KERNELS=/tmp/xgpu-dump XGPU_BACKEND=opencl XGPU_DEVICE=nvidia ctest -E consumer) >/dev/null 2>&1
    build/xgpu-cuda-dialect-check /tmp/xgpu-dump/*.xgpu.c >"$out/dialect.txt" 2>&1
    tail -n 1 "$out/dialect.txt"
    ;;
  tests)
    (cd build && XGPU_BACKEND=cuda ctest -E consumer --output-on-failure) >"$out/ctest-cuda.txt" 2>&1
    rc=$?
    echo "ctest cuda: rc=$rc $(grep -E 'tests passed|tests failed' "$out/ctest-cuda.txt")"
    (cd build && XGPU_BACKEND=opencl XGPU_DEVICE=nvidia ctest -E consumer --output-on-failure) >"$out/ctest-opencl.txt" 2>&1
    rc=$?
    echo "ctest opencl: rc=$rc $(grep -E 'tests passed|tests failed' "$out/ctest-opencl.txt")"
    ;;
  memcheck | racecheck | initcheck)
    # compute-sanitizer over every test program on the CUDA backend. API errors are not reported:
    # the only ones the suite makes are deliberate (cuFuncGetParamInfo probed one past the last
    # parameter to count them; the driver has no count call). XGPU_SANITIZE_TESTS narrows the set.
    log="$out/$step.txt"
    : >"$log"
    for t in ${XGPU_SANITIZE_TESTS:-build/tests/test_*}; do
      [ "$(basename "$t")" = test_sha256 ] && continue # host code only: nothing to instrument
      XGPU_BACKEND=cuda timeout ${XGPU_SANITIZE_TIMEOUT:-600} compute-sanitizer --tool "$step" --report-api-errors no \
        --error-exitcode 99 "$t" >>"$log" 2>&1
      rc=$?
      echo "$step $(basename "$t"): rc=$rc" | tee -a "$log"
    done
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | sort | uniq -c
    ;;
  bench)
    : >"$out/bench.txt"
    for b in cuda opencl; do
      dev=""
      [ $b = opencl ] && dev=nvidia
      for prog in build/bench/xgpu-bench build/bench/array-bench build/bench/spmv-bench; do
        args=""
        [ "$prog" = build/bench/array-bench ] && args=--sweep # the elementwise launch shapes too
        # The matrices, once, for cuSPARSE through CuPy (bench/peers/cupy_spmv.py) below.
        [ "$prog" = build/bench/spmv-bench ] && [ $b = cuda ] && mkdir -p /tmp/xgpu-spmv && args="--save /tmp/xgpu-spmv"
        [ -x $prog ] && XGPU_BACKEND=$b XGPU_DEVICE=$dev $prog $args >>"$out/bench.txt" 2>&1
        echo >>"$out/bench.txt"
      done
    done
    [ -f bench/peers/cupy_bench.py ] && python3 bench/peers/cupy_bench.py >>"$out/bench.txt" 2>&1
    [ -f bench/peers/cupy_spmv.py ] && python3 bench/peers/cupy_spmv.py /tmp/xgpu-spmv >>"$out/bench.txt" 2>&1
    cat "$out/bench.txt"
    ;;
  dg)
    # The DG example at each order (about 2 million dofs), f64 and
    # f32, on both backends: its default against XGPU_AUTOTUNE=on (tuned on the mesh itself).
    : >"$out/dg.txt"
    for b in cuda opencl; do
      dev=""
      [ $b = opencl ] && dev=nvidia
      for p in f64 f32; do
        for n in 3 4 5 6 7; do
          m=$(awk -v n="$n" 'BEGIN { np = (n + 1) * (n + 2) / 2; printf "%d", sqrt(2000000 / (6 * np)) + 0.5 }')
          for mode in off on; do
            echo "## $b $p N=$n M=$m XGPU_AUTOTUNE=$mode" >>"$out/dg.txt"
            XGPU_AUTOTUNE=$mode XGPU_BACKEND=$b XGPU_DEVICE=$dev build/examples/dg/dg --order $n --mesh $m \
              --final-time 0.02 --precision $p >>"$out/dg.txt" 2>&1
          done
        done
      done
    done
    grep -E "^##|^time/step|^volume|^precision" "$out/dg.txt"
    ;;
  profile)
    # Nsight Compute (where the machine has it) over the kernels still short of their targets:
    # the DG volume kernel (default form, f64 and f32, N = 5 and 7, about 2 million dofs) and the
    # merge-path SpMV on the locality-ordered power-law matrix; one launch each after the
    # warm-up, every section including the warp-stall sampling by instruction, as text.
    # The report (.ncu-rep, for the Nsight Compute GUI), its details page as text, and the SASS
    # with the stall samples of each instruction as CSV.
    ncu_text() {
      ncu -i "$1.ncu-rep" --page details >"$1.txt" 2>&1
      ncu -i "$1.ncu-rep" --page source --print-source sass --csv >"$1-sass.csv" 2>&1
      echo "  $(grep -m1 -E '^ +Duration' "$1.txt")"
    }
    if ! command -v ncu >/dev/null 2>&1; then
      echo "profile: ncu not found"
      continue
    fi
    for p in f64 f32; do
      for n in 5 7; do
        m=$(awk -v n="$n" 'BEGIN { np = (n + 1) * (n + 2) / 2; printf "%d", sqrt(2000000 / (6 * np)) + 0.5 }')
        XGPU_BACKEND=cuda XGPU_AUTOTUNE=off ncu --clock-control none --kernel-name dg_volume --launch-skip 2 \
          --launch-count 1 --set full --import-source yes -f -o "$out/ncu-dg-$p-$n" build/examples/dg/dg --order $n \
          --mesh $m --final-time 0.001 --precision $p >"$out/ncu-dg-$p-$n.log" 2>&1
        echo "profile dg $p N=$n: rc=$?"
        ncu_text "$out/ncu-dg-$p-$n"
      done
    done
    XGPU_BACKEND=cuda ncu --clock-control none --kernel-name xgpu_spmv_merge --launch-skip 4 --launch-count 1 --set full \
      --import-source yes -f -o "$out/ncu-merge" build/bench/spmv-bench --n 0 --p 0 --plocal 24 --reps 3 \
      --formats merge_path >"$out/ncu-merge.log" 2>&1
    echo "profile merge path: rc=$?"
    ncu_text "$out/ncu-merge"
    ;;
  esac
done
