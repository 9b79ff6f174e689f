#!/usr/bin/env bash
# One batch on the GPU machine (docs/perf.md records its tables): build, examples on cuda:0, the
# disk-cache checks, every test, the peers and kiln bench, then compute-sanitizer over the kernel
# suite. Logs go to $OUT (or ./gpu-out); a short table is printed last.
#   bash bench/gpu_run.sh [PEERS_DIR]     PEERS_DIR holds torch_peers.py, triton_peers.py, raw_cuda_launch.cu
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
peers=${1:-.peers}
jobs=$(nproc)
summary() { echo "$*" | tee -a "$out/summary.txt"; }
step() { local name=$1; shift; local t0=$(date +%s); "$@" >"$out/$name.log" 2>&1; local rc=$?; summary "$(printf '%-22s rc=%-3s %4ss' "$name" "$rc" "$(( $(date +%s) - t0 ))")"; return $rc; }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
step configure cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=OFF
step build cmake --build build-gpu -j"$jobs" || { tail -30 "$out/build.log"; exit 1; }
bin=build-gpu/bin

# The seed examples on cuda:0.
step examples bash -c "for e in saxpy add_variants checked_oob; do $bin/\$e --device cuda:0; done"
cat "$out/examples.log"

# Disk cache: a second process compiles nothing; a truncated entry is recompiled, not trusted.
export KILN_CACHE_DIR=$PWD/build-gpu/disk-cache-check
rm -rf "$KILN_CACHE_DIR"
step cache_first env KILN_LOG=compile $bin/add_variants --device cuda:0
step cache_second env KILN_LOG=compile $bin/add_variants --device cuda:0
victim=$(ls "$KILN_CACHE_DIR"/cuda/*.cubin | head -1)
truncate -s 100 "$victim"
step cache_truncated env KILN_LOG=compile $bin/add_variants --device cuda:0
summary "disk cache: first run $(grep -c 'NVRTC compiled' "$out/cache_first.log") compiles; second run $(grep -c 'NVRTC compiled' "$out/cache_second.log") compiles, $(grep -c 'disk cache hit' "$out/cache_second.log") hits; after truncation $(grep -c 'corrupt' "$out/cache_truncated.log") corrupt, $(grep -c 'NVRTC compiled' "$out/cache_truncated.log") recompiled"
unset KILN_CACHE_DIR

# Every test (the kernel suite runs on the CPU and on cuda:0).
step ctest ctest --test-dir build-gpu -j12 --timeout 120 --output-on-failure
grep -E "tests passed|tests failed|Total Test" "$out/ctest.log" | tee -a "$out/summary.txt"
step demo env KILN_PROFILE=1 $bin/kiln demo
cat "$out/demo.log"

# Peers and kiln's benchmarks in the same run.
if [ -d "$peers" ]; then
  step peer_raw bash -c "nvcc -O2 -o build-gpu/raw_cuda_launch $peers/raw_cuda_launch.cu -lcuda -lnvrtc && build-gpu/raw_cuda_launch"
  step peer_torch env PYTHONUNBUFFERED=1 python3 "$peers/torch_peers.py"
  step peer_triton env PYTHONUNBUFFERED=1 python3 "$peers/triton_peers.py"
  step bench $bin/kiln bench --peers "$out/peer_raw.log,$out/peer_torch.log,$out/peer_triton.log" --json "$out/bench.json"
  cat "$out/bench.log"
fi

# compute-sanitizer over the kernel suite's CUDA cases.
cs=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck; do
  step "sanitize_$tool" timeout 150 $cs --tool $tool --error-exitcode 9 $bin/kiln_suite_tests --gtest_filter='*cuda*'
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitize_$tool.log" | tail -3 | tee -a "$out/summary.txt"
done
echo "== summary"; cat "$out/summary.txt"
