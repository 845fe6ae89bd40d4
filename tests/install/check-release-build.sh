#!/usr/bin/env bash
# The library configured and built as a user builds it, in Release
# (-O3 -DNDEBUG: the optimizer's flow analysis sees more than the test
# suite's build does, e.g. -Wmaybe-uninitialized), with -Werror, in a
# scratch directory: only the library's objects, so it stays short.
# Usage: check-release-build.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d "$build/release-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake -S "$src" -B "$work" -DCMAKE_BUILD_TYPE=Release -DHT_WERROR=ON \
  -DHT_BUILD_TESTS=OFF -DHT_BUILD_BENCH=OFF -DHT_BUILD_EXAMPLES=OFF \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work" --target hoptrace_objects -j2
echo "release build check passed"
