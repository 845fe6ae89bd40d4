#!/usr/bin/env bash
# `hoptrace export --follow --to`: a live LTTng session relayed to a
# receiver on loopback that misbehaves (receiver.js --faults): 503 with
# Retry-After, 400, connections reset, 5 s per request, then down for
# 10 s in the middle of the run and back on the same port; finally
# SIGTERM while the receiver is slow. Checked: every span the tool read
# is counted once (read = accepted + rejected + dropped by reason), what
# the receiver recorded is exactly the accepted spans, none twice, the
# 400'd spans are exactly those counted as refused, every expected span
# arrived or is among the dropped, periodic summaries, the shutdown's
# bound and exit 143, the tool's peak RSS under its bound.
# usage: ship_faults.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
trap 'echo "ship_faults: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
source "$src/../../scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own
source "$src/setup.sh"
ship_setup "$hoptrace" "$provider" "$work" "$src"
QUEUE_MIB=2
RSS_MAX_KB=$((40 * 1024)) # 18 MiB measured: the queue's 2 MiB, the batch in hand, the reader
SHUTDOWN_MAX_MS=$((5000 + 1500))
if [[ -n ${HT_TEST_WRAPPER:-} ]]; then # valgrind: its own memory and pace
  RSS_MAX_KB=$((4 * 1024 * 1024)) SHUTDOWN_MAX_MS=$((5000 + 15000))
elif [[ $(ldd "$hoptrace" 2>/dev/null) == *libasan* ]]; then # (no pipe: grep -q + pipefail races)
  # ASan's shadow memory and freed-block quarantine (90 MiB seen with the
  # default 256 MiB quarantine): the plain build checks the queue's bound
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=32"
  RSS_MAX_KB=$((256 * 1024))
fi

# the workload under a name of this run's own: the session daemon is
# shared, and other runs' trace_workload must not feed this session
wl="$work/htf$$"
cp "$workload" "$wl"
session=hoptrace-faults-$$
follower="" rpid="" workload_pid=""
cleanup() {
  for p in $follower $rpid $workload_pid; do kill "$p" 2>/dev/null || true; done
  lttng destroy "$session" >/dev/null 2>&1 || true
  ht_live_session_end
  ht_sessiond_release
}
trap cleanup EXIT
ht_sessiond_ensure

start_receiver() { # faults file, [port]
  rm -f "$work/port"
  node "$work/receiver/receiver.js" --port-file "$work/port" --out "$work/got.jsonl" \
    --faults "$1" ${2:+--port "$2"} 2>> "$work/receiver.log" &
  rpid=$!
  for _ in $(seq 300); do [[ -s $work/port ]] && break; sleep 0.1; done
  [[ -s $work/port ]] || { cat "$work/receiver.log" >&2; exit 1; }
  port=$(cat "$work/port")
}
wait_for() { # seconds, description, command...
  local s=$1 what=$2; shift 2
  for _ in $(seq $((s * 5))); do "$@" && return 0; sleep 0.2; done
  echo "timed out waiting for $what" >&2; tail -5 "$work/follow.log" >&2; exit 1
}
applied() { [[ $(cat "$1.log" 2>/dev/null | wc -l) -ge $2 ]]; }

ht_live_session "$work" "$session" 8 "htf$$"

touch "$work/faults1" "$work/faults2"
start_receiver "$work/faults1"
url="net://127.0.0.1:$HT_LIVE_PORT/host/$(hostname)/$session"
"${tool[@]}" export --follow --grace 0.5 --timeout 5 --to "http://127.0.0.1:$port" \
  --queue-mib $QUEUE_MIB --summary-every 2 --retry-for 30 "$url" 2> "$work/follow.log" &
follower=$!

# warm-up traces until spans arrive (the batch cut at 5 s), then ~600
# spans/s for ~40 s while the receiver misbehaves
"$wl" --warm-up --traces 4000 --fanout 2 --pause-us 10000 --expect "$work/expect.txt" &
workload_pid=$!
wait_for 60 "the first spans" test -s "$work/got.jsonl"
kill -USR1 "$workload_pid"
printf '503 1\n503 1\n400\nreset\nreset\nslow 5000\n' > "$work/faults1"
wait_for 60 "the faults applied" applied "$work/faults1" 6
sleep 1
# down for 10 s (killed: its connections die with it), back on the same port
kill -KILL "$rpid"; wait "$rpid" || true; rpid=
sleep 10
start_receiver "$work/faults2" "$port"
wait "$workload_pid"; workload_pid=
# everything read so far delivered or accounted: no span pending
wait_for 60 "the queue to drain" bash -c "tail -1 '$work/follow.log' | grep -q ' 0 pending,'"
sleep 3
wait_for 30 "the queue to drain" bash -c "grep 'after' '$work/follow.log' | tail -1 | grep -q ' 0 pending,'"

# the shutdown: a slow receiver, a burst queued, SIGTERM
printf 'slow 5000\nslow 5000\nslow 5000\nslow 5000\n' > "$work/faults2"
"$wl" --traces 400 --fanout 2 > /dev/null
sleep 4 # the traces' grace, then a time cut
rss_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$follower/status")
start=$(date +%s%N)
kill -TERM "$follower"
rc=0; wait "$follower" || rc=$?; follower=
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill "$rpid"; wait "$rpid" || true; rpid=
cat "$work/follow.log" | grep -v ' after ' || true
echo "peak RSS ${rss_kb} kB (bound ${RSS_MAX_KB} kB), SIGTERM to exit: ${took_ms} ms"
[[ $rc -eq 143 ]] || { echo "exit $rc after SIGTERM, want 143" >&2; exit 1; }
(( took_ms <= SHUTDOWN_MAX_MS )) || { echo "shutdown took ${took_ms} ms" >&2; exit 1; }
(( rss_kb <= RSS_MAX_KB )) || { echo "peak RSS ${rss_kb} kB over ${RSS_MAX_KB}" >&2; exit 1; }
grep -q "push: interrupted: [0-9]* spans not delivered at shutdown" "$work/follow.log"
grep -q "push to http://127.0.0.1:$port/v1/traces after [0-9]* s: " "$work/follow.log"

python3 - "$work" <<'PY'
import json, re, sys
work = sys.argv[1]
log = open(work + "/follow.log").read()
m = re.findall(r"pushed to \S+: (\d+) spans read, (\d+) sent, (\d+) accepted, (\d+) rejected, "
               r"(\d+) dropped \((\d+) refused by HTTP status, (\d+) retryable status, "
               r"(\d+) connection, (\d+) encoding, (\d+) queue full, (\d+) shutdown, (\d+) collector dead\), "
               r"(\d+) pending, (\d+) batches, (\d+) retries", log)
assert len(m) == 1, "one final summary, got %d" % len(m)
(read, sent, acc, rej, drop, status, retry, conn, enc, full, shut, dead, pending, batches,
 retries) = map(int, m[0])
assert pending == 0 and rej == 0 and dead == 0, "10 s of downtime is no dead collector"
assert drop == status + retry + conn + enc + full + shut
assert read == acc + rej + drop, "read %d != %d accepted + %d dropped" % (read, acc, drop)
got = [json.loads(l) for l in open(work + "/got.jsonl")]
ids = [(s["traceId"], s["spanId"]) for s in got]
assert len(ids) == len(set(ids)), "%d spans received twice" % (len(ids) - len(set(ids)))
assert len(ids) == acc, "receiver has %d spans, the tool says %d accepted" % (len(ids), acc)
refused = [json.loads(l) for l in open(work + "/got.jsonl.refused")]
assert len(refused) == status > 0, "%d refused, %d counted" % (len(refused), status)
# 2 x 503, the downtime (a reset on a reused connection libcurl retries itself)
assert retries >= 2 + 1, "retries: %d" % retries
want = {tuple(l.split()[:2]) for l in open(work + "/expect.txt")}
have = set(ids) | {(s["traceId"], s["spanId"]) for s in refused}
missing = want - have
assert len(missing) <= drop - status, "%d expected spans missing, %d dropped" % (
    len(missing), drop - status)
print("faults: %d read = %d accepted + %d dropped (%d 400, %d queue full, %d shutdown); "
      "%d retries; %d of %d expected spans received" %
      (read, acc, drop, status, full, shut, retries, len(want & set(ids)), len(want)))
PY
echo "ship faults test passed"
