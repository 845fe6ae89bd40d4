#!/usr/bin/env bash
# The control socket of a real traced process (traced_node) under careless
# and hostile clients, driven by the real `hoptrace ctl`:
#  - idle and half-sent connections (more of them than the socket serves
#    at once) never delay a `ctl` command;
#  - a newline or control byte inside an argument is refused by ctl;
#  - ctl against a socket that never accepts, and one that accepts but
#    never answers, fails (exit 2) within its --timeout;
#  - a command ctl reported as failed (the process was stopped, SIGSTOP)
#    is not applied when the process continues;
#  - `ctl --each DIR` asks every socket of a directory (a cluster's), each
#    answer after its socket's name, and fails when one does not answer.
# usage: control_clients.sh NODE HOPTRACE PROVIDER WORKDIR
# HT_TEST_WRAPPER="valgrind ..." runs traced_node and every ctl under it
# (scripts/valgrind.sh); HT_TEST_SLOW=1 then widens the time bounds.
set -euo pipefail
node=$1 hoptrace=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
sockdir=$(mktemp -d /tmp/ht-ctl-clients-XXXXXX)
sock=$sockdir/node.sock
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$sockdir"
}
trap cleanup EXIT
export HT_LTTNG_PROVIDER=$provider
unset HT_SAMPLER HT_SAMPLE_RATIO HT_SAMPLE_RATE HT_TRUST_REMOTE_DEBUG
# quick_ms: a ctl behind idle clients would wait out its --timeout 30;
# 5 s tells that apart with room for a loaded machine (ASan at load 11
# took 1,027 ms). late_ms: how late a ctl --timeout 1 may return and
# still count as timed out rather than hung (the wrapper's 60 s): at
# load 15 it returned after 2,300 ms.
wrap=() quick_ms=5000 late_ms=4000 ticks=100
[[ -n ${HT_TEST_WRAPPER:-} ]] && read -ra wrap <<< "$HT_TEST_WRAPPER"
[[ -n ${HT_TEST_SLOW:-} ]] && quick_ms=8000 late_ms=6000 ticks=600
ctl() { "${wrap[@]}" "$hoptrace" ctl "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
ms() { date +%s%3N; }
ratio_is() { # RATIO: the process's ratio, asked with ctl
  local s
  s=$(ctl --timeout 30 "$sock" status)
  [[ $s == *" ratio=$1 "* || $s == *" ratio=$1"0* ]] || { echo "status: $s" >&2; return 1; }
}

HT_MESSENGER=traced HT_SAMPLER=ratio HT_SAMPLE_RATIO=1 HT_CONTROL_SOCKET=$sock \
  "${wrap[@]}" "$node" server --name N --url-file "$work/url" 2> "$work/node.log" &
node_pid=$!
pids+=("$node_pid")
for ((t = 0; t < ticks; t++)); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || { cat "$work/node.log" >&2; fail "no control socket"; }

# --- 1: idle clients hold connections (12: more than are served at once)
python3 - "$sock" 12 "$work/holding" <<'PY' &
import socket, sys, time
conns = []
for i in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    if i % 3 == 1:
        s.send(b"sample 0.")        # half a line, never finished
    elif i % 3 == 2:
        s.send(b"status\n" * 50)    # asks, never reads the answers
    conns.append(s)
open(sys.argv[3], "w").close()
time.sleep(30)
PY
holder=$!
pids+=("$holder")
for ((t = 0; t < ticks; t++)); do [[ -f $work/holding ]] && break; sleep 0.1; done
[[ -f $work/holding ]] || fail "the idle clients did not connect"
for r in 0.25 0.5 0.25; do
  t0=$(ms)
  ctl --timeout 30 "$sock" sample "$r" > "$work/ctl.out" || fail "ctl sample $r with idle clients"
  took=$(( $(ms) - t0 ))
  echo "ctl sample $r with 12 idle clients connected: ${took} ms"
  (( took < quick_ms )) || fail "ctl took ${took} ms behind idle clients"
done
ratio_is 0.25 || fail "ratio not 0.25"
kill "$holder"; wait "$holder" 2>/dev/null || true

# --- 2: a newline or control byte inside an argument
for bad in $'0.5\nsample 0.9' $'0.5\rx' $'0.5\tx' $'0.5\x7f'; do
  rc=0
  ctl "$sock" sample "$bad" > /dev/null 2> "$work/bad.err" || rc=$?
  [[ $rc == 2 ]] || fail "ctl with a control byte in an argument: exit $rc, want 2"
  grep -q "printable ASCII" "$work/bad.err" || fail "no reason given: $(cat "$work/bad.err")"
done
ratio_is 0.25 || fail "a refused argument changed the ratio"
echo "control bytes in arguments refused, nothing applied"

# --- 3: sockets that never accept / never answer
python3 - "$sockdir/mute.sock" "$sockdir/full.sock" "$work/listening" <<'PY' &
import socket, sys, time
mute = socket.socket(socket.AF_UNIX)   # accepts (backlog) but never answers
mute.bind(sys.argv[1]); mute.listen(8)
full = socket.socket(socket.AF_UNIX)   # backlog full: connect would wait
full.bind(sys.argv[2]); full.listen(0)
held = []
try:
    while True:
        c = socket.socket(socket.AF_UNIX); c.setblocking(False)
        c.connect(sys.argv[2]); held.append(c)
except BlockingIOError:
    pass
open(sys.argv[3], "w").close()
time.sleep(30)
PY
listener=$!
pids+=("$listener")
for ((t = 0; t < 100; t++)); do [[ -f $work/listening ]] && break; sleep 0.1; done
for s in mute full; do
  t0=$(ms) rc=0
  timeout 60 "${wrap[@]}" "$hoptrace" ctl --timeout 1 "$sockdir/$s.sock" status 2> "$work/$s.err" || rc=$?
  took=$(( $(ms) - t0 ))
  echo "ctl --timeout 1 against a socket that $s: exit $rc after ${took} ms ($(cat "$work/$s.err"))"
  [[ $rc == 2 ]] || fail "ctl against $s: exit $rc, want 2"
  (( took >= 900 && took < 1000 + late_ms )) || fail "ctl against $s returned after ${took} ms, want ~1000"
done
kill "$listener"; wait "$listener" 2>/dev/null || true

# --- 4: a command reported as failed is not applied later
kill -STOP "$node_pid"
rc=0
ctl --timeout 1 "$sock" sample 0.75 2> "$work/stopped.err" || rc=$?
[[ $rc == 2 ]] || fail "ctl to a stopped process: exit $rc, want 2"
cat "$work/stopped.err"
kill -CONT "$node_pid"
sleep 0.5
ratio_is 0.25 || fail "the command ctl reported as failed was applied after SIGCONT"
ctl --timeout 30 "$sock" sample 0.5 > /dev/null
ratio_is 0.5 || fail "ctl after the stop"
echo "a command ctl reported failed was not applied when the process continued"

# --- 5: one command to every process of a directory: a capture by hand
# (a directory of its own: the dead listeners of part 3 left theirs)
mkdir "$sockdir/each"
ln -s ../node.sock "$sockdir/each/node.sock"
HT_MESSENGER=traced HT_CONTROL_SOCKET=$sockdir/each/other.sock \
  "${wrap[@]}" "$node" server --name O --url-file "$work/url2" 2> "$work/node2.log" &
pids+=("$!")
for ((t = 0; t < ticks; t++)); do [[ -S $sockdir/each/other.sock ]] && break; sleep 0.1; done
touch "$sockdir/each/not-a-socket"
ctl --timeout 30 --each "$sockdir/each" capture > "$work/each.txt" || fail "ctl --each: exit $?"
cat "$work/each.txt"
[[ $(grep -c ': ok .*captures_fired=1 ' "$work/each.txt") == 2 ]] || fail "ctl --each: not both captured"
kill -STOP "${pids[-1]}"
rc=0
ctl --timeout 1 --each "$sockdir/each" status > /dev/null 2> "$work/each.err" || rc=$?
kill -CONT "${pids[-1]}"
[[ $rc == 2 ]] || fail "ctl --each with a stopped process: exit $rc, want 2"
grep -q "no answer from $sockdir/each/other.sock" "$work/each.err" || fail "ctl --each: the silent one not named"
echo "ctl --each: every process asked, a silent one named"
kill -TERM "${pids[-1]}"
wait "${pids[-1]}" || fail "the second traced_node's exit status $?"
unset 'pids[-1]'

kill -TERM "$node_pid"
wait "$node_pid" || fail "traced_node exit status $?"
pids=()
[[ ! -e $sock ]] || fail "control socket left behind"
echo "control_clients: all passed"
