#!/usr/bin/env bash
# Integration test with a real LTTng session: the driver builds a span
# tree; babeltrace2 reads it back; check_trace.py asserts every event, id
# and parent. Then: an unsampled tree records nothing, and a program whose
# provider cannot be loaded (or is turned off) runs untraced.
# Starts lttng-sessiond only when absent and stops only what it started;
# creates uniquely named sessions and destroys exactly those.
#   lttng_span_tree.sh SOURCE_DIR WORK_DIR DRIVER PROVIDER_SO SHARED_DRIVER
# DRIVER links the static library, SHARED_DRIVER the shared one (found
# next to the provider: the default search, no HT_LTTNG_PROVIDER).
set -euo pipefail
src=$1 work=$2 driver=$3 provider=$4 shared_driver=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$src/scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own

run_id="ht-span-tree-$$-$RANDOM"
base="$work/lttng/$run_id"
mkdir -p "$base"
created=()

cleanup() {
  for s in "${created[@]}"; do
    timeout 30 lttng destroy "$s" >/dev/null 2>&1 || true
  done
  ht_sessiond_release
  rm -rf "$base"
}
trap cleanup EXIT
ht_sessiond_ensure

# record NAME MODE EXPECT(tree|empty) WANT_PROVIDER [env...]
# ($prog is the driver to run.) The loader's constructor has already
# reached the final state before main() calls ht_tracing_init().
prog=$driver
record() {
  local name=$1 mode=$2 expect=$3 want=$4
  shift 4
  local s="$run_id-$name" out="$base/$name"
  timeout 30 lttng create "$s" --output="$out/trace" >/dev/null
  created+=("$s")
  # Only the driver's events: other processes of this user may emit
  # hoptrace events while the session records (per-user buffers).
  timeout 30 lttng enable-event -u -s "$s" 'hoptrace:*' \
    --filter '$ctx.procname == "ht_span_tree*"' >/dev/null
  timeout 30 lttng start "$s" >/dev/null
  env "$@" timeout 60 "$prog" "$mode" "$out/expected" >"$out/stdout"
  timeout 60 lttng stop "$s" >/dev/null
  timeout 30 lttng destroy "$s" >/dev/null
  created=("${created[@]/$s}")
  grep -qx "provider=$want" "$out/stdout" && grep -qx "before_init=$want" "$out/stdout" || {
    echo "FAIL $name: expected provider=$want before_init=$want, got: $(cat "$out/stdout")" >&2
    exit 1
  }
  # A stream file with no packet (another process of this user registered
  # while every event was filtered out) is no event, and babeltrace2
  # refuses it: read only traces that hold data.
  if [[ -n $(find "$out/trace" -type f -name 'channel*' -size +0 2>/dev/null) ]]; then
    timeout 60 babeltrace2 "$out/trace" >"$out/events.txt"
  else
    : >"$out/events.txt" # no application ever registered: nothing recorded
  fi
  echo "== $name ($(wc -l <"$out/events.txt") events)"
  python3 "$here/check_trace.py" "$out/events.txt" "$out/expected" "$expect"
}

record sampled sampled tree loaded HT_LTTNG_PROVIDER="$provider"
record unsampled unsampled empty loaded HT_LTTNG_PROVIDER="$provider"
if [[ -s "$base/unsampled/expected" ]]; then
  echo "FAIL: the unsampled tree emitted events" >&2
  exit 1
fi
record no_provider sampled empty missing \
  HT_LTTNG_PROVIDER="$base/does-not-exist/libhoptrace-tp.so.0"
record lttng_off sampled empty disabled HT_LTTNG=0 HT_LTTNG_PROVIDER="$provider"
# Not loaded by us but preloaded: recorded all the same. (ASan wants to
# be first in the library list; a preloaded instrumented provider isn't.)
record preload sampled tree disabled HT_LTTNG=0 LD_PRELOAD="$provider" \
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
# Shared library: its constructor loads the provider found next to it.
prog=$shared_driver
record shared_default sampled tree loaded HT_LTTNG_PROVIDER=
echo "PASS"
