#!/usr/bin/env bash
# One trace across a client nobody here wrote and the traced cluster: a
# Node.js program traced by the OpenTelemetry JS SDK (client.js; its
# packages from the npm registry, `npm ci` from the committed lock file)
# does PUT/GET/DELETE through sim-gateway (libmicrohttpd) into three
# sim-osd on loopback, under `hoptrace record`, with W3C traceparent and
# then B3 single headers, a known share of requests unsampled. Its spans
# go to the test receiver (tests/ship/receiver, upstream OTLP definitions)
# through its own OTLP/HTTP exporter (JSON); the cluster's spans go there
# after the run through `hoptrace export --to` (protobuf, one shot).
# probes.py sends malformed headers and oversized bodies; check.py checks
# the traces (see there); the gateway's own counts must match the probes.
# HT_TEST_WRAPPER="valgrind ..." (scripts/valgrind.sh) starts the OSDs and
# the gateway under it (HT_TEST_SLOW=1: longer timeouts). The process
# name LTTng records is then valgrind's ("memcheck-amd64-"), so the
# session keeps those, and check.py keeps only the spans of this test's
# processes (by pid).
# usage: gateway_otel.sh HOPTRACE SIMBIN PROVIDER WORKDIR SRCDIR
set -euo pipefail
trap 'echo "gateway_otel: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
hoptrace=$1 bin=$2 provider=$3 work=$4 src=$5
export HT_LTTNG_PROVIDER=$provider

if [[ ${GW_INNER:-} == 1 ]]; then # --- under hoptrace record: the cluster and the clients
  pids=() wrap=() replica_ms=1000 osd_ms=2000 http_ms=10000
  [[ -n ${HT_TEST_WRAPPER:-} ]] && read -ra wrap <<< "$HT_TEST_WRAPPER"
  [[ -n ${HT_TEST_SLOW:-} ]] && replica_ms=15000 osd_ms=30000 http_ms=120000
  trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done' EXIT
  python3 - > "$work/cluster.map" <<'PY'
import socket
print("pg_num 64\nsize 3\nmin_size 2")
socks = [socket.socket() for _ in range(3)]
for i, s in enumerate(socks):
    s.bind(("127.0.0.1", 0))
    print("osd %d tcp://127.0.0.1:%d" % (i, s.getsockname()[1]))
PY
  for i in 0 1 2; do
    "${wrap[@]}" "$work/bin/$GW_TAG-osd" --id "$i" --map "$work/cluster.map" --ready-file "$work/ready.$i" \
      --messenger traced --replica-timeout-ms "$replica_ms" 2> "$work/osd.$i.log" &
    pids+=($!)
  done
  "${wrap[@]}" "$work/bin/$GW_TAG-gw" --map "$work/cluster.map" --ready-file "$work/gateway.port" \
    --messenger traced --max-body 65536 --http-connections 16 --timeout-ms "$osd_ms" 2> "$work/gateway.log" &
  gw=$!
  pids+=($gw)
  printf '%s\n' "${pids[@]}" > "$work/pids"
  for _ in $(seq 600); do [[ -s $work/gateway.port ]] && break; sleep 0.1; done
  [[ -s $work/gateway.port ]] || { cat "$work/gateway.log" >&2; exit 1; }
  url=http://127.0.0.1:$(cat "$work/gateway.port")
  # W3C: 6 objects x 4 requests, every 3rd unsampled; B3: 4 x 4, every 5th
  # (so unsampled PUTs, GETs and DELETEs)
  timeout 900 node "$work/client/client.js" --gateway "$url" --otlp "$GW_OTLP" --propagator w3c \
    --objects 6 --unsampled-every 3 --tag w3c --timeout-ms "$http_ms" --out "$work/requests.w3c.jsonl"
  timeout 900 node "$work/client/client.js" --gateway "$url" --otlp "$GW_OTLP" --propagator b3 \
    --objects 4 --unsampled-every 5 --tag b3 --timeout-ms "$http_ms" --out "$work/requests.b3.jsonl"
  timeout 300 python3 "$src/probes.py" "${url##*:}" 16 "$work/probes.jsonl"
  kill -TERM "$gw"
  wait "$gw" # exit 0: every running request finished
  for p in "${pids[@]:0:3}"; do kill -TERM "$p"; done
  for p in "${pids[@]:0:3}"; do wait "$p"; done
  pids=()
  exit 0
fi

rm -rf "$work" && mkdir -p "$work/receiver" "$work/client"
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "node and npm are needed (scripts/install-deps.sh installs them)" >&2; exit 1; }
[[ -x $bin/sim-gateway ]] ||
  { echo "no $bin/sim-gateway: install libmicrohttpd-dev (scripts/install-deps.sh)" >&2; exit 1; }
cp "$src/../ship/receiver/"{package.json,package-lock.json,receiver.js} "$work/receiver/"
cp "$src/"{package.json,package-lock.json,client.js} "$work/client/"
for d in receiver client; do
  (cd "$work/$d" && timeout 300 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
done

rpid=
trap '[[ -n $rpid ]] && kill $rpid' EXIT
node "$work/receiver/receiver.js" --port-file "$work/receiver.port" --out "$work/received.jsonl" \
  2> "$work/receiver.log" &
rpid=$!
for _ in $(seq 300); do [[ -s $work/receiver.port ]] && break; sleep 0.1; done
[[ -s $work/receiver.port ]] || { cat "$work/receiver.log" >&2; exit 1; }
receiver=http://127.0.0.1:$(cat "$work/receiver.port")

# The programs run under names of their own (symlinks): the session (the
# session daemon is shared) then keeps only this test's processes, not
# other sim-* programs running on the same host.
tag="gw$$" filter="\$ctx.procname == \"gw$$-*\""
[[ -n ${HT_TEST_WRAPPER:-} ]] && filter='$ctx.procname == "memcheck-amd64-"'
mkdir -p "$work/bin"
ln -s "$bin/sim-osd" "$work/bin/$tag-osd"
ln -s "$bin/sim-gateway" "$work/bin/$tag-gw"
GW_INNER=1 GW_OTLP=$receiver GW_TAG=$tag timeout 1800 "$hoptrace" record -o "$work/trace" \
  --filter "$filter" -- bash "$0" "$@" 2> "$work/record.log" ||
  { cat "$work/record.log" "$work/gateway.log" >&2; exit 1; }
grep -q " 0 discarded by LTTng" "$work/record.log" || { cat "$work/record.log" >&2; exit 1; }
timeout 120 "$hoptrace" export --to "$receiver" "$work/trace" 2> "$work/export.log" ||
  { cat "$work/export.log" >&2; exit 1; }
grep -q " 0 rejected, 0 dropped" "$work/export.log" || { cat "$work/export.log" >&2; exit 1; }
kill "$rpid"; wait "$rpid" || true; rpid=

# the gateway counted each malformed header and both oversized bodies
grep -q "malformed traceparent 3, malformed b3 1; bodies too large 2" "$work/gateway.log" ||
  { cat "$work/gateway.log" >&2; exit 1; }
python3 "$src/check.py" "$work/received.jsonl" "$work/probes.jsonl" "$work/pids" \
  "$work/requests.w3c.jsonl" "$work/requests.b3.jsonl"
