#!/usr/bin/env bash
# README's main job, one command: installs what is missing, builds
# hoptrace, starts a local traced object-store cluster on loopback (3
# clients, 4 OSDs), records it with LTTng for ~20 s while the sampling
# ratio is raised and lowered, stops everything it started, and writes the
# CTF trace, zipkin.json, otlp.json, chrome-trace.json, report.txt and
# waterfall.html into ./sim-out (or --out DIR), then prints where.
#
#   scripts/demo.sh [--slow-osd [ID]] [--kill-osd ID@SEC] [--out DIR] ...
#   (every option of examples/client-osd-sim/run-sim.sh; --help lists them)
#   scripts/demo.sh --hosts N [--skew SPEC] [--kill-sessiond HOST@SEC] ...
#   (root: the cluster over N simulated hosts, each with its own session
#   daemon and skewed clock, one relay: examples/client-osd-sim/run-hosts.sh)
#   scripts/demo.sh --gateway
#   (the HTTP gateway end to end: a Node.js client traced by the
#   OpenTelemetry JS SDK, sim-gateway, 3 OSDs; one trace per request at a
#   test OTLP receiver; tests/gateway/gateway_otel.sh, into ./gateway-out)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -DHT_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)" --target sim-osd sim-client hoptrace_cli hoptrace_tp hoptrace ht-clock-drift >/dev/null
for arg in "$@"; do
  if [[ $arg == --gateway ]]; then
    cmake --build build -j"$(nproc)" --target sim-gateway >/dev/null
    out=$PWD/gateway-out
    bash tests/gateway/gateway_otel.sh "$PWD/build/tools/hoptrace/hoptrace" \
      "$PWD/build/examples/client-osd-sim" "$PWD/build/libhoptrace-tp.so" "$out" "$PWD/tests/gateway"
    build/tools/hoptrace/hoptrace view -q -o "$out/waterfall.html" "$out/trace"
    echo "Outputs in $out: received.jsonl (every span the OTLP receiver got: the Node.js"
    echo "client's and the cluster's), requests.*.jsonl (the client's requests and their"
    echo "traceresponse), trace/ (the cluster's CTF trace), waterfall.html, gateway.log"
    exit 0
  fi
  if [[ $arg == --hosts ]]; then
    exec bash examples/client-osd-sim/run-hosts.sh --build "$PWD/build" "$@"
  fi
done
exec bash examples/client-osd-sim/run-sim.sh --build "$PWD/build" "$@"
