#!/usr/bin/env bash
# A compile-must-fail check that cannot pass by accident: compiles FILE with -DKILN_CASE_<CASE> and
# passes only if the compiler fails, reports a diagnostic at the line marked `// error-here: CASE`
# in FILE (the error itself, the "required from here" of a template error, or the "in 'constexpr'
# expansion of" that starts a failed constant evaluation, such as a consteval call), and prints a
# line matching MESSAGE (an extended regular expression) naming the cause.
#   expect_compile_error.sh FILE CASE MESSAGE -- COMPILER ARGS...
# With CASE "control", FILE must compile (the file's control: the same code done right).
set -u
file=$1 case=$2 message=$3
shift 3
[ "$1" = "--" ] && shift
out=$("$@" -fsyntax-only -DKILN_CASE_${case} "$file" 2>&1)
rc=$?
if [ "$case" = control ]; then
  if [ $rc -ne 0 ]; then
    echo "the control case of $file does not compile:"
    echo "$out" | head -40
    exit 1
  fi
  echo "the control case of $file compiles"
  exit 0
fi
if [ $rc -eq 0 ]; then
  echo "case $case of $file compiled, but must not"
  exit 1
fi
line=$(grep -n "// error-here: ${case}\$" "$file" | head -1 | cut -d: -f1)
if [ -z "$line" ]; then
  echo "no '// error-here: $case' marker in $file"
  exit 1
fi
name=$(basename "$file")
if ! echo "$out" | grep -qE "${name}:${line}:[0-9]+: (error|required from here)|${name}:${line}:[0-9]+:   (required from here|in .{1,3}constexpr.{1,3} expansion of)"; then
  echo "case $case of $file failed to compile, but not at line $line (the marked line). Diagnostics:"
  echo "$out" | head -40
  exit 1
fi
if ! echo "$out" | grep -qE -- "$message"; then
  echo "case $case of $file failed at line $line, but no diagnostic matches: $message"
  echo "$out" | head -40
  exit 1
fi
echo "case $case of $file fails at line $line with: $(echo "$out" | grep -E -- "$message" | head -1)"
