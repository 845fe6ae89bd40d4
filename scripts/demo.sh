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
#   scripts/demo.sh --flight [--capture SPEC] [--flight-size SIZE] ...
#   (flight recorder: every request recorded in memory, snapshots written
#   when a capture trigger fires, slow-client=10ms,error by default; the
#   outputs are made from OUT/snapshots, OUT/snapshots/capture.json counts
#   what fired; with --hosts N each host's recorder snapshots to the relay)
#   scripts/demo.sh --hosts N [--skew SPEC] [--kill-sessiond HOST@SEC] ...
#   (root: the cluster over N simulated hosts, each with its own session
#   daemon and skewed clock, one relay: examples/client-osd-sim/run-hosts.sh)
#   scripts/demo.sh --gateway
#   (the HTTP gateway end to end: a Node.js client traced by the
#   OpenTelemetry JS SDK, sim-gateway, 3 OSDs; one trace per request at a
#   test OTLP receiver; tests/gateway/gateway_otel.sh, into ./gateway-out)
#   scripts/demo.sh --to URL ...  (not with --hosts, nor --gateway)
#   also pushes the run's spans live, while it runs, to an OTLP/HTTP
#   endpoint (hoptrace export --follow --to URL, from a live session of
#   the recording's own beside the trace on disk, through an lttng-relayd
#   of this demo's own on free loopback ports, stopped by its pid at the
#   end); waits for the push to end after the run and prints its summary
#   (also in OUT/push.log) and its cause; exits non-zero when spans were
#   dropped (a collector accepting nothing for 15 s is given up on)
set -euo pipefail
cd "$(dirname "$0")/.."

to="" rest=()
while (($#)); do
  if [[ $1 == --to ]]; then to=${2:?--to wants a URL}; shift 2; else rest+=("$1"); shift; fi
done
set -- "${rest[@]}"

# HT_DEMO_BUILD: a build directory made already (a test's), used as is
build=${HT_DEMO_BUILD:-build}
if [[ -z ${HT_DEMO_BUILD:-} ]]; then
  bash scripts/install-deps.sh
  cmake -S . -B build -DHT_WERROR=ON >/dev/null
  cmake --build build -j"$(nproc)" --target sim-osd sim-client hoptrace_cli hoptrace_tp hoptrace ht-clock-drift >/dev/null
fi
if [[ -n $to ]]; then
  out=./sim-out prev=""
  for arg in "$@"; do
    [[ $arg == --hosts || $arg == --gateway || $arg == --flight ]] &&
      { echo "demo: --to goes without --hosts, --gateway and --flight" >&2; exit 2; }
    [[ $prev == --out ]] && out=$arg
    prev=$arg
  done
  mkdir -p "$out"
  # a relay of this demo's own (its pid, free ports), stopped at the end;
  # the cluster's recording streams to it beside the trace on disk
  source scripts/lttng-env.sh
  push="" sim=""
  end_push() {
    [[ -n $sim ]] && kill "$sim" 2>/dev/null
    [[ -n $push ]] && kill -INT "$push" 2>/dev/null
    ht_live_session_end
  }
  trap end_push EXIT
  rm -rf "$out/relay" "$out/relayd.log"
  ht_relay_own "$out" || exit 1
  live=hoptrace-demo-$$ ready="$out/.push-attached"
  rm -f "$ready"
  bash examples/client-osd-sim/run-sim.sh --build "$(cd "$build" && pwd)" "$@" \
    --live "net://127.0.0.1:$HT_LIVE_CTRL:$HT_LIVE_DATA" --live-name "$live" \
    --start-after "$ready" &
  sim=$!
  # lttng-live reads from the live position on: the cluster starts once
  # the follower holds its connection to the relay's live port
  relay="net://127.0.0.1:$HT_LIVE_PORT"
  for _ in $(seq 300); do
    babeltrace2 -i lttng-live "$relay" 2>/dev/null | grep -q "/$live " && break
    kill -0 "$sim" 2>/dev/null || break
    sleep 0.2
  done
  # a collector that accepts nothing for 15 s is taken for dead: the push
  # ends by itself and says so (the demo's own SIGINT, after 60 s, was
  # reported as "interrupted by SIGINT", its real cause unsaid). The
  # relay's files check the session's end (without them the traces open
  # at the end would be marked: a destroy looks like a daemon that died)
  "$build/tools/hoptrace/hoptrace" export --follow --to "$to" --summary-every 10 \
    --give-up-after 15 --relay-dir "$out/relay" "$relay/host/$(hostname)/$live" \
    2> "$out/push.log" &
  push=$!
  for _ in $(seq 100); do
    ss -tnpH state established "( dport = :$HT_LIVE_PORT )" 2>/dev/null | grep -q "pid=$push," && break
    sleep 0.2
  done
  touch "$ready"
  echo "demo: pushing the spans live to $to (summaries in $out/push.log)" >&2
  status=0
  wait "$sim" || status=$?
  sim=""
  # the run is over and its session destroyed: the follower ends once it
  # has posted what it read
  stopped=""
  for _ in $(seq 300); do kill -0 "$push" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$push" 2>/dev/null; then # not ended after 60 s: flush, report, exit
    stopped=1
    kill -INT "$push" 2>/dev/null || true
  fi
  push_status=0
  wait "$push" || push_status=$?
  push=""
  grep -v ' after ' "$out/push.log" >&2 || true
  if [[ -n $stopped ]]; then
    why="the push had not ended 60 s after the run: the demo stopped it (SIGINT)"
  elif grep -q "the collector is taken for dead" "$out/push.log"; then
    why="the collector at $to accepted nothing: given up on, spans not delivered"
  elif ((push_status == 2)); then
    why="spans not delivered"
  elif ((push_status != 0)); then
    why="the push failed"
  else
    why="every span delivered"
  fi
  echo "demo: push to $to: $why; exit $push_status (log: $out/push.log)" >&2
  ((status != 0)) && exit $status
  exit $push_status
fi
for arg in "$@"; do
  if [[ $arg == --gateway ]]; then
    cmake --build build -j"$(nproc)" --target sim-gateway trace_workload >/dev/null
    out=$PWD/gateway-out
    bash tests/gateway/gateway_otel.sh "$PWD/build/tools/hoptrace/hoptrace" \
      "$PWD/build/examples/client-osd-sim" "$PWD/build/libhoptrace-tp.so" "$out" \
      "$PWD/tests/gateway" "$PWD/build/tests/tool/trace_workload"
    build/tools/hoptrace/hoptrace view -q -o "$out/waterfall.html" "$out/relay"
    echo "Outputs in $out: received.jsonl (every span the OTLP receiver got: the Node.js"
    echo "client's and the cluster's, pushed live), requests.*.jsonl (the client's requests"
    echo "and their traceresponse), relay/ (the cluster's CTF trace, as the live session's"
    echo "relay wrote it), follow.log (the push's summary), waterfall.html, gateway.log"
    exit 0
  fi
  if [[ $arg == --hosts ]]; then
    exec bash examples/client-osd-sim/run-hosts.sh --build "$PWD/build" "$@"
  fi
done
exec bash examples/client-osd-sim/run-sim.sh --build "$PWD/build" "$@"
