#!/usr/bin/env bash
# Runs exit_probe N times and counts abnormal exits: a non-zero status, a signal, or a run that
# does not end within 30 s. Prints one summary line; fails when any run was abnormal.
#   exit_loop.sh PROBE N open|launch DEVICE [--no-check]
set -u
probe=$1 runs=$2 mode=$3 device=$4
shift 4
abnormal=0 first=""
# A device this machine lacks (status 5 on the first run) skips the loop (CTest's skip code).
timeout 30 "$probe" "$mode" "$device" "$@" >/dev/null 2>&1
if [ $? -eq 5 ]; then
  echo "exit loop: $mode on $device: skipped, the device is unavailable here: $("$probe" "$mode" "$device" "$@" 2>&1 | tail -1)"
  exit 77
fi
for ((i = 1; i <= runs; i++)); do
  out=$(timeout 30 "$probe" "$mode" "$device" "$@" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    abnormal=$((abnormal + 1))
    if [ -z "$first" ]; then
      case $rc in
        124) why="timed out (30 s)" ;;
        13[0-9] | 1[4-9][0-9]) why="killed by signal $((rc - 128))" ;;
        *) why="exit status $rc" ;;
      esac
      first="run $i: $why: $(echo "$out" | tail -3)"
    fi
  fi
done
echo "exit loop: $mode on $device: $runs runs, $abnormal abnormal"
if [ $abnormal -ne 0 ]; then
  echo "first abnormal $first"
  exit 1
fi
