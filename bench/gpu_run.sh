#!/usr/bin/env bash
# One batch on the GPU machine (docs/perf.md records its tables): build, the examples on cuda:0,
# the disk-cache checks, every test three times, the exit loops, the kernel suite's divergent plane
# cases on cuda:0, the peers and kiln bench, then compute-sanitizer over the suite's CUDA cases.
# Logs go to $OUT (or ./gpu-out); a table is printed last. Any failed step is FAILED in the table
# and makes the script exit non-zero.
#   bash bench/gpu_run.sh [PEERS_DIR]
# PEERS_DIR (default .peers) holds a copy of the peer scripts (torch_peers.py, triton_peers.py,
# raw_cuda_launch.cu): the GPU machine receives the checkout only, so copy them into it first.
# GPU_RUN_ONLY (e.g. "examples,cache,ctest1,exit,fault,plane") runs only those groups after the
# build (which always runs, incrementally); GPU_RUN_SKIP (e.g. "peers,sanitize") leaves groups
# out. Groups: examples cache ctest1 ctest2 ctest3 exit fault plane demo fastmath peers sanitize. A
# device command has 10 minutes: split the batch over calls on a warm machine (the build folder
# stays).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
peers=${1:-.peers}
jobs=$(nproc)
skip=${GPU_RUN_SKIP:-}
failed=0
: >"$out/summary.txt"
summary() { echo "$*" | tee -a "$out/summary.txt"; }
# step NAME COMMAND...: runs COMMAND with its output in $out/NAME.log; one table row.
step() {
  local name=$1
  shift
  local t0=$(date +%s)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local verdict=ok
  if [ $rc -ne 0 ]; then
    verdict=FAILED
    failed=$((failed + 1))
  fi
  summary "$(printf '%-24s %-7s rc=%-3s %5ss' "$name" "$verdict" "$rc" "$(($(date +%s) - t0))")"
  return $rc
}
skipped() { summary "$(printf '%-24s %-7s %s' "$1" SKIPPED "$2")"; }
only=${GPU_RUN_ONLY:-}
wanted() { [[ ",$skip," != *",$1,"* ]] && { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }; }
# expect NAME ACTUAL EXPECTED: a checked figure; a mismatch counts as a failed step.
expect() {
  if [ "$2" = "$3" ]; then
    summary "$(printf '%-24s %-7s %s' "$1" ok "$2")"
  else
    summary "$(printf '%-24s %-7s got %s, expected %s' "$1" FAILED "$2" "$3")"
    failed=$((failed + 1))
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
# Warnings are counted, not fatal: this machine's compiler (g++ 13) is not CI's (g++ 12), and a
# warning only it gives should be read in the log, not cost the run.
step configure cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=OFF -DKILN_WARNINGS_AS_ERRORS=OFF
if ! step build cmake --build build-gpu -j"$jobs"; then
  tail -30 "$out/build.log"
  echo "== summary"; cat "$out/summary.txt"
  exit 1
fi
summary "$(printf '%-24s %s' "build warnings" "$(grep -c 'warning:' "$out/build.log")")"
grep -A3 'warning:' "$out/build.log" | head -20
bin=build-gpu/bin

# The seed examples on cuda:0.
if wanted examples; then
  step examples bash -c "for e in saxpy add_variants checked_oob; do $bin/\$e --device cuda:0 || exit 1; done"
  cat "$out/examples.log"
fi

# Disk cache: a second process compiles nothing; a truncated entry is recompiled, not trusted.
if wanted cache; then
  export KILN_CACHE_DIR=$PWD/build-gpu/disk-cache-check
  rm -rf "$KILN_CACHE_DIR"
  step cache_first env KILN_LOG=compile $bin/add_variants --device cuda:0
  step cache_second env KILN_LOG=compile $bin/add_variants --device cuda:0
  victim=$(ls "$KILN_CACHE_DIR"/cuda/*.cubin | head -1)
  truncate -s 100 "$victim"
  step cache_truncated env KILN_LOG=compile $bin/add_variants --device cuda:0
  expect "cache: first run" "$(grep -c 'NVRTC compiled' "$out/cache_first.log") compiles" "3 compiles"
  expect "cache: second run" "$(grep -c 'NVRTC compiled' "$out/cache_second.log") compiles, $(grep -c 'disk cache hit' "$out/cache_second.log") hits" "0 compiles, 3 hits"
  expect "cache: truncated" "$(grep -c 'corrupt' "$out/cache_truncated.log") corrupt, $(grep -c 'NVRTC compiled' "$out/cache_truncated.log") recompiled" "1 corrupt, 1 recompiled"
  unset KILN_CACHE_DIR
fi

# Every test, three times in a row (the kernel suite runs on the CPU and on cuda:0).
for run in 1 2 3; do
  wanted "ctest$run" || continue
  step "ctest_$run" ctest --test-dir build-gpu -j12 --timeout 300 --output-on-failure
  grep -E "tests passed|tests failed|Total Test" "$out/ctest_$run.log" | tee -a "$out/summary.txt"
done

# Processes that open the GPU (and launch one kernel) and exit at once, 500 times each, 8 at a time.
if wanted exit; then
  for mode in open launch keep; do
    for device in cuda:0 cpu; do
      step "exit_${mode}_${device%:*}" env EXIT_LOOP_JOBS=${EXIT_LOOP_JOBS:-8} bash tests/probes/exit_loop.sh $bin/kiln_exit_probe 500 $mode $device
      tail -2 "$out/exit_${mode}_${device%:*}.log" | tee -a "$out/summary.txt"
    done
  done
fi

# A kernel that faults: reported once, then the device refuses work.
if wanted fault; then
  step fault_cuda $bin/kiln_fault_probe cuda:0
  cat "$out/fault_cuda.log"
fi

# The divergent plane cases, compared between the CPU and cuda:0.
if wanted plane; then
  step plane_divergence $bin/kiln_suite_tests --gtest_filter="${PLANE_FILTER:-Suite/KernelSuite.Run/*plane*}"
  grep -E "PASSED|FAILED|tests ran" "$out/plane_divergence.log" | tee -a "$out/summary.txt"
  ran=$(grep -oE "Running [0-9]+ test" "$out/plane_divergence.log" | grep -oE "[0-9]+" | head -1)
  cuda_ran=$(grep -cE "OK \] .*_cuda0" "$out/plane_divergence.log")
  expect "plane cases on cuda:0" "$([ "${cuda_ran:-0}" -gt 0 ] && echo some || echo none) (of ${ran:-0})" "some (of ${ran:-0})"
fi

# Fast math (docs/decisions/015-fast-math.md): the suite's fast-math cases on the CPU and cuda:0
# (their tolerances), then the compute-bound benchmark, exact against fast math, with its errors.
if wanted fastmath; then
  step fast_math_suite $bin/kiln_suite_tests --gtest_filter='Suite/KernelSuite.Run/*fast_mix*:FastMath.*'
  grep -E "PASSED|FAILED|tests ran" "$out/fast_math_suite.log" | tee -a "$out/summary.txt"
  step fast_math_bench $bin/kiln bench --device cuda:0 --only fast_math --json "$out/fast_math.json"
  cat "$out/fast_math_bench.log"
  expect "fast math: errors" "$(grep -E 'math_heavy .*max abs error' "$out/fast_math_bench.log" | grep -c met) of 2 within bounds" "2 of 2 within bounds"
fi

if wanted demo; then
  step demo env KILN_PROFILE=1 $bin/kiln demo
  cat "$out/demo.log"
fi

# The tensor library on cuda:0: its tests and autotune's, the walkthrough, then its benchmarks
# beside PyTorch (torch_peers.py and bench/peers/tensor_peers.py) and Triton in the same run.
if wanted tensor; then
  step tensor_tests $bin/kiln_tensor_tests
  grep -E "PASSED|FAILED|tests ran" "$out/tensor_tests.log" | tee -a "$out/summary.txt"
  step autotune_tests $bin/kiln_autotune_tests
  grep -E "PASSED|FAILED|tests ran" "$out/autotune_tests.log" | tee -a "$out/summary.txt"
  step tensor_walkthrough $bin/tensor_walkthrough --device cuda:0
  if [ -d "$peers" ]; then
    step peer_raw bash -c "nvcc -O2 -o build-gpu/raw_cuda_launch $peers/raw_cuda_launch.cu -lcuda -lnvrtc && build-gpu/raw_cuda_launch"
    step peer_torch env PYTHONUNBUFFERED=1 python3 "$peers/torch_peers.py"
    step peer_triton env PYTHONUNBUFFERED=1 python3 "$peers/triton_peers.py"
  fi
  step peer_tensor env PYTHONUNBUFFERED=1 python3 bench/peers/tensor_peers.py
  peer_files=$(ls "$out"/peer_{raw,torch,triton,tensor}.log 2>/dev/null | paste -sd,)
  step tensor_bench env KILN_LOG=autotune KILN_CACHE_DIR=$PWD/build-gpu/bench-cache $bin/kiln bench --device cuda:0 \
    --only "${TENSOR_BENCH_PARTS:-tensor}" --peers "$peer_files" --json "$out/tensor_bench.json"
  cat "$out/tensor_bench.log"
fi

# Peers and kiln's benchmarks in the same run.
if ! wanted peers; then
  skipped peers "GPU_RUN_SKIP"
elif [ ! -d "$peers" ]; then
  skipped peers "no peer scripts in $peers"
else
  step peer_raw bash -c "nvcc -O2 -o build-gpu/raw_cuda_launch $peers/raw_cuda_launch.cu -lcuda -lnvrtc && build-gpu/raw_cuda_launch"
  step peer_torch env PYTHONUNBUFFERED=1 python3 "$peers/torch_peers.py"
  step peer_triton env PYTHONUNBUFFERED=1 python3 "$peers/triton_peers.py"
  step bench $bin/kiln bench --peers "$out/peer_raw.log,$out/peer_torch.log,$out/peer_triton.log" --json "$out/bench.json"
  cat "$out/bench.log"
fi

# compute-sanitizer over the kernel suite's CUDA cases.
cs=/usr/local/cuda/bin/compute-sanitizer
if wanted sanitize; then
  for tool in memcheck racecheck; do
    step "sanitize_$tool" timeout 240 $cs --tool $tool --error-exitcode 9 $bin/kiln_suite_tests --gtest_filter='*cuda*'
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitize_$tool.log" | tail -3 | tee -a "$out/summary.txt"
  done
else
  skipped sanitize "GPU_RUN_SKIP"
fi

echo "== summary"
cat "$out/summary.txt"
if [ $failed -ne 0 ]; then
  echo "gpu_run: FAILED ($failed failed steps or checks)"
  exit 1
fi
echo "gpu_run: every step passed"
