#!/usr/bin/env bash
# `hoptrace record --flight` when the session daemon does not answer
# during set-up, or answers nothing while alive and not stopped: record
# ends within its bound (--daemon-timeout, 10 s by default, plus room),
# exit 3, says which daemon (whose, its pid when record's own) did not
# answer at which step, and names what it leaves on a shared daemon.
#   before:   a shared daemon stopped (SIGSTOP) before record starts
#   register: record's own daemon stopped once `lttng start` returned:
#             the trigger's registration (liblttng-ctl) waits on it
#   cli:      a shared daemon stopped once `lttng create` returned
#   held:     no daemon, a process holding its command socket that
#             accepts and never answers (a deadlocked daemon)
#   deadlock: record's own daemon left running, its command socket taken
#             over mid-run by such a holder: seen by answer time, not by
#             its process state
# The stops come from a `lttng` wrapper first in PATH (after the named
# command succeeded), by the pid the test started or record printed.
# usage: tool_record_flight_setup_stall.sh HOPTRACE FLIGHT_FIRE PROVIDER WORKDIR SRCDIR
set -euo pipefail
src=$(cd "$5" && pwd)
source "$src/../../scripts/lttng-env.sh"
hoptrace=$1 fire=$2 provider=$3 work=$4
stopped="" own_sd="" holder=""
cleanup() {
  [[ -n $stopped ]] && kill -CONT "$stopped" 2>/dev/null
  [[ -n $own_sd ]] && kill -KILL -- "-$own_sd" 2>/dev/null
  [[ -n $holder ]] && kill -KILL "$holder" 2>/dev/null
  ht_private_world_end
}
ht_test_open "$work" "$provider" cleanup "$0" "$@"
mkdir "$work/bin"
SLACK_S=12 # room past record's bound: fork/exec and teardown under load

# the wrapper: lttng, then SIGSTOP the daemon once the command named in
# HT_STALL_AFTER succeeded (pid HT_STALL_PID, or the one record's log
# HT_STALL_LOG says it started), once (HT_STALL_DONE gets the pid)
cat > "$work/bin/lttng" <<EOF
#!/usr/bin/env bash
$(command -v lttng) "\$@"
rc=\$?
if [[ \$rc == 0 && -n \${HT_STALL_AFTER:-} && " \$* " == *" \$HT_STALL_AFTER "* &&
      ! -s \$HT_STALL_DONE ]]; then
  pid=\${HT_STALL_PID:-\$(sed -n 's/^hoptrace: started lttng-sessiond (pid \([0-9]*\))\$/\1/p' \
                        "\$HT_STALL_LOG")}
  kill -STOP "\$pid" && echo "\$pid" > "\$HT_STALL_DONE"
fi
exit \$rc
EOF
chmod +x "$work/bin/lttng"

# the holder: listens on SOCKET (moving a socket there to SOCKET.real
# first), accepts every connection and never answers
hold() {
  python3 - "$1" "$work/holder.ready" <<'PY' &
import os, socket, sys
path, ready = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.rename(path, path + ".real")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(64)
open(ready, "w").write("ready\n")
held = []
while True:
    held.append(s.accept()[0])
PY
  holder=$!
  for ((t = 0; t < 100; t++)); do
    [[ -s $work/holder.ready ]] && return 0
    sleep 0.1
  done
  echo "the socket holder did not start" >&2
  exit 1
}
unhold() {
  kill -KILL "$holder" && wait "$holder" 2>/dev/null || true
  holder=""
  rm -f "$work/holder.ready"
}

# where the session daemon of process PID (or this world's, without)
# has its command socket
client_socket() {
  local root="" home=$LTTNG_HOME
  if [[ -n ${1:-} ]]; then
    root=/proc/$1/root
    home=$(tr '\0' '\n' < "/proc/$1/environ" | sed -n 's/^LTTNG_HOME=//p')
  fi
  if [[ $(id -u) == 0 ]]; then # /var/run: often a link to /run, read here, not in root
    echo "$root$(readlink -f /var/run)/lttng/client-lttng-sessiond"
  else
    echo "$root$home/.lttng/client-lttng-sessiond"
  fi
}

# start NAME ARGS...: record --flight ARGS -o WORK/NAME around a 20 s
# command (200 captures 100 ms apart), in the background (pid in rec)
start() {
  local name=$1
  shift
  rm -f "$work/$name.stopped"
  HT_STALL_LOG=$work/$name.log HT_STALL_DONE=$work/$name.stopped PATH="$work/bin:$PATH" \
    "$hoptrace" record --flight -o "$work/$name" "$@" -- "$fire" 200 100000 \
    > "$work/$name.out" 2> "$work/$name.log" &
  rec=$!
}

# finish NAME BOUND_S T0 PATTERN...: record ends within BOUND_S + SLACK_S
# of T0 (else it is killed and the test fails), exit 3, each PATTERN in
# its log
finish() {
  local name=$1 bound=$2 t0=$3 rc=0
  shift 3
  if ! ht_wait_gone "$rec" $((bound + SLACK_S + 20)); then
    cat "$work/$name.log" >&2
    echo "$name: record still runs $((bound + SLACK_S + 20)) s on" >&2
    kill -KILL "$rec"
    wait "$rec" || true
    exit 1
  fi
  wait "$rec" || rc=$?
  cat "$work/$name.log"
  python3 -c "import sys, time; d = time.time() - float(sys.argv[1]); print('$name: record ended %.1f s after the stall' % d); sys.exit(d > $bound + $SLACK_S)" "$t0" ||
    { echo "$name: past the bound of $bound s (+$SLACK_S)" >&2; exit 1; }
  [[ $rc == 3 ]] || { echo "$name: exit $rc, want 3" >&2; exit 1; }
  for p in "$@"; do
    grep -qF -- "$p" "$work/$name.log" || { echo "$name: no '$p' in its log" >&2; exit 1; }
  done
}

# wait_stopped NAME: the wrapper's stop happened (its time: now)
wait_stopped() {
  for ((t = 0; t < 600; t++)); do
    [[ -s $work/$1.stopped ]] && return 0
    kill -0 "$rec" 2>/dev/null || break
    sleep 0.05
  done
  cat "$work/$1.log" >&2
  echo "$1: the daemon was never stopped" >&2
  exit 1
}

# --- held: nothing answers on the command socket, nothing is stopped
mkdir -p "$(dirname "$(client_socket)")"
hold "$(client_socket)"
t0=$(date +%s.%N)
start held --shared-sessiond --name stall-held --daemon-timeout 3
finish held 3 "$t0" "did not answer within 3.0 s (at: lttng list)" \
  "not started by this recording"
unhold
rm -f "$(client_socket)"

# --- register: record's own daemon stopped before the trigger's
# registration; the default bound
export HT_STALL_AFTER=start
start register
wait_stopped register
t0=$(date +%s.%N)
own_sd=$(cat "$work/register.stopped") stopped=$own_sd
finish register 10 "$t0" "registering the flight recorder's trigger" \
  "(pid $own_sd, started for this recording) did not answer within"
ht_wait_gone "$own_sd" ||
  { echo "record's own daemon (pid $own_sd) outlived record" >&2; exit 1; }
stopped="" own_sd=""

# --- before: a shared daemon stopped before record starts; the default
# bound; nothing made on it
ht_sessiond_ensure
sd=$HT_STARTED_SESSIOND
unset HT_STALL_AFTER
kill -STOP "$sd"
stopped=$sd
t0=$(date +%s.%N)
start before --shared-sessiond --name stall-before
finish before 10 "$t0" "did not answer within 10.0 s (at: lttng list)"
if grep -q 'may remain' "$work/before.log"; then
  echo "before: record names leftovers, yet asked nothing to be made" >&2
  exit 1
fi
kill -CONT "$sd"
stopped=""
if lttng list | grep -q stall-before || lttng list-triggers | grep -q hoptrace-flight; then
  echo "before: something was left on the daemon" >&2
  exit 1
fi

# --- cli: a shared daemon stopped once the session was made: the next
# lttng command overruns; the session left is named, removed as told
export HT_STALL_AFTER=create HT_STALL_PID=$sd
start cli --shared-sessiond --name stall-cli --daemon-timeout 4
wait_stopped cli
t0=$(date +%s.%N)
stopped=$sd
finish cli 4 "$t0" "at: lttng enable-channel" "'lttng destroy stall-cli'"
unset HT_STALL_AFTER HT_STALL_PID
kill -CONT "$sd"
stopped=""
lttng destroy stall-cli > /dev/null
if lttng list-triggers | grep -q hoptrace-flight; then
  echo "cli: a trigger was left, and not named" >&2
  exit 1
fi

ht_pid_stop "$sd"
HT_STARTED_SESSIOND=""

# --- deadlock: record's own daemon alive and running, its command socket
# taken over once a snapshot was written: record asks it each second and
# gives up when 'lttng list' gets no answer within --daemon-timeout (its
# default 10 s: the next check, its 10 s, the snapshot given up after 1 s)
start deadlock
for ((t = 0; t < 300; t++)); do
  grep -q 'flight recorder: trigger' "$work/deadlock.log" && break
  sleep 0.1
done
sleep 1.5
own_sd=$(sed -n 's/^hoptrace: started lttng-sessiond (pid \([0-9]*\))$/\1/p' \
  "$work/deadlock.log")
[[ -n $own_sd ]] || { cat "$work/deadlock.log" >&2; echo "no daemon pid" >&2; exit 1; }
hold "$(client_socket "$own_sd")"
t0=$(date +%s.%N)
finish deadlock 12 "$t0" "stopped answering (no answer to 'lttng list' within 10.0 s)"
unhold
own_sd=""
echo "tool_record_flight_setup_stall: ok"
