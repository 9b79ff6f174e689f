#!/usr/bin/env bash
# expect_output.sh MODE EXPECTED -- COMMAND...: runs COMMAND and checks its standard output against
# the file EXPECTED. MODE `exact`: the output is the file. MODE `lines`: each line of the file is a
# line of the output (for output whose other lines depend on what the machine can run).
set -u
mode=$1 expected=$2
shift 3
actual=$("$@")
status=$?
if [ "$mode" = exact ]; then
  if [ "$actual" != "$(cat "$expected")" ]; then
    echo "output differs from $expected (exit status $status):"
    diff <(printf '%s\n' "$actual") "$expected"
    exit 1
  fi
  [ $status -eq 0 ] || { echo "exit status $status"; exit 1; }
else
  while IFS= read -r line; do
    if ! printf '%s\n' "$actual" | grep -qxF -- "$line"; then
      echo "missing line: $line"
      echo "output was:"
      printf '%s\n' "$actual"
      exit 1
    fi
  done < "$expected"
  [ $status -eq 0 ] || { echo "exit status $status (an example exits non-zero when its own check fails)"; exit 1; }
fi
