#!/usr/bin/env bash
# Runs the kiln tool with bad input and passes only if it exits with STATUS and prints a line
# matching MESSAGE (an extended regular expression).
#   expect_tool_error.sh STATUS MESSAGE -- KILN ARGS...
set -u
want=$1 message=$2
shift 2
[ "$1" = "--" ] && shift
out=$("$@" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne "$want" ]; then
  echo "exit status $rc, expected $want"
  exit 1
fi
if ! echo "$out" | grep -qE -- "$message"; then
  echo "no line matches: $message"
  exit 1
fi
