#!/usr/bin/env bash
# The launcher: a traced object-store cluster you can run, break and read.
# Starts a local cluster on loopback (4 OSDs, 3 clients by default) under
# an LTTng session (`hoptrace record`: a session daemon of its own, so the
# trace holds this cluster only; stopped at the end), runs the workload for a bounded time,
# raises and lowers the sampling ratio mid-run, stops everything it
# started, then writes into the output directory:
#   trace/ (CTF), zipkin.json, otlp.json, chrome-trace.json, report.txt,
#   waterfall.html, cluster/ (map, logs, client summaries)
#
#   run-sim.sh [--out DIR] [--build DIR] [--duration S] [--osds N]
#              [--clients N] [--rate R] [--slow-osd [ID]] [--slow-ms MS]
#              [--kill-osd ID@SEC] [--drop-conn-ms MS] [--restart-osds PERIOD[:DOWN]]
#              [--messenger traced|plain] [--ratio R]
#              [--ratio-schedule SEC:R,...] [--no-record]
#              [--live URL --live-name NAME [--start-after FILE]]
#              [--flight [--capture SPEC] [--flight-size SIZE] [--flight-memory]]
#
# --live: the recording also streams live to the relay at URL (session
# NAME); --start-after: the cluster starts once FILE exists (at most 60 s
# later), e.g. once a live follower is attached.
# --flight: every request recorded in memory (HT_FLIGHT=1), the processes'
# capture triggers set by SPEC (HT_CAPTURE; default slow-client=10ms,error),
# recorded by `hoptrace record --flight` (a ring of SIZE a CPU): only the
# snapshots its triggers took are written (snapshots/, capture.json), and
# the outputs are made from them. --flight-memory: the processes keep the
# spans in rings of their own (HT_FLIGHT=memory, 2 MiB a thread) and
# write a trace's to LTTng only when it is captured (README "Flight
# recorder").
#
# Never: kill a process it did not start; leave one behind.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

out="" build="$root/build" duration=20 osds=4 clients=3 rate=250 inflight=16
slow_osd="" slow_ms=10 kill_spec="" drop_ms=0 messenger=traced ratio=0.1 restart_spec=""
schedule="" record=1 live_url="" live_name="" start_after=""
flight=0 capture="slow-client=10ms,error" flight_size="" flight_mode=1
usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    --duration) duration=$2; shift ;;
    --osds) osds=$2; shift ;;
    --clients) clients=$2; shift ;;
    --rate) rate=$2; shift ;;
    --inflight) inflight=$2; shift ;;
    --slow-osd)
      if [[ ${2:-} =~ ^[0-9]+$ ]]; then slow_osd=$2; shift; else slow_osd=LAST; fi ;;
    --slow-ms) slow_ms=$2; shift ;;
    --kill-osd) kill_spec=$2; shift ;;
    --drop-conn-ms) drop_ms=$2; shift ;;
    --restart-osds) restart_spec=$2; shift ;;
    --messenger) messenger=$2; shift ;;
    --ratio) ratio=$2; shift ;;
    --ratio-schedule) schedule=$2; shift ;;
    --no-record) record=0 ;;
    --live) live_url=$2; shift ;;
    --live-name) live_name=$2; shift ;;
    --start-after) start_after=$2; shift ;;
    --flight) flight=1 ;;
    --flight-memory) flight=1 flight_mode=memory ;;
    --capture) capture=$2; shift ;;
    --flight-size) flight_size=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-sim: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $slow_osd == LAST ]] && slow_osd=$((osds - 1))
[[ -n $out ]] || out="$PWD/sim-out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Default mid-run changes: raise to 1.0 at a third, lower to 0.01 at two thirds.
if [[ -z $schedule ]]; then
  schedule="$(python3 -c "d=float('$duration'); print('%.1f:1,%.1f:0.01' % (d/3, 2*d/3))")"
fi

source "$here/sim-build.sh"
sim_build_ensure "$root" "$build" run-sim


args=(--bin "$bin" --work "$out/cluster" --osds "$osds" --clients "$clients"
      --duration "$duration" --messenger "$messenger" --rate "$rate" --inflight "$inflight"
      --sample-ratio "$ratio" --ratio-schedule "$schedule" --hoptrace "$hoptrace")
[[ -n $slow_osd ]] && args+=(--slow-osd "$slow_osd" --slow-ms "$slow_ms")
[[ -n $kill_spec ]] && args+=(--kill-osd "$kill_spec")
[[ $drop_ms != 0 ]] && args+=(--drop-conn-ms "$drop_ms")
if [[ -n $restart_spec ]]; then # OSD files kept across restarts (fresh for each run)
  rm -rf "$out/data"
  args+=(--restart-osds "$restart_spec" --data-dir "$out/data")
fi

echo "run-sim: $clients clients, $osds OSDs, ${duration} s, $messenger messenger," \
     "sampling ratio $ratio then $schedule (SEC:RATIO)" >&2
status=0
if [[ $record == 0 || $messenger == plain ]]; then
  bash "$here/cluster.sh" "${args[@]}" || status=$?
  echo "run-sim: cluster logs in $out/cluster/logs" >&2
  exit $status
fi

rm -rf "$out/trace" "$out/snapshots"
live=()
[[ -n $live_url ]] && live=(--live "$live_url" --name "${live_name:?--live wants --live-name}")
cluster=(bash "$here/cluster.sh" "${args[@]}")
if [[ -n $start_after ]]; then
  cluster=(bash -c 'for ((i = 0; i < 600; i++)); do [[ -e $1 ]] && break; sleep 0.1; done
    shift; exec "$@"' start-after "$start_after" "${cluster[@]}")
fi
# 4 MiB x 8 sub-buffers a CPU: ~300,000 hop events of headroom. record's
# own session daemon: the trace holds this cluster's processes only,
# whatever else runs on the machine.
trace=$out/trace
if ((flight)); then
  [[ -z $live_url ]] || { echo "run-sim: --flight records in memory: not with --live" >&2; exit 2; }
  trace=$out/snapshots
  export HT_FLIGHT=$flight_mode HT_CAPTURE=$capture
  echo "run-sim: flight mode: every request recorded in memory, captured on $capture" >&2
  "$hoptrace" record --flight -o "$trace" ${flight_size:+--flight-size "$flight_size"} -- \
    "${cluster[@]}" || status=$?
  unset HT_FLIGHT HT_CAPTURE
else
  "$hoptrace" record -o "$trace" --subbuf-size 4M --num-subbuf 8 "${live[@]}" -- \
    "${cluster[@]}" || status=$?
fi

echo "run-sim: converting the trace" >&2
"$hoptrace" export --format zipkin -q -o "$out/zipkin.json" "$trace"
"$hoptrace" export --format otlp -q -o "$out/otlp.json" "$trace"
"$hoptrace" export --format chrome -q -o "$out/chrome-trace.json" "$trace"
"$hoptrace" report -o "$out/report.txt" "$trace" 2> "$out/report.log" || cat "$out/report.log" >&2
"$hoptrace" view -q -o "$out/waterfall.html" "$trace"

trace_line="  trace/              the LTTng CTF trace      babeltrace2 $out/trace | less"
((flight)) && trace_line="  snapshots/          LTTng snapshots (CTF), overlapping, and capture.json: what fired, what was written"
cat <<TXT

== hoptrace simulator: $(cat "$out/cluster/summary.txt" 2>/dev/null | sed 's/^cluster: //')

Outputs in $out:
$trace_line
  zipkin.json         Zipkin v2 spans          POST to a Zipkin/Jaeger collector, or open in its UI
  otlp.json           OTLP/JSON spans          any OpenTelemetry collector (otlphttp, json)
  chrome-trace.json   Chrome trace events      https://ui.perfetto.dev or chrome://tracing
  report.txt          per-hop latency table, slowest traces, losses
  waterfall.html      self-contained waterfall of every trace; open in a browser
  cluster/            cluster map, OSD and client logs, summaries

TXT
python3 "$here/sim_summary.py" "$out/zipkin.json" "$out/cluster/pids" "$schedule" "$ratio" || true
if ((flight)); then
  python3 - "$trace/capture.json" <<'PY' || true
import json, sys
c = json.load(open(sys.argv[1]))
q = c["trigger_to_snapshot_ms"]
print("\nFlight recorder: %d captures fired (%s); %d snapshots written, %d triggers coalesced "
      "into them, %d waited for the rate limit, %d dropped; trigger to snapshot written p50 "
      "%.0f ms, p99 %.0f ms; ring %d MiB a CPU, %d MiB in all (the names' ring included)"
      % (c["triggers_fired"], sys.argv[1], c["snapshots"], c["coalesced"], c["rate_limited"],
         c["dropped"], q["p50"], q["p99"], c["ring_bytes_per_cpu"] >> 20,
         c["memory_bytes"] >> 20))
PY
fi
echo
sed -n '/^Slowest traces/,/^$/p' "$out/report.txt" | head -n 16 || true  # head may cut sed off (SIGPIPE)
if [[ -n $slow_osd ]]; then
  echo "osd.$slow_osd adds ${slow_ms} ms to every disk write: it is the slowest replica above,"
  echo "on the critical path of the slowest traces, and its rows in $out/report.txt"
  echo "(\"osd.N -> osd.$slow_osd replica_write\": service) stand out."
fi
exit $status
