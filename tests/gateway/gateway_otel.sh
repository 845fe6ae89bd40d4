#!/usr/bin/env bash
# One trace across a client nobody here wrote and the traced cluster: a
# Node.js program traced by the OpenTelemetry JS SDK (client.js; its
# packages from the npm registry, `npm ci` from the committed lock file)
# does PUT/GET/DELETE through sim-gateway (libmicrohttpd) into three
# sim-osd on loopback, with W3C traceparent and then B3 single headers, a
# known share of requests unsampled. Its spans go to the test receiver
# (tests/ship/receiver, upstream OTLP definitions) through its own
# OTLP/HTTP exporter (JSON); the cluster's spans go there live, while the
# requests run: a live LTTng session streamed to a relay of the test's
# own, read by `hoptrace export --follow --to` (protobuf). The session
# daemon is shared: the session keeps only this run's processes (copies
# of the programs under names of their own). The session's end ends the
# follower, which must have dropped nothing.
# probes.py sends malformed headers and oversized bodies; check.py checks
# the traces (see there); the gateway's own counts must match the probes.
# HT_TEST_WRAPPER="valgrind ..." (scripts/valgrind.sh) starts the OSDs,
# the gateway, the warm-up and the follower under it (HT_TEST_SLOW=1:
# longer timeouts). The process name LTTng records is then valgrind's
# ("memcheck-amd64-"), so the session keeps those, and check.py keeps only
# the spans of this test's processes (by pid).
# usage: gateway_otel.sh HOPTRACE SIMBIN PROVIDER WORKDIR SRCDIR WORKLOAD
# (WORKLOAD: tests/tool's trace_workload, the warm-up that shows the
# follower attached: lttng-live reads from the live position on)
set -euo pipefail
trap 'echo "gateway_otel: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
hoptrace=$1 bin=$2 provider=$3 work=$4 src=$5 workload=$6
source "$src/../../scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own
export HT_LTTNG_PROVIDER=$provider

rm -rf "$work" && mkdir -p "$work/receiver" "$work/client" "$work/bin"
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "node and npm are needed (scripts/install-deps.sh installs them)" >&2; exit 1; }
[[ -x $bin/sim-gateway ]] ||
  { echo "no $bin/sim-gateway: install libmicrohttpd-dev (scripts/install-deps.sh)" >&2; exit 1; }
cp "$src/../ship/receiver/"{package.json,package-lock.json,receiver.js} "$work/receiver/"
cp "$src/"{package.json,package-lock.json,client.js} "$work/client/"
for d in receiver client; do
  (cd "$work/$d" && timeout 300 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
done

wrap=() replica_ms=1000 osd_ms=2000 http_ms=10000
[[ -n ${HT_TEST_WRAPPER:-} ]] && read -ra wrap <<< "$HT_TEST_WRAPPER"
[[ -n ${HT_TEST_SLOW:-} ]] && replica_ms=15000 osd_ms=30000 http_ms=120000
# Copies under names of this run's own (LTTng's procname is the name
# exec'd): the session keeps their events only, not other sim-* programs'
tag="gw$$" procname="gw$$-*"
[[ -n ${HT_TEST_WRAPPER:-} ]] && procname="memcheck-amd64-"
cp "$bin/sim-osd" "$work/bin/$tag-osd"
cp "$bin/sim-gateway" "$work/bin/$tag-gw"
cp "$workload" "$work/bin/$tag-warm"
session=hoptrace-gateway-$$
rpid="" follower="" warm="" pids=()
cleanup() {
  for p in "${pids[@]}" $warm $follower $rpid; do kill -9 "$p" 2>/dev/null || true; done
  lttng destroy "$session" >/dev/null 2>&1 || true
  ht_live_session_end
  ht_sessiond_release
}
trap cleanup EXIT
ht_sessiond_ensure

node "$work/receiver/receiver.js" --port-file "$work/receiver.port" --out "$work/received.jsonl" \
  2> "$work/receiver.log" &
rpid=$!
for _ in $(seq 300); do [[ -s $work/receiver.port ]] && break; sleep 0.1; done
[[ -s $work/receiver.port ]] || { cat "$work/receiver.log" >&2; exit 1; }
receiver=http://127.0.0.1:$(cat "$work/receiver.port")

ht_live_session "$work" "$session" 8 "$procname"
timeout 1800 "${wrap[@]}" "$hoptrace" export --follow --to "$receiver" --summary-every 10 \
  --relay-dir "$work/relay" "net://127.0.0.1:$HT_LIVE_PORT/host/$(hostname)/$session" \
  2> "$work/follow.log" &
follower=$!
# warm-up traces until one reaches the receiver: the follower is attached
# before the cluster writes its first event (its name tables among them)
"${wrap[@]}" "$work/bin/$tag-warm" --warm-up --traces 1 > /dev/null &
warm=$!
for _ in $(seq 600); do [[ -s $work/received.jsonl ]] && break; sleep 0.1; done
[[ -s $work/received.jsonl ]] ||
  { echo "no warm-up span received" >&2; cat "$work/follow.log" >&2; exit 1; }
kill -USR1 "$warm"; wait "$warm"; warm=

python3 - > "$work/cluster.map" <<'PY'
import socket
print("pg_num 64\nsize 3\nmin_size 2")
socks = [socket.socket() for _ in range(3)]
for i, s in enumerate(socks):
    s.bind(("127.0.0.1", 0))
    print("osd %d tcp://127.0.0.1:%d" % (i, s.getsockname()[1]))
PY
for i in 0 1 2; do
  "${wrap[@]}" "$work/bin/$tag-osd" --id "$i" --map "$work/cluster.map" --ready-file "$work/ready.$i" \
    --messenger traced --replica-timeout-ms "$replica_ms" 2> "$work/osd.$i.log" &
  pids+=($!)
done
"${wrap[@]}" "$work/bin/$tag-gw" --map "$work/cluster.map" --ready-file "$work/gateway.port" \
  --messenger traced --max-body 65536 --http-connections 16 --timeout-ms "$osd_ms" \
  2> "$work/gateway.log" &
gw=$!
pids+=($gw)
printf '%s\n' "${pids[@]}" > "$work/pids"
for _ in $(seq 600); do [[ -s $work/gateway.port ]] && break; sleep 0.1; done
[[ -s $work/gateway.port ]] || { cat "$work/gateway.log" >&2; exit 1; }
url=http://127.0.0.1:$(cat "$work/gateway.port")
# W3C: 6 objects x 4 requests, every 3rd unsampled; B3: 4 x 4, every 5th
# (so unsampled PUTs, GETs and DELETEs)
timeout 900 node "$work/client/client.js" --gateway "$url" --otlp "$receiver" --propagator w3c \
  --objects 6 --unsampled-every 3 --tag w3c --timeout-ms "$http_ms" --out "$work/requests.w3c.jsonl"
timeout 900 node "$work/client/client.js" --gateway "$url" --otlp "$receiver" --propagator b3 \
  --objects 4 --unsampled-every 5 --tag b3 --timeout-ms "$http_ms" --out "$work/requests.b3.jsonl"
timeout 300 python3 "$src/probes.py" "${url##*:}" 16 "$work/probes.jsonl"
kill -TERM "$gw"
wait "$gw" # exit 0: every running request finished
for p in "${pids[@]:0:3}"; do kill -TERM "$p"; done
for p in "${pids[@]:0:3}"; do wait "$p"; done
pids=()

# The session's end is the input's end: the follower checks it against
# the relay's files (--relay-dir: without them the traces still open
# would be marked, a destroy looking like a daemon that died), writes the
# traces still open, posts its queue and exits 0 by itself (a signal
# would stop the reading at once: tools/hoptrace/README.md, "Shutdown")
lttng stop "$session" > /dev/null
lttng destroy "$session" > /dev/null
rc=0; wait "$follower" || rc=$?; follower=
grep -v " after " "$work/follow.log" >&2
[[ $rc -eq 0 ]] || { echo "follower exit $rc" >&2; exit 1; }
grep -q " 0 events discarded by LTTng, 0 packets lost" "$work/follow.log"
grep -q " 0 rejected, 0 dropped" "$work/follow.log"
if grep -q "unnamed" "$work/follow.log"; then exit 1; fi # name tables missed
kill "$rpid"; wait "$rpid" || true; rpid=

# the gateway counted each malformed header and both oversized bodies
grep -q "malformed traceparent 3, malformed b3 1; bodies too large 2" "$work/gateway.log" ||
  { cat "$work/gateway.log" >&2; exit 1; }
python3 "$src/check.py" "$work/received.jsonl" "$work/probes.jsonl" "$work/pids" \
  "$work/requests.w3c.jsonl" "$work/requests.b3.jsonl"
