#!/usr/bin/env bash
# The live path: our own lttng-relayd on loopback ports, a live session,
# and `hoptrace export --follow` reading it through babeltrace2's
# lttng-live source while the workload runs. The first traces must arrive
# before the workload ends, and all of them by the session's end.
# Starts lttng-sessiond only when none runs and stops only what it started
# (a bare `lttng create` would spawn one and leave it behind).
# usage: tool_live.sh HOPTRACE WORKLOAD PROVIDER WORKDIR TESTS_TOOL_DIR
set -euo pipefail
trap 'echo "tool_live: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
hoptrace=$1 workload=$2 provider=$3 work=$4 here=$5
source "$here/../../scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own
session=hoptrace-live-$$
follower=""
cleanup() {
  [[ -n "$follower" ]] && kill "$follower" 2>/dev/null || true
  lttng destroy "$session" >/dev/null 2>&1 || true
  ht_live_session_end
  ht_sessiond_release
}
trap cleanup EXIT
ht_live_open "$work" "$provider" "$session"

url="net://127.0.0.1:$HT_LIVE_PORT/host/$(hostname)/$session"
timeout 120 "$hoptrace" export --format zipkin --follow --grace 0.5 --timeout 5 \
  -o "$work/live.json" "$url" 2> "$work/follow.log" &
follower=$!

# Warm-up traces until the follower shows it is attached (lttng-live
# starts reading at the live position), then 40 traces over ~8 s.
"$workload" --warm-up --traces 40 --fanout 1 --pause-us 200000 --expect "$work/expect.txt" &
workload_pid=$!
ht_live_attached "$work/live.json" "$work/follow.log" "$follower"
kill -USR1 "$workload_pid"
sleep 0.5
seen_during_run=0
while kill -0 "$workload_pid" 2>/dev/null; do
  # an expected trace (not a warm-up one) already written
  if grep -q "$(head -c 32 "$work/expect.txt" 2>/dev/null || echo none)" "$work/live.json" 2>/dev/null \
     && [[ -s "$work/expect.txt" ]]; then
    seen_during_run=1
  fi
  sleep 0.2
done
wait "$workload_pid"
echo "traces seen while the workload ran: $seen_during_run"
sleep 2
lttng stop "$session" >/dev/null
lttng destroy "$session" >/dev/null
wait "$follower"
follower=""
cat "$work/follow.log"
[[ $seen_during_run -eq 1 ]]
python3 - "$work/live.json" "$work/expect.txt" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
want = {tuple(l.split()[:2]) for l in open(sys.argv[2])}
traces = {t for t, _ in want}
# the session records every process of the user: keep this workload's traces
got = {(s["traceId"].rjust(32, "0"), s["id"]) for s in spans
       if s["traceId"].rjust(32, "0") in traces}
assert got == want, "live: %d spans, want %d" % (len(got), len(want))
print("live: all %d spans of %d traces received" % (len(got), len({t for t, _ in want})))
PY
echo "tool live test passed"
