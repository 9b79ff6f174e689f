#!/usr/bin/env bash
# On the GPU machine: the fuzzer's programs on CUDA against the CPU backend (docs/fuzz.md), a
# process a core, so that NVRTC compiles many kernels at once. Builds kiln_fuzz, then runs each
# family's COUNT programs from SEED split over the cores (one family after the other), and prints
# each family's totals and its disagreements. Logs under $OUT (or ./gpu-out).
#   bash bench/gpu_fuzz.sh [FAMILY:SEED:COUNT ...]      (default: simt:1:10000 tile:1:2000 tensor:1:2000)
set -uo pipefail
cd "$(dirname "$0")/.."
runs=("$@")
((${#runs[@]})) || runs=(simt:1:10000 tile:1:2000 tensor:1:2000)
out=${OUT:-gpu-out}
mkdir -p "$out"
jobs=$(nproc)
t0=$(date +%s)
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=OFF -DKILN_WARNINGS_AS_ERRORS=OFF &&
  cmake --build build-gpu -j"$jobs" --target kiln_fuzz) >"$out/fuzz_build.log" 2>&1
echo "build rc=$? in $(($(date +%s) - t0)) s"
for run in "${runs[@]}"; do
  IFS=: read -r family seed count <<<"$run"
  t0=$(date +%s)
  per=$(((count + jobs - 1) / jobs))
  for ((p = 0; p < jobs; ++p)); do
    from=$((seed + p * per)) n=$per
    ((from + n > seed + count)) && n=$((seed + count - from))
    ((n <= 0)) && continue
    build-gpu/bin/kiln_fuzz --family "$family" --seed $from --count $n --device cuda:0 --against cpu \
      --out "$out/fuzz-cuda" --known tests/fuzz/known_mismatches.txt >"$out/fuzz_${family}_$p.log" 2>&1 &
  done
  wait
  echo "fuzz $family: seeds $seed..$((seed + count - 1)) in $(($(date +%s) - t0)) s over $jobs processes"
  grep -h "^kiln_fuzz: family" "$out"/fuzz_${family}_*.log | awk -v f="$family" '{ for (i = 1; i <= NF; ++i) {
      if ($(i+1) ~ /^programs,/) p += $i; if ($(i+1) == "agree,") a += $i; if ($(i+1) == "disagree,") d += $i;
      if ($(i+1) == "refused") r += $i; if ($(i+1) == "trivial") t += $i } }
    END { printf "fuzz %s totals: %d programs, %d agree, %d disagree, %d refused, %d trivial\n", f, p, a, d, r, t }'
  grep -h "^kiln_fuzz: output" "$out"/fuzz_${family}_*.log | awk -v f="$family" '{ b += $5; w += $9; n += $13 }
    END { printf "fuzz %s elements: %d bit for bit, %d within the tolerance, %d not compared\n", f, b, w, n }'
  grep -h "^MISMATCH\|^known\|^FIXED\|^refused\|threw" "$out"/fuzz_${family}_*.log | cut -c1-220 | head -30
done
