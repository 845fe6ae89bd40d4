#!/usr/bin/env bash
# Runs bench_messenger with a created (not started) LTTng session for its
# recording cell; starts lttng-sessiond if absent and stops only the one
# it started; destroys only its own session.
#   bench/messenger/run.sh [BUILD_DIR] [SECONDS_PER_CELL] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
source "$root/scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own
session="ht-bench-msg-$$-$RANDOM"
out=$(mktemp -d /tmp/ht-bench-msg-XXXXXX)
cleanup() {
  timeout 30 lttng destroy "$session" >/dev/null 2>&1 || true
  rm -rf "$out"
  ht_sessiond_release
}
trap cleanup EXIT
ht_sessiond_ensure
lttng create "$session" --output="$out/trace" >/dev/null
lttng enable-channel -u -s "$session" --subbuf-size=4M --num-subbuf=8 hoptrace >/dev/null
lttng enable-event -u -s "$session" -c hoptrace 'hoptrace:*' >/dev/null
HT_BENCH_SESSION=$session HT_LTTNG_PROVIDER="$build/libhoptrace-tp.so.0" \
  timeout 900 "$build/bench/messenger/bench_messenger" "${2:-2}" "${3:-3}"
# how much the recording cell wrote, and whether LTTng had to drop any
lttng stop "$session" >/dev/null 2>&1 || true
events=$(timeout 300 babeltrace2 "$out/trace" 2>"$out/bt.err" | wc -l || true)
results="$root/bench/results/messenger.txt"
echo "recording cell: $events events in the session (every process of this host that recorded hoptrace:* meanwhile); $(grep -ci discarded "$out/bt.err" || true) discard warnings" \
  | tee -a "$results"
# req/s ratios mean little when other work shares the CPUs: say how busy
echo "load average after the run (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs" \
  | tee -a "$results"
# Closing note: where the traced messenger's time goes, in exact
# instruction counts (wall-clock ratios on a shared 2-CPU machine move by
# 10-20 % between runs; the "cpu x" column and this attribution do not).
{
  echo
  echo "## where the cost goes (callgrind, bench/messenger/attribute.sh: plain vs traced 0 %)"
  "$root/bench/messenger/attribute.sh" "$build" 0 1 8 a | head -22
  echo
  "$root/bench/messenger/attribute.sh" "$build" 0 1 8 so | head -12
} | tee -a "$results"
