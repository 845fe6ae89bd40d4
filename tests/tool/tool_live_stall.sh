#!/usr/bin/env bash
# A relay that stops answering under `hoptrace export --follow`: our own
# lttng-relayd, a live session, three followers attached; the relay is
# stopped (SIGSTOP, its pid only). babeltrace2's lttng-live source then
# blocks in recv(): SIGINT and SIGTERM used to be ignored, only SIGKILL
# ended the follower. Now: SIGINT and SIGTERM end a follower within 2 s
# (exit 130, 143), and one left alone reports the stalled relay within
# the stall bound (10 s, read/live_watch.h) plus 3 s and exits 1.
# usage: tool_live_stall.sh HOPTRACE WORKLOAD PROVIDER WORKDIR TESTS_TOOL_DIR
set -euo pipefail
trap 'echo "tool_live_stall: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
hoptrace=$1 workload=$2 provider=$3 work=$4 here=$5
source "$here/../../scripts/lttng-env.sh"
ht_private_world "$0" "$@"
session=hoptrace-stall-$$
pids=() workload_pid=""
cleanup() {
  for p in "${pids[@]}" $workload_pid; do kill -KILL "$p" 2>/dev/null || true; done
  [[ -n ${HT_LIVE_RELAYD:-} ]] && kill -CONT "$HT_LIVE_RELAYD" 2>/dev/null
  # a session that streamed to the stopped relay may never finish
  # destroying (lttng's, 40 s seen): bounded
  for f in a b c; do timeout 10 lttng destroy "$session$f" >/dev/null 2>&1 || true; done
  ht_live_session_end
  ht_sessiond_release
}
trap cleanup EXIT
# one viewer a session: a session for each follower, on one relay
ht_live_open "$work" "$provider" "${session}a"
for f in b c; do ht_live_session_add "$work" "$session$f" 4 trace_workload; done
url="net://127.0.0.1:$HT_LIVE_PORT/host/$(hostname)/$session"
for f in a b c; do
  "$hoptrace" export --format zipkin --follow --grace 0.5 -o "$work/$f.json" "$url$f" \
    2> "$work/$f.log" &
  pids+=($!)
done
"$workload" --warm-up --traces 1 --fanout 1 --pause-us 100000 --expect "$work/expect.txt" &
workload_pid=$!
names=(a b c)
for i in 0 1 2; do
  ht_live_attached "$work/${names[i]}.json" "$work/${names[i]}.log" "${pids[i]}"
done
kill -STOP "$HT_LIVE_RELAYD"
stopped=$(date +%s%N)
sleep 2 # the followers' next request waits on the stopped relay
ended_within() { # pid, ms: the exit status in rc, or fail
  local end=$(( $(date +%s%N) + $2 * 1000000 ))
  while kill -0 "$1" 2>/dev/null && (( $(date +%s%N) < end )); do sleep 0.05; done
  kill -0 "$1" 2>/dev/null && return 1
  rc=0
  wait "$1" || rc=$?
}
kill -INT "${pids[1]}"
ended_within "${pids[1]}" 2000 || { echo "SIGINT did not end a follower within 2 s" >&2; exit 1; }
[[ $rc -eq 130 ]] || { echo "SIGINT: exit $rc" >&2; cat "$work/b.log" >&2; exit 1; }
kill -TERM "${pids[2]}"
ended_within "${pids[2]}" 2000 || { echo "SIGTERM did not end a follower within 2 s" >&2; exit 1; }
[[ $rc -eq 143 ]] || { echo "SIGTERM: exit $rc" >&2; cat "$work/c.log" >&2; exit 1; }
left=$(( 13000 - ($(date +%s%N) - stopped) / 1000000 ))
ended_within "${pids[0]}" "$left" ||
  { echo "a stalled relay not reported within 13 s" >&2; cat "$work/a.log" >&2; exit 1; }
took=$(( ($(date +%s%N) - stopped) / 1000000 ))
[[ $rc -eq 1 ]] || { echo "stalled relay: exit $rc" >&2; cat "$work/a.log" >&2; exit 1; }
grep -q "the relay of ${url}a stalled: no answer for 10 s" "$work/a.log" ||
  { cat "$work/a.log" >&2; exit 1; }
pids=()
kill -CONT "$HT_LIVE_RELAYD"
echo "tool live stall test passed (the stall reported $took ms after the relay stopped)"
