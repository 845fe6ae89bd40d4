#!/usr/bin/env bash
# The traced messenger end to end: real processes on loopback, real LTTng
# sessions, read back with the hoptrace tool (and babeltrace2).
#   1. three processes: client -> A; A -> B and C inside its handler and
#      B again from a worker thread: one trace per request, exact parents,
#      every cs/sr/ss/cr, server spans nested in client spans;
#   2. swap: the same workload plain gives the same results and records
#      no hoptrace event at all;
#   3. unsampled requests record nothing but carry their ids to B and C;
#   4. a remote DEBUG flood: an untrusting server records nothing, a
#      trusting one stays within its rate limit;
#   5. control socket: the ratio changed on a running server changes the
#      recorded fraction; another user cannot connect.
# Starts lttng-sessiond only when absent and stops only what it started;
# unique session names, destroys only its own sessions; bounded time.
# usage: messenger_lttng.sh SRC NODE HOPTRACE PROVIDER WORKDIR
set -euo pipefail
src=$1 node=$2 hoptrace=$3 provider=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$src/scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own

tag=$$
run_id="ht-msg-$tag-$RANDOM"
base="$work/$run_id"
rm -rf "$work" && mkdir -p "$base"
sockdir=$(mktemp -d /tmp/ht-msg-ctl-XXXXXX)
chmod 755 "$sockdir" # only the socket's own mode keeps others out
sessions=()
pids=()
mine=() # every process of the current phase (servers and clients)

cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for s in "${sessions[@]}"; do
    [[ -n "$s" ]] && timeout 30 lttng destroy "$s" >/dev/null 2>&1 || true
  done
  ht_sessiond_release
  rm -rf "$sockdir"
}
trap cleanup EXIT
ht_sessiond_ensure
export HT_LTTNG_PROVIDER=$provider
# HT_TEST_WRAPPER="valgrind ..." (scripts/valgrind.sh) runs every node under
# it; HT_TEST_SLOW=1 gives them longer to start. Under valgrind the
# process name LTTng records is valgrind's ("memcheck-amd64-").
wrap=()
[[ -n ${HT_TEST_WRAPPER:-} ]] && read -ra wrap <<< "$HT_TEST_WRAPPER"
start_ticks=100 client_s=60
[[ -n ${HT_TEST_SLOW:-} ]] && start_ticks=1200 client_s=300
unset HT_SAMPLER HT_SAMPLE_RATIO HT_SAMPLE_RATE HT_TRUST_REMOTE_DEBUG HT_CONTROL_SOCKET

session_start() { # NAME
  local s="$run_id-$1"
  timeout 30 lttng create "$s" --output="$base/$1/trace" >/dev/null
  sessions+=("$s")
  timeout 30 lttng enable-event -u -s "$s" 'hoptrace:*' >/dev/null
  timeout 30 lttng add-context -u -s "$s" -t vpid -t procname >/dev/null
  timeout 30 lttng start "$s" >/dev/null
}

session_stop() { # NAME: stop, destroy, export ours to NAME/zipkin.json
  local s="$run_id-$1" dir="$base/$1"
  timeout 60 lttng stop "$s" >/dev/null
  timeout 30 lttng destroy "$s" >/dev/null
  sessions=("${sessions[@]/$s}")
  if [[ -n $(find "$dir/trace" -name metadata 2>/dev/null) ]]; then
    timeout 120 "$hoptrace" export --format zipkin -q -o "$dir/zipkin.json" "$dir/trace"
    timeout 120 babeltrace2 "$dir/trace" > "$dir/events.txt"
  else
    echo "[]" > "$dir/zipkin.json"
    : > "$dir/events.txt"
  fi
}

# start_server NAME [args...] (environment before: VAR=value via env)
# start_server NAME env VAR=value... NODE [server args...]
start_server() {
  local name=$1
  shift
  local cmd=()
  while [[ $1 != "$node" ]]; do cmd+=("$1"); shift; done
  shift
  rm -f "$base/$name.url" "$base/$name.seen"
  "${cmd[@]}" "${wrap[@]}" "$node" server --name "$name-$tag" --url-file "$base/$name.url" "$@" &
  pids+=($!)
  mine+=($!)
  for _ in $(seq $start_ticks); do
    [[ -s "$base/$name.url" ]] && break
    sleep 0.05
  done
  [[ -s "$base/$name.url" ]] || { echo "FAIL: server $name did not start" >&2; exit 1; }
}
url_of() { cat "$base/$1.url"; }

stop_servers() { # every server must exit 0 (clean close; ASan leak check)
  for p in "${pids[@]}"; do kill -TERM "$p"; done
  for p in "${pids[@]}"; do
    wait "$p" || { echo "FAIL: server $p exited $?" >&2; exit 1; }
  done
  pids=()
}

client() { # OUT_PREFIX [client args...] (env before via CLIENT_ENV)
  local out=$1
  shift
  env ${CLIENT_ENV:-} timeout $client_s "${wrap[@]}" "$node" client --name "client-$tag" \
    --results "$out.results" --traces "$out.traces" "$@" > "$out.stdout" &
  local pid=$!
  mine+=("$pid")
  wait "$pid"
}

# events_from_us EVENTS_TXT: how many events processes of this phase wrote
events_from_us() {
  local n=0
  for p in "${mine[@]}"; do
    n=$(( n + $(grep -cE "vpid = $p, procname = \"(traced_node|memcheck-amd64-)\"" "$1" || true) ))
  done
  echo "$n"
}

# no_events_from_us EVENTS_TXT: not one event from a process of this run
# (the same programs may run in other test runs at the same time)
no_events_from_us() {
  local n
  n=$(events_from_us "$1")
  [[ $n -eq 0 ]] || { echo "FAIL: this run recorded $n events in $1" >&2; exit 1; }
}

# start_cluster FLAVOUR: B and C (leaves), then A fanning out to them;
# every server appends the contexts its handlers saw to NAME.seen
start_cluster() {
  local fl=$1
  mine=()
  start_server B env HT_MESSENGER=$fl "$node" --seen "$base/B.seen"
  start_server C env HT_MESSENGER=$fl "$node" --seen "$base/C.seen"
  start_server A env HT_MESSENGER=$fl "$node" --seen "$base/A.seen" \
    --peers "$(url_of B),$(url_of C)"
}
mkdir -p "$base/three" "$base/plain" "$base/unsampled" "$base/debug" "$base/control"

# --- 1: the traced cluster, one trace per request
start_cluster traced
session_start three
HT_MESSENGER=traced client "$base/three/run" --url "$(url_of A)" --count 5
session_stop three
stop_servers
python3 "$here/check_spans.py" three "$base/three/zipkin.json" "$base/three/run.traces" "$tag"
# the same filter the unsampled and plain phases rely on finds these
# (2 span sides a request and its reply: 40 in 5 traces, 35 of them from
# the servers, and their name tables; the client runs under timeout(1), a
# pid this script does not know)
[[ $(events_from_us "$base/three/events.txt") -ge 35 ]] || {
  echo "FAIL: no events of this run found by pid" >&2; exit 1; }

# --- 3: unsampled requests record nothing, but their ids reach A, B, C
start_cluster traced
session_start unsampled
HT_MESSENGER=traced client "$base/unsampled/run" --url "$(url_of A)" --count 5 --hint no
session_stop unsampled
stop_servers
python3 "$here/check_spans.py" none "$base/unsampled/zipkin.json" "$tag"
no_events_from_us "$base/unsampled/events.txt"
[[ $(wc -l < "$base/unsampled/run.traces") -eq 5 ]]
while read -r t; do
  [[ $(grep -c "^seen $t 0$" "$base/A.seen") -eq 1 ]] || { echo "FAIL: A did not see $t unsampled" >&2; exit 1; }
  [[ $(grep -c "^seen $t 0$" "$base/B.seen") -eq 2 ]] || { echo "FAIL: B did not see $t twice" >&2; exit 1; }
  [[ $(grep -c "^seen $t 0$" "$base/C.seen") -eq 1 ]] || { echo "FAIL: C did not see $t" >&2; exit 1; }
done < "$base/unsampled/run.traces"
echo "unsampled: nothing recorded, ids propagated to A, B (twice) and C"

# --- 2: the swap — the same workload with the plain messenger
start_cluster plain
session_start plain
HT_MESSENGER=plain client "$base/plain/run" --url "$(url_of A)" --count 5
session_stop plain
stop_servers
cmp "$base/three/run.results" "$base/plain/run.results" || {
  echo "FAIL: plain and traced results differ" >&2; exit 1; }
grep -qx "4 0 A-$tag\[B-$tag(req-4),C-$tag(req-4),B-$tag(req-4)\]" "$base/plain/run.results"
[[ ! -s "$base/plain/run.traces" ]] || { echo "FAIL: plain replies carry a trace context" >&2; exit 1; }
grep -qx "seen none 0" "$base/A.seen"
no_events_from_us "$base/plain/events.txt"
echo "swap: same results, plain recorded nothing"

# --- 4: a remote DEBUG flood (the client marks every request DEBUG)
# D never samples and does not trust remote DEBUG; E never samples but
# trusts remote DEBUG at 5 per second (bucket of 5).
start_server D env HT_MESSENGER=traced HT_SAMPLER=never "$node"
start_server E env HT_MESSENGER=traced HT_SAMPLER=never HT_TRUST_REMOTE_DEBUG=1 \
  HT_REMOTE_DEBUG_RATE=5 "$node"
session_start debug
HT_MESSENGER=traced client "$base/debug/d" --url "$(url_of D)" --op leaf --count 200 --hint debug
HT_MESSENGER=traced client "$base/debug/e" --url "$(url_of E)" --op leaf --count 200 --hint debug
session_stop debug
stop_servers
python3 "$here/check_spans.py" count "$base/debug/zipkin.json" "$base/debug/d.traces" "$tag" D 0 0
e_ms=$(awk '/elapsed_ms/ {print int($2) + 1}' "$base/debug/e.stdout")
e_max=$(( 5 + 5 * e_ms / 1000 + 1 ))
python3 "$here/check_spans.py" count "$base/debug/zipkin.json" "$base/debug/e.traces" "$tag" E 1 "$e_max"
# the flood itself was recorded on the client side (a local DEBUG root)
python3 - "$base/debug/zipkin.json" "$tag" <<'PY'
import json, sys
n = sum(1 for s in json.load(open(sys.argv[1]))
        if s["localEndpoint"]["serviceName"] == "client-" + sys.argv[2])
assert n == 400, n
PY
echo "debug flood: untrusting server recorded nothing, trusting one at most $e_max of 200"

# --- 5: the control socket on a running server
sock="$sockdir/f.sock"
start_server F env HT_MESSENGER=traced HT_SAMPLER=ratio HT_SAMPLE_RATIO=1 \
  HT_CONTROL_SOCKET="$sock" "$node"
[[ $(stat -c %a "$sock") == 600 ]] || { echo "FAIL: control socket mode $(stat -c %a "$sock")" >&2; exit 1; }
session_start control
CLIENT_ENV="HT_SAMPLER=never" HT_MESSENGER=traced client "$base/control/one" --url "$(url_of F)" --op leaf --count 100
"$hoptrace" ctl "$sock" sample 0.1 | tee "$base/control/ctl.txt"
grep -q "^ok sampler=ratio .* ratio=0.10* " "$base/control/ctl.txt" || grep -q "^ok sampler=ratio .* ratio=0.1000000000000000[0-9] " "$base/control/ctl.txt"
CLIENT_ENV="HT_SAMPLER=never" HT_MESSENGER=traced client "$base/control/two" --url "$(url_of F)" --op leaf --count 300
"$hoptrace" ctl "$sock" status > "$base/control/status.txt"
grep -q "remote_received=400 remote_sampled=[0-9]* " "$base/control/status.txt"
if "$hoptrace" ctl "$sock" sample 7 > "$base/control/bad.txt"; then
  echo "FAIL: ctl accepted ratio 7" >&2; exit 1
fi
grep -q "^error EINVAL" "$base/control/bad.txt"

# another user: the socket's mode refuses the connection ...
if [[ $(id -u) -eq 0 ]]; then
  as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  "${as_nobody[@]}" /usr/bin/python3 - "$sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except PermissionError:
    sys.exit(0)
print("FAIL: another user connected to the control socket")
sys.exit(1)
PY
  # ... and with the mode opened up, the credential check still does
  chmod 666 "$sock"
  "${as_nobody[@]}" /usr/bin/python3 - "$sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
answer = s.recv(256)  # refused at once, before any command
assert answer.startswith(b"error EPERM"), answer
PY
  grep -q " ratio=0.1[0-9]* " <("$hoptrace" ctl "$sock" status)
  echo "control: another user cannot connect (mode 0600) nor command (credentials)"
else
  echo "control: not root, permission test skipped" >&2
fi
session_stop control
stop_servers
[[ ! -e "$sock" ]] || { echo "FAIL: control socket left behind" >&2; exit 1; }
n1=$(python3 "$here/check_spans.py" count "$base/control/zipkin.json" "$base/control/one.traces" "$tag" F 100 100)
n2=$(python3 "$here/check_spans.py" count "$base/control/zipkin.json" "$base/control/two.traces" "$tag" F 6 75)
echo "control: ratio 1 recorded $n1 of 100, ratio 0.1 recorded $n2 of 300"
echo "messenger_lttng: all passed"
