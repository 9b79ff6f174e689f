#!/usr/bin/env bash
# Runs exit_probe N times and counts abnormal exits: a non-zero status, a signal, or a run that
# does not end within 30 s. Prints one summary line; fails when any run was abnormal.
#   exit_loop.sh PROBE N open|launch|keep DEVICE [--no-check]
# EXIT_LOOP_JOBS=J runs J probes at a time (default 1), which also has processes open the device
# while others exit.
set -u
probe=$1 runs=$2 mode=$3 device=$4
shift 4
jobs=${EXIT_LOOP_JOBS:-1}
# A device this machine lacks (status 5 on the first run) skips the loop (CTest's skip code).
timeout 30 "$probe" "$mode" "$device" "$@" >/dev/null 2>&1
if [ $? -eq 5 ]; then
  echo "exit loop: $mode on $device: skipped, the device is unavailable here: $("$probe" "$mode" "$device" "$@" 2>&1 | tail -1)"
  exit 77
fi
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
# One worker runs runs J, J + jobs, J + 2 jobs, ...; each abnormal run leaves a file saying why.
worker() {
  local first=$1
  shift
  for ((i = first; i <= runs; i += jobs)); do
    out=$(timeout 30 "$probe" "$mode" "$device" "$@" 2>&1)
    rc=$?
    [ $rc -eq 0 ] && continue
    case $rc in
      124) why="timed out (30 s)" ;;
      13[0-9] | 1[4-9][0-9]) why="killed by signal $((rc - 128))" ;;
      *) why="exit status $rc" ;;
    esac
    printf 'run %d: %s: %s\n' "$i" "$why" "$(echo "$out" | tail -3)" >"$results/$i"
  done
}
for ((w = 1; w <= jobs; w++)); do worker "$w" "$@" & done
wait
abnormal=$(ls "$results" | wc -l)
echo "exit loop: $mode on $device: $runs runs ($jobs at a time), $abnormal abnormal"
if [ "$abnormal" -ne 0 ]; then
  echo "first abnormal $(cat "$results/$(ls "$results" | sort -n | head -1)")"
  exit 1
fi
