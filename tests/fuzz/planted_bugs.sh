#!/usr/bin/env bash
# Plants bugs in kiln one at a time, rebuilds the fuzzer and runs CTest's fixed seeds of one family
# against the CPU backend: each must be caught (a disagreement, exit 1). The bugs: a float-to-int
# cast that rounds instead of truncating (backends/cpu/cast.cpp), a loop whose units run one trip
# past their own bound (backends/cpu/control.cpp), fold negating abs of a large u64
# (passes/fold.cpp, the fuzzer's first find), a ragged cell's edge mask that keeps one lane past
# the extent (passes/tile/lower/cells.cpp), and a pipelined loop that copies the next tiles into the
# ring slot one short of where they belong (passes/tile/pipeline_loops.cpp). Each lives in a small file, so
# that CI rebuilds little. The files are restored after each (from a copy, so that uncommitted work
# in them survives), and the fuzzer is rebuilt clean.
#   tests/fuzz/planted_bugs.sh BUILD_DIR     (a configured build folder, e.g. build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: planted_bugs.sh BUILD_DIR}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# The seeds of CTest's fuzz.simt.cpu and fuzz.tile.cpu (tests/CMakeLists.txt).
simt=(--family simt --seed 1 --count 1500)
tile=(--family tile --seed 1 --count 300)
saved=$(mktemp -d)
trap 'rm -rf "$saved"' EXIT

# plant FAMILY NAME FILE OLD NEW: FILE with its one OLD replaced by NEW, FAMILY's seeds run.
plant() {
  local family=$1 name=$2 file=$3 old=$4 new=$5
  local -n seeds=$family
  cp "$file" "$saved/file"
  python3 - "$file" "$old" "$new" <<'EOF'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"planted_bugs: {path} holds {text.count(old)} copies of the text to replace, not one")
open(path, "w").write(text.replace(old, new))
EOF
  local t0=$(date +%s) rc=0 out
  cmake --build "$build" -j"$jobs" --target kiln_fuzz >"$saved/build.log" 2>&1 || { cat "$saved/build.log"; cp "$saved/file" "$file"; exit 1; }
  out=$("$build/bin/kiln_fuzz" "${seeds[@]}" --device cpu --known tests/fuzz/known_mismatches.txt \
    --out "$build/planted-$name") || rc=$?
  cp "$saved/file" "$file"
  local mismatches first
  mismatches=$(grep -c '^MISMATCH' <<<"$out" || true)
  first=$(grep -m1 '^MISMATCH' <<<"$out" | cut -c1-150 || true)
  if [[ $rc -eq 1 && $mismatches -gt 0 ]]; then
    echo "planted: $name caught: $mismatches of ${seeds[5]} $family programs disagree, in $(($(date +%s) - t0)) s; first: $first"
  else
    echo "planted: $name NOT caught (kiln_fuzz exit $rc)" >&2
    echo "$out" | tail -5 >&2
    failed=1
  fi
}

failed=0
plant simt cast_rounds_to_nearest src/backends/cpu/cast.cpp \
  '    x = std::trunc(x);' \
  '    x = std::round(x);  // planted: float to int rounds instead of truncating'
plant simt loop_bound_off_by_one src/backends/cpu/control.cpp \
  'const uint8_t go = live & uint8_t(i[u] < (HU ? hi[0] : hi[u]));' \
  'const uint8_t go = live & uint8_t(HU ? i[u] < hi[0] : i[u] <= hi[u]);  // planted: a unit'"'"'s own bound is run past'
plant simt fold_abs_of_unsigned src/passes/fold.cpp \
  'ir::is_signed_int(s) && a < 0 ? 0 - ua : ua' \
  'a < 0 ? 0 - ua : ua /* planted: abs of a u64 past 2^63 negates it */'
plant tile ragged_edge_mask src/passes/tile/lower/cells.cpp \
  'if (guard[d]) mask = both(mask, emit(K::Lt, {coord, extent_of(c, d)}));' \
  'if (guard[d]) mask = both(mask, emit(K::Le, {coord, extent_of(c, d)}));  // planted: one lane past the edge'
plant tile ring_slot_one_short src/passes/tile/pipeline_loops.cpp \
  'Value next_slot = emit(K::Rem, {emit(K::Add, {n, u32(uint64_t(stages) - 1)}, u), u32(uint64_t(stages))}, u);' \
  'Value next_slot = emit(K::Rem, {emit(K::Add, {n, u32(uint64_t(stages) - 2)}, u), u32(uint64_t(stages))}, u);  // planted'
cmake --build "$build" -j"$jobs" --target kiln_fuzz >"$saved/build.log" 2>&1 || { cat "$saved/build.log"; exit 1; }
[[ $failed -eq 0 ]] || { echo "planted: a planted bug went unseen" >&2; exit 1; }
echo "planted: every planted bug was caught"
