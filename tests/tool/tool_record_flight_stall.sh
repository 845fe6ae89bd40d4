#!/usr/bin/env bash
# `hoptrace record --flight` when the session daemon stops answering
# (SIGSTOP: alive, its sockets open, nothing answered): record must end
# within a stated bound (STALL_BOUND_S from the stop), exit 3, say which
# daemon stopped answering and what of the recording remains on it, with
# no helper or thread left waiting on the daemon. Two daemons: the one
# record starts for itself (stopped: record sees it by waitpid), and a
# daemon of this test's own used with --shared-sessiond (record sees it
# only by asking it). The test stops only daemons it (or its record)
# started, by the pids it was told.
# usage: tool_record_flight_stall.sh HOPTRACE FLIGHT_FIRE PROVIDER WORKDIR SRCDIR
set -euo pipefail
src=$(cd "$5" && pwd)
source "$src/../../scripts/lttng-env.sh"
hoptrace=$1 fire=$2 provider=$3 work=$4
stopped="" own_sd=""
cleanup() {
  [[ -n $stopped ]] && kill -CONT "$stopped" 2>/dev/null
  # record's own daemon, when record failed to end it: its process group
  [[ -n $own_sd ]] && kill -KILL -- "-$own_sd" 2>/dev/null
  ht_private_world_end
}
ht_test_open "$work" "$provider" cleanup "$0" "$@"
# README: record ends within 15 s of its own daemon's stop (waitpid sees
# it at once), 20 s of a shared one's (the next check, --daemon-timeout's
# 10 s to answer, the snapshot given up after 1 s, then room)
STALL_BOUND_S=15

# run NAME PID-OF-DAEMON-OR-EMPTY ARGS...: record --flight ARGS with a
# 20 s command (200 captures 100 ms apart); once its trigger is set and a
# snapshot written, SIGSTOP the daemon (record's own, read from its log,
# when none is given); checks the bound and the exit
run() {
  local name=$1 sd=$2 rec t rc=0 t0 t1
  shift 2
  "$hoptrace" record --flight -o "$work/$name" "$@" -- "$fire" 200 100000 \
    > "$work/$name.out" 2> "$work/$name.log" &
  rec=$!
  for ((t = 0; t < 300; t++)); do
    grep -q 'flight recorder: trigger' "$work/$name.log" && break
    sleep 0.1
  done
  sleep 1.5
  [[ -n $sd ]] || { sd=$(sed -n 's/^hoptrace: started lttng-sessiond (pid \([0-9]*\))$/\1/p' \
                           "$work/$name.log"); own_sd=$sd; }
  [[ -n $sd ]] || { cat "$work/$name.log" >&2; echo "no daemon pid" >&2; exit 1; }
  t0=$(date +%s.%N)
  kill -STOP "$sd"
  stopped=$sd
  # record's bound, plus room: past it, record is stopped and the test fails
  if ! ht_wait_gone "$rec" $((STALL_BOUND_S + 10)); then
    cat "$work/$name.log" >&2
    echo "$name: record still runs $((STALL_BOUND_S + 10)) s after its daemon stopped" >&2
    kill -KILL "$rec"
    wait "$rec" || true
    exit 1
  fi
  wait "$rec" || rc=$?
  t1=$(date +%s.%N)
  cat "$work/$name.log"
  python3 -c "import sys; d=float(sys.argv[2])-float(sys.argv[1]); print('$name: record ended %.1f s after the stop' % d); sys.exit(d > $STALL_BOUND_S)" "$t0" "$t1" ||
    { echo "$name: past the bound of $STALL_BOUND_S s" >&2; exit 1; }
  [[ $rc == 3 ]] || { echo "$name: exit $rc, want 3" >&2; exit 1; }
  grep -q 'stopped answering' "$work/$name.log" ||
    { echo "$name: no message saying the daemon stopped answering" >&2; exit 1; }
  # what record could not do is said, with what remains
  python3 - "$work/$name/capture.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["triggers_fired"] > 0 and c["snapshots"] > 0, c
assert c["triggers_fired"] == c["snapshots"] + c["coalesced"] + c["dropped"], c
print("counts: %d fired, %d snapshots, %d coalesced, %d dropped" % (
    c["triggers_fired"], c["snapshots"], c["coalesced"], c["dropped"]))
PY
}

# --- record's own daemon stopped: gone after record (its process group
# killed), nothing of it left
run own ""
sd=$stopped
ht_wait_gone "$sd" ||
  { echo "record's own daemon (pid $sd) outlived record" >&2; exit 1; }
stopped="" own_sd=""

# --- a daemon of this test's own, shared: record names the session and
# the trigger it leaves there; once the daemon answers again, removing
# them is the operator's (done here as the message says)
ht_sessiond_ensure
STALL_BOUND_S=20
run shared "$HT_STARTED_SESSIOND" --shared-sessiond --name stall-shared
grep -q 'lttng destroy stall-shared' "$work/shared.log"
trig=$(sed -n "s/.*lttng remove-trigger \([^ ']*\).*/\1/p" "$work/shared.log" | head -1)
[[ -n $trig ]] || { echo "shared: the trigger left behind is not named" >&2; exit 1; }
kill -CONT "$stopped"
stopped=""
lttng destroy stall-shared > /dev/null
lttng remove-trigger "$trig" > /dev/null
echo "tool_record_flight_stall: ok"
