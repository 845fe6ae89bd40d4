#!/usr/bin/env bash
# Flight recorder across simulated hosts: from a trigger's firing to its
# trace's snapshot written, on the host that fired it and on every host
# the trace touched. Three hosts (network namespaces, a session daemon
# and a flight recorder each, snapshots to one relay), the demo's 3
# clients at 250 ops/s, osd.1 slow on 0.5 % of its writes (+20 ms), the
# recorders' defaults (2 snapshots a second, coalescing, 1 s at most
# waiting for the rate limit), --skew none so that every host's trace
# clock is the one kernel clock.
#
# Trigger time: the end of the span that fired (a trigger fires as its
# span ends), named by the `capture` event with hops 0 (the process that
# fired): that span's side in the host's snapshot, its event's time
# (epoch ns, as babeltrace2 reads it) or, for memory mode's span_r
# (written at the replay, after the trigger), its end word on the
# snapshot's clock; the capture event's time when the side is not there
# (printed: how many), and beside it the own-host figure from the
# capture event, as this benchmark measured before. Written: the host's
# capture.json `written_ns` of the first snapshot holding that host's
# `capture` event of the trace (a notice that reached it, or its own).
# A trace is counted on every host where a capture event of it was
# recorded; a trace with no snapshot on some host it reached counts as
# not written there (the check of completeness itself is the cluster
# flight test's).
# Prints a table and writes bench/results/flight-hosts.txt; with MODE
# memory, the processes keep their spans in their own rings
# (run-hosts.sh --flight-memory, head sampling 1 %: a capture waits for
# the replay thread, which scans at most every 50 ms, and its capture
# event comes after the replay) and it writes
# flight-hosts-memory.txt.
# usage: bench/flight/bench_flight_hosts.sh [BUILD_DIR] [SECONDS (20)] [lttng|memory]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
seconds=${2:-20} mode=${3:-lttng}
memory=() result=flight-hosts.txt
case $mode in
  lttng) ;;
  memory) memory=(--flight-memory --ratio 0.01) result=flight-hosts-memory.txt ;;
  *) echo "bench_flight_hosts.sh: MODE is lttng or memory, not '$mode'" >&2; exit 2 ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-flight-hosts-XXXXXX")
trap 'rm -rf "$work"' EXIT

bash "$src/examples/client-osd-sim/run-hosts.sh" --build "$build" --out "$work/run" \
  --skew none --duration "$seconds" --clients 3 --rate 250 --flight ${memory[@]+"${memory[@]}"} \
  --capture slow-client=20ms,error \
  --cluster-arg --slow-osd --cluster-arg 1 --cluster-arg --slow-ms --cluster-arg 20 \
  --cluster-arg --slow-pct --cluster-arg 0.5 > "$work/run.log" 2>&1 ||
  { tail -30 "$work/run.log" >&2; exit 1; }

HT_BENCH_MODE=$mode python3 "$src/bench/flight/flight_hosts.py" "$src" "$work/run" "$src/bench/results/$result"
