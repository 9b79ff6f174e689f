#!/usr/bin/env bash
# On the GPU machine: the fuzzer's programs on CUDA against the CPU backend (docs/fuzz.md), a
# process a core, so that NVRTC compiles many kernels at once. Builds kiln_fuzz, runs COUNT programs from SEED split
# over the cores, and prints each process's report and the totals. Logs under $OUT (or ./gpu-out).
#   bash bench/gpu_fuzz.sh [SEED] [COUNT]
set -uo pipefail
cd "$(dirname "$0")/.."
seed=${1:-1} count=${2:-10000}
out=${OUT:-gpu-out}
mkdir -p "$out"
jobs=$(nproc)
t0=$(date +%s)
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=OFF -DKILN_WARNINGS_AS_ERRORS=OFF &&
  cmake --build build-gpu -j"$jobs" --target kiln_fuzz) >"$out/fuzz_build.log" 2>&1
echo "build rc=$? in $(($(date +%s) - t0)) s"
t0=$(date +%s)
per=$(((count + jobs - 1) / jobs))
for ((p = 0; p < jobs; ++p)); do
  from=$((seed + p * per)) n=$per
  ((from + n > seed + count)) && n=$((seed + count - from))
  ((n <= 0)) && continue
  build-gpu/bin/kiln_fuzz --family simt --seed $from --count $n --device cuda:0 --against cpu --out "$out/fuzz-cuda" \
    --known tests/fuzz/known_mismatches.txt >"$out/fuzz_$p.log" 2>&1 &
done
wait
echo "fuzz: $count programs in $(($(date +%s) - t0)) s over $jobs processes"
grep -h "^kiln_fuzz: family" "$out"/fuzz_*.log | awk '{ for (i = 1; i <= NF; ++i) { if ($(i+1) ~ /^programs,/) p += $i;
  if ($(i+1) == "agree,") a += $i; if ($(i+1) == "disagree,") d += $i; if ($(i+1) == "refused") r += $i; if ($(i+1) == "trivial") t += $i } }
  END { printf "fuzz totals: %d programs, %d agree, %d disagree, %d refused, %d trivial\n", p, a, d, r, t }'
grep -h "^MISMATCH\|^known\|^FIXED\|^refused" "$out"/fuzz_*.log | cut -c1-200 | head -40
