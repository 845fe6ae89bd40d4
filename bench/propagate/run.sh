#!/usr/bin/env bash
# Runs bench_propagate once with the provider from BUILD_DIR, starting
# lttng-sessiond if absent (and stopping only the one it started).
#   bench/propagate/run.sh [BUILD_DIR]     (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
source "$root/scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own
ht_sessiond_ensure
trap ht_sessiond_release EXIT
HT_LTTNG_PROVIDER="$build/libhoptrace-tp.so.0" \
  timeout 600 "$build/bench/propagate/bench_propagate" "$build"
