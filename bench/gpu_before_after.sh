#!/usr/bin/env bash
# On the GPU machine: this tree and an earlier one (BASE, a copy of another commit's files) built
# side by side, the full test run on this tree, then `kiln bench` of both, alternating, twice each,
# compared row by row (bench/compare_json.py), with each autotune candidate's time in the logs.
# Logs under $OUT (or ./gpu-out).
#   bash bench/gpu_before_after.sh BASE PHASES     PHASES: build,test,bench (any of them)
# BENCH_ONLY (e.g. "tile,tensor.rows") is passed to `kiln bench --only`; PEERS_DIR (e.g. .peers, a
# copy of ../shared/peers carried to the machine) runs its torch_peers.py once before the rounds and
# gives both sides the figures (`--peers`), so each row's ratio is to a peer of the same command.
set -uo pipefail
cd "$(dirname "$0")/.."
base=$1 phases=${2:-build,test,bench}
out=${OUT:-gpu-out}
mkdir -p "$out"
jobs=$(nproc)
has() { [[ ",$phases," == *",$1,"* ]]; }
cfg="-DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=OFF -DKILN_WARNINGS_AS_ERRORS=OFF"
if has build; then
  t0=$(date +%s)
  # Without the test phase, only the tool the bench runs.
  targets=""; has test || targets="--target kiln_tool"
  # Stated either way: a tree configured earlier keeps its cache's choice otherwise.
  tests=ON; has test || tests=OFF
  par=$jobs; has bench && par=$((jobs / 2))  # the two builds share the cores
  (cmake -S . -B build-gpu $cfg -DKILN_BUILD_TESTS=$tests && cmake --build build-gpu -j$par $targets) >"$out/build_after.log" 2>&1 &
  after=$!
  # BASE only for the bench.
  if has bench; then
    (cmake -S "$base" -B "$base/build-gpu" $cfg -DKILN_BUILD_TESTS=OFF && cmake --build "$base/build-gpu" -j$((jobs / 2)) --target kiln_tool) \
      >"$out/build_before.log" 2>&1 &
  else
    true &
  fi
  before=$!
  wait $after; ra=$?
  wait $before; rb=$?
  echo "build: after rc=$ra, before rc=$rb, $(($(date +%s) - t0)) s; warnings: $(grep -c 'warning:' "$out/build_after.log")"
  [ $ra -ne 0 ] && tail -30 "$out/build_after.log"
  [ $rb -ne 0 ] && tail -30 "$out/build_before.log"
fi
if has test; then
  t0=$(date +%s)
  ctest --test-dir build-gpu -j$jobs --timeout 300 --output-on-failure >"$out/ctest.log" 2>&1
  rc=$?
  # ctest finds no tests in a tree built without them, and says so with rc 0.
  grep -q "No tests were found!!!" "$out/ctest.log" && rc=8
  echo "ctest rc=$rc in $(($(date +%s) - t0)) s"
  grep -E "tests passed|tests failed" "$out/ctest.log"
  sed -n '/The following tests/,$p' "$out/ctest.log" | head -30
  echo "skipped: $(grep -c '(Skipped)\|Not Run' "$out/ctest.log")"
  grep -E "\(Skipped\)" "$out/ctest.log" | head -10
fi
if has bench; then
  extra=()
  [ -n "${BENCH_ONLY:-}" ] && extra+=(--only "$BENCH_ONLY")
  if [ -n "${PEERS_DIR:-}" ]; then
    t0=$(date +%s)
    python3 "$PEERS_DIR/torch_peers.py" >"$out/torch_peers.json" 2>"$out/torch_peers.log"
    echo "torch_peers rc=$? in $(($(date +%s) - t0)) s"
    # The script prints the device's name first, then the JSON.
    sed -n '/^{/,$p' "$out/torch_peers.json" >"$out/torch.json"
    extra+=(--peers "$out/torch.json")
  fi
  for round in 1 2; do
    for side in before after; do
      tree=.; [ $side = before ] && tree=$base
      t0=$(date +%s)
      # kiln bench keeps kernels and autotune results in a fresh folder of its own each run.
      KILN_LOG=autotune "$tree/build-gpu/bin/kiln" bench --device cuda:0 "${extra[@]}" --json "$out/bench_${side}_$round.json" \
        >"$out/bench_${side}_$round.log" 2>&1
      echo "bench $side $round rc=$? in $(($(date +%s) - t0)) s"
    done
  done
  python3 bench/compare_json.py "$out/bench_before_1.json,$out/bench_before_2.json" "$out/bench_after_1.json,$out/bench_after_2.json" \
    | tee "$out/compare.txt"
  # The transposed rows: each candidate's time (KILN_LOG=autotune) and the table's rows.
  grep -E "rows=4096, weight=false, bias=false, layout=strided, tiled into rows\}: (held|split 256|strided 8x1024)|transpose" "$out/bench_after_1.log" "$out/bench_after_2.log" | cut -c1-170
fi
