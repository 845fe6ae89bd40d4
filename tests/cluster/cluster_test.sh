#!/usr/bin/env bash
# Cluster tests: the simulated cluster spread over 3 hosts
# (network, mount and UTS namespaces: scripts/hosts.sh), each with its own
# lttng-sessiond streaming live to one lttng-relayd, clocks skewed by real
# mechanisms (libfaketime on a session daemon, the drift clock plugin),
# read back by the hoptrace tool and checked against the ground truth.
#
# usage: cluster_test.sh MODE BUILD WORKDIR SRCDIR
#   align   skewed +7 ms, -3 ms, +100 ppm and an unskewed control run: bounds
#           hold the truth, <= 100 us wide, drift within 10 ppm, no server span
#           outside its client in any output, request p50 per host pair as
#           in the control, writes span hosts; --align off says what it saw
#   killed  h2's session daemon SIGKILLed mid-run: the other hosts go on,
#           h2's missing spans are counted and its traces marked
#   live    the same cluster followed live from the relay (every host's
#           session as one input), aligned from a warm-up window
#   flight  flight mode (every request in memory, captured on slow calls
#           and errors; head sampling 1 %), the demo's 3 clients at 250
#           ops/s failing over,
#           osd.1 slow on 0.5 % of its writes (+20 ms), osd.3
#           killed mid-run: every trace the
#           simulator's own log names captured, >= 99 % complete on every
#           host, each host's counts exact, a live follower of the
#           relay's snapshots writing what the export after the run does
#           (check_flight.py)
#   flight-memory  flight, the spans kept in each process's own memory
#           (HT_FLIGHT=memory, head sampling 1 %) and written to LTTng at
#           a capture: the same checks, and span_r events in the
#           snapshots (none in flight)
# Exit 77 when namespaces cannot be made here; with HT_NO_SKIP=1 (CI) that
# is a failure instead.
set -euo pipefail
mode=$1 build=$2 work=$3 src=$4
hoptrace=$build/tools/hoptrace/hoptrace
check=$src/tests/cluster/check_cluster.py
rm -rf "$work" && mkdir -p "$work"

source "$src/scripts/hosts.sh"
if ! ht_hosts_supported; then
  if [[ -n ${HT_NO_SKIP:-} ]]; then
    echo "cluster_test: simulated hosts cannot be made here, and HT_NO_SKIP=1 forbids a skip" >&2
    exit 1
  fi
  exit 77
fi

# One prefix per mode: the modes may run one after the other with another
# run's teardown still in progress.
hosts_run() { # hosts_run OUT PREFIX ARGS...: the cluster across 3 hosts, bounded
  local out=$1 prefix=$2
  shift 2
  timeout -s INT 300 bash "$src/examples/client-osd-sim/run-hosts.sh" --build "$build" \
    --hosts 3 --osds 4 --clients 2 --rate 200 --duration 12 --prefix "$prefix" \
    --out "$out" "$@"
}
outputs() { # outputs OUT [hoptrace options]: every format of OUT/relay into OUT
  local out=$1
  shift
  "$hoptrace" export --format zipkin -q -o "$out/zipkin.json" "$@" "$out/relay"
  "$hoptrace" export --format otlp -q -o "$out/otlp.json" "$@" "$out/relay"
  "$hoptrace" export --format chrome -q -o "$out/chrome-trace.json" "$@" "$out/relay"
  "$hoptrace" view -q -o "$out/waterfall.html" "$@" "$out/relay"
  "$hoptrace" report -o "$out/report.txt" "$@" "$out/relay"
}

case $mode in
align)
  # the control run at the same time as the skewed one, on hosts of its
  # own: both see the same load, so their latencies compare
  hosts_run "$work/control" "htc0$$" --skew none > "$work/control.log" 2>&1 &
  control=$!
  hosts_run "$work/skewed" "htc1$$" --skew h1=+7ms,h2=-3ms,h3=+100ppm
  wait "$control" || { cat "$work/control.log"; exit 1; }
  python3 "$src/examples/client-osd-sim/hosts_truth.py" "$work/skewed"
  outputs "$work/control"
  outputs "$work/skewed"
  "$hoptrace" export --format otlp --align off -q -o "$work/skewed/otlp-raw.json" "$work/skewed/relay"
  sed -n '/^Host pairs/,/^Completeness/p' "$work/skewed/report.txt"
  python3 "$check" align "$work/skewed" "$work/control"
  "$hoptrace" report --align off -o "$work/skewed/report-noalign.txt" "$work/skewed/relay"
  sed -n '/^Host pairs/,/^Completeness/p' "$work/skewed/report-noalign.txt"
  python3 "$check" noalign "$work/skewed/report-noalign.txt"
  ;;
killed)
  hosts_run "$work/killed" "htc2$$" --kill-sessiond h2@5
  outputs "$work/killed"
  sed -n '/^Per host/,/^Completeness/p' "$work/killed/report.txt"
  python3 "$check" killed "$work/killed" h2
  ;;
flight|flight-memory)
  # the head sampler at 1 %, as a flight recorder runs: the captured
  # traces are the unsampled ones, recorded only in the rings (memory
  # mode keeps only those in its own: a sampled one is written at once)
  mode_args=(--ratio 0.01)
  prefix=htc4$$
  [[ $mode == flight-memory ]] && mode_args=(--flight-memory --ratio 0.01) prefix=htc5$$
  # the log's threshold above the trigger's: an op's own time (the
  # client's) includes a little more than its span's. Snapshots wait up to
  # 10 s for the rate limit (2 a second) rather than drop: under a
  # sanitizer a snapshot takes longer, and the run checks that none drop
  SIM_TRUTH=$work/flight/truth.txt SIM_TRUTH_SLOW_MS=25 \
    hosts_run "$work/flight" "$prefix" --clients 3 --rate 250 --flight ${mode_args[@]+"${mode_args[@]}"} --capture slow-client=20ms,error \
    --flight-arg --max-defer-ms --flight-arg 10000 \
    --cluster-arg --slow-osd --cluster-arg 1 --cluster-arg --slow-ms --cluster-arg 20 \
    --cluster-arg --slow-pct --cluster-arg 0.5 --cluster-arg --kill-osd --cluster-arg 3@6 \
    --cluster-arg --client-arg --cluster-arg --failover --follow
  "$hoptrace" export --format zipkin -q -o "$work/flight/zipkin.json" "$work/flight/relay"
  "$hoptrace" report -o "$work/flight/report.txt" "$work/flight/relay"
  sed -n '/^Captures/,/^$/p' "$work/flight/report.txt"
  python3 "$src/tests/cluster/check_flight.py" "$work/flight" 2
  # which memory held the spans: span_r events (a side kept in a process's
  # ring, written at its trace's capture) in memory mode only; three
  # snapshots of each host read
  replayed=0
  while read -r m; do
    c=$(babeltrace2 "$(dirname "$m")" 2>/dev/null | grep -c 'hoptrace:span_r:' || true)
    replayed=$((replayed + c))
  done < <(for h in h1 h2 h3; do find "$work/flight/relay/$h" -name metadata | sort | head -3; done)
  echo "span_r events in 9 snapshots: $replayed"
  if [[ $mode == flight-memory ]] && ((replayed == 0)); then
    echo "FAIL: memory mode wrote no span_r: the spans did not go through the rings" >&2; exit 1
  elif [[ $mode == flight ]] && ((replayed != 0)); then
    echo "FAIL: span_r events without memory mode" >&2; exit 1
  fi
  ;;
live)
  hosts_run "$work/live" "htc3$$" --follow
  python3 "$check" live "$work/live"
  ;;
*)
  echo "usage: $0 align|killed|live BUILD WORKDIR SRCDIR" >&2
  exit 2
  ;;
esac
