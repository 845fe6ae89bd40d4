#!/usr/bin/env bash
# A session enabling only hoptrace:span (not span_k, not tag_i) still gets
# every span side whole: a server side carrying its handler's key-value
# falls back to a `span` event (its key-value is then lost with tag_i
# disabled, the side is not). One with span_k alone gets both sides too.
# usage: span_only_session.sh SRC NODE PROVIDER WORKDIR
set -euo pipefail
src=$1 node=$2 provider=$3 work=$4
source "$src/scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own

run_id="ht-span-only-$$-$RANDOM"
base="$work/$run_id"
rm -rf "$work" && mkdir -p "$base"
created=()
cleanup() {
  for s in "${created[@]}"; do
    [[ -n "$s" ]] && timeout 30 lttng destroy "$s" >/dev/null 2>&1 || true
  done
  ht_sessiond_release
}
trap cleanup EXIT
ht_sessiond_ensure
export HT_LTTNG_PROVIDER=$provider
n=20

# record NAME EVENTS...: the workload with only those events enabled
record() {
  local name=$1 s="$run_id-$1"
  shift
  timeout 30 lttng create "$s" --output="$base/$name" >/dev/null
  created+=("$s")
  for ev in "$@"; do
    timeout 30 lttng enable-event -u -s "$s" "$ev" \
      --filter '$ctx.procname == "ht_span_only"' >/dev/null
  done
  timeout 30 lttng start "$s" >/dev/null
  timeout 60 "$node" "$n" >"$base/$name.stdout"
  timeout 60 lttng stop "$s" >/dev/null
  timeout 30 lttng destroy "$s" >/dev/null
  created=("${created[@]/$s}")
  timeout 60 babeltrace2 "$base/$name" >"$base/$name.txt"
}

# count FILE EVENT: how many events of that name
count() { grep -c "hoptrace:$2: " "$1" || true; }

record span 'hoptrace:span'
got=$(count "$base/span.txt" span)
[[ $got -eq $((2 * n)) ]] || {
  echo "FAIL: span alone: $got span sides for $n requests (want $((2 * n)): client and server)" >&2
  exit 1; }
echo "span alone: $got sides for $n requests, both sides of each"

record span_k 'hoptrace:span_k'
got=$(count "$base/span_k.txt" span_k)
[[ $got -eq $n ]] || {
  echo "FAIL: span_k alone: $got server sides with their key-value for $n requests" >&2
  exit 1; }
echo "span_k alone: $got server sides with their key-value"
echo "span_only_session: all passed"
