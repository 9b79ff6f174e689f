#!/usr/bin/env bash
# kiln as a dependency, the three ways docs/index.md lists, with tests/consumer, an outside project
# with its own program named `saxpy`:
#   1. kiln configured as a library only, built, installed into a prefix that is then moved (the
#      package must be relocatable), and found with find_package(kiln 0.1 CONFIG);
#   2. add_subdirectory of this source tree;
#   3. FetchContent from a git repository (file://, no network) holding this working tree.
# 1 and 3 build kiln's libraries and `saxpy` and run it on the CPU device. 2 is configured only
# (where tests/consumer checks the targets kiln defines and its build type): FetchContent adds the
# fetched tree with add_subdirectory, so 3's build is 2's, and building it twice cost CI 85 s.
# GoogleTest and Google Benchmark are disabled throughout: kiln as a dependency must not look for
# them. No build type is chosen for the consumers (kiln must not choose one for them), so kiln
# compiles unoptimised there, which is also the quickest build.
#   tests/consumer/run.sh [WORK_DIR]    (default: a temporary folder, removed afterwards)
#   KILN_INSTALL_FROM=build tests/consumer/run.sh    (1. installs from that built folder)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
if [[ $# -ge 1 ]]; then
  work=$(mkdir -p "$1" && cd "$1" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
no_test_deps=(-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON)
# Ninja where it is installed, as the Makefile (all of these folders are new).
if command -v ninja >/dev/null 2>&1; then no_test_deps+=(-G Ninja); fi
# KILN_CONSUMER_CXX: the compiler of the consumers' builds (the default one when unset).
if [[ -n ${KILN_CONSUMER_CXX:-} ]]; then no_test_deps+=(-DCMAKE_CXX_COMPILER="$KILN_CONSUMER_CXX"); fi
start=$(date +%s)

# Runs a command with its output in $work/LOG.log, shown only if it fails.
quiet() {
  local log=$work/$1.log
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; echo "consumer: failed: $*" >&2; return 1; }
}

# Builds tests/consumer into $work/NAME with the given configure arguments, runs its `saxpy`, and
# checks that no kiln example, tool, test or benchmark was built.
consumer() {
  local name=$1
  shift
  local t0=$(date +%s)
  quiet "$name-configure" cmake -S "$src/tests/consumer" -B "$work/$name" "${no_test_deps[@]}" "$@"
  quiet "$name-build" cmake --build "$work/$name" -j"$jobs"
  local built
  built=$(find "$work/$name" -type f \( -name 'kiln_example_*' -o -name add_variants -o -name checked_oob \
    -o -name kiln -o -name 'kiln_*_tests' -o -name kiln_cpu_bench -o -name 'libkiln_gallery*' \))
  if [[ -n $built ]]; then
    echo "consumer: $name built more of kiln than its libraries:" >&2
    echo "$built" >&2
    return 1
  fi
  "$work/$name/saxpy"
  echo "consumer: $name passed in $(($(date +%s) - t0)) s"
}

# 1. Installed package: from KILN_INSTALL_FROM, a build folder of this tree that is already built
# (CI's main one: installing needs no second build of the libraries), or from a build of kiln as
# a library only.
t0=$(date +%s)
if [[ -n ${KILN_INSTALL_FROM:-} ]]; then
  kiln_build=$(cd "$KILN_INSTALL_FROM" && pwd)
  quiet kiln-build cmake --build "$kiln_build" -j"$jobs"
else
  kiln_build=$work/kiln-build
  quiet kiln-configure cmake -S "$src" -B "$kiln_build" "${no_test_deps[@]}" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_EXAMPLES=OFF -DKILN_BUILD_TOOLS=OFF \
    -DKILN_BUILD_BENCH=OFF
  quiet kiln-build cmake --build "$kiln_build" -j"$jobs"
fi
quiet kiln-install cmake --install "$kiln_build" --prefix "$work/staged"
if find "$work/staged" -path '*/include/*' -type f ! -path '*/include/kiln/*' | grep -q .; then
  echo "consumer: headers installed outside include/kiln" >&2
  exit 1
fi
rm -rf "$work/prefix"
mv "$work/staged" "$work/prefix"
echo "consumer: kiln built and installed in $(($(date +%s) - t0)) s"
consumer package -DKILN_CONSUME=package -DCMAKE_PREFIX_PATH="$work/prefix"

# 2. add_subdirectory, configured (the checks of tests/consumer/CMakeLists.txt run then).
t0=$(date +%s)
quiet subdirectory-configure cmake -S "$src/tests/consumer" -B "$work/subdirectory" "${no_test_deps[@]}" \
  -DKILN_CONSUME=subdirectory -DKILN_SOURCE_DIR="$src"
echo "consumer: subdirectory configured in $(($(date +%s) - t0)) s"

# 3. FetchContent from a git repository of the working tree as it is (tracked and new files).
repo=$work/kiln-git
rm -rf "$repo"
mkdir -p "$repo"
git -C "$src" ls-files -z --cached --others --exclude-standard |
  tar -C "$src" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$repo" -xf -
quiet kiln-git git -C "$repo" init -q
quiet kiln-git git -C "$repo" add -A
quiet kiln-git git -C "$repo" -c user.name=kiln -c user.email=kiln@localhost commit -q -m "kiln working tree"
consumer fetchcontent -DKILN_CONSUME=fetchcontent -DKILN_GIT_URL="file://$repo" \
  -DKILN_GIT_TAG="$(git -C "$repo" rev-parse HEAD)"

echo "consumer: all three ways passed in $(($(date +%s) - start)) s"
