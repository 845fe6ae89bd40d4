#!/usr/bin/env bash
# Integration tests of the simulated cluster: real OSD and client
# processes on loopback, each run bounded (cluster.sh and the clients have
# their own deadlines; `timeout` guards the whole run).
#
# usage: sim_test.sh MODE SIMBIN HOPTRACE PROVIDER WORKDIR SRCDIR
# MODE: rw | corrupt | kill | kill-traced | drop | restart | plain-events |
#       traced-trees | failed-calls | mid-session | slow-report | flight-errors |
#       flight-wrap | flight-storm
set -euo pipefail
mode=$1 bin=$2 hoptrace=$3 provider=$4 work=$5 src=$6
cluster=$src/examples/client-osd-sim/cluster.sh
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider

# HT_TEST_SLOW=1 (scripts/valgrind.sh: every program under valgrind):
# generous request timeouts, and "work happened" thresholds scaled down
# from 1000 operations to 50; the checks stay the same.
slow=() min_ops=1000 kill_at=2 guard=90
if [[ -n ${HT_TEST_SLOW:-} ]]; then
  slow=(--client-arg --timeout-ms --client-arg 20000 --osd-arg --replica-timeout-ms
        --osd-arg 10000)
  min_ops=50 kill_at=5 guard=400
fi
run() { timeout -s KILL $guard bash "$cluster" --bin "$bin" --work "$work/c" "${slow[@]}" "$@"; }
# Recorded modes run the programs under names of their own (symlinks): the
# session then keeps only this test's processes, not other sim-* programs
# running on the same host (a shared machine runs several test suites).
tag="st$$"
mkdir -p "$work/bin"
ln -s "$bin/sim-osd" "$work/bin/$tag-osd"
ln -s "$bin/sim-client" "$work/bin/$tag-cli"
own=(--osd-exe "$work/bin/$tag-osd" --client-exe "$work/bin/$tag-cli")
own_filter="\$ctx.procname == \"$tag-*\""
summary() { cat "$work/c/summary.txt"; }
field() { # field NAME: sum of NAME= over the clients' SIM-CLIENT lines
  python3 -c 'import sys; print(sum(int(float(kv.split("=")[1])) for l in open(sys.argv[1])
    for kv in l.split()[2:] if kv.split("=")[0] == sys.argv[2]))' "$work/c/clients.txt" "$1"
}

case $mode in
rw) # read-your-writes over replicated writes, reads, stats and deletes
  run --messenger plain --osds 4 --clients 2 --duration 5 --inflight 8
  summary
  [[ $(field verified) -gt $min_ops && $(field verify_failures) == 0 && $(field failed) == 0 ]]
  ;;
corrupt) # the verification can fail: an OSD that corrupts reads is caught
  if run --messenger plain --osds 4 --clients 2 --duration 3 --corrupt-reads 20 \
      2> "$work/err.txt"; then
    echo "corrupted reads went unnoticed" >&2; exit 1
  fi
  grep -m3 "VERIFY FAILED" "$work/err.txt"
  grep -q "wrong content" "$work/err.txt"
  [[ $(field verify_failures) -gt 0 ]]
  ;;
kill|kill-traced) # osd.1 crashes mid-run: clients carry on, count errors, never hang
  messenger=plain
  if [[ $mode == kill-traced ]]; then
    messenger=traced
  fi
  run --messenger $messenger --osds 4 --clients 2 --duration $((kill_at * 3)) \
    --kill-osd 1@$kill_at 2> "$work/err.txt"
  cat "$work/err.txt"
  grep -q "osd.1: crashing now" "$work/c/logs/osd.1.log"
  # the survivors saw the loss: replica sends to osd.1 failed
  failed=$(grep -ho "[0-9]* replica sends failed" "$work"/c/logs/osd.[023].log | awk '{s+=$1} END {print s}')
  echo "replica sends failed after the crash: $failed"
  [[ $failed -gt 0 && $(field hung) == 0 && $(field verify_failures) == 0 ]]
  # and work went on after the crash (2 s of 6): at least half the ops of a no-fault run
  [[ $(field ops) -gt $min_ops ]]
  ;;
drop) # connections dropped every 300 ms by the clients; OSDs store files
  run --messenger plain --osds 4 --clients 2 --duration 4 --drop-conn-ms 300 \
    --data-dir "$work/data" 2> "$work/err.txt"
  [[ $(find "$work/data/osd.0" -type f | wc -l) -gt $((min_ops / 100)) ]]
  summary
  grep -q "connections dropped" "$work/err.txt"
  [[ $(field verify_failures) == 0 && $(field hung) == 0 ]]
  ;;
restart) # OSDs killed and restarted (same address, same files): without
  # read-repair the restarted OSD serves stale objects (the clients catch it);
  # with it (--recovering) read-your-writes holds and every request is counted
  if run --messenger plain --osds 4 --clients 2 --duration 10 --rate 200 --inflight 16 \
      --restart-osds 2:1 --no-repair --data-dir "$work/data0" 2> "$work/err0.txt"; then
    echo "restarted OSDs without read-repair: stale reads went unnoticed" >&2; exit 1
  fi
  grep -m3 "VERIFY FAILED" "$work/err0.txt"
  rm -rf "$work/c"
  run --messenger plain --osds 4 --clients 2 --duration 10 --rate 200 --inflight 16 \
    --restart-osds 2:1 --data-dir "$work/data" 2> "$work/err.txt"
  summary
  grep -h "restart osd\|read-repair" "$work/err.txt" "$work"/c/logs/osd.*.log
  # (a loaded host may take seconds to start an OSD: one restart mid-run is enough)
  [[ $(grep -v "after the run" "$work/c/faults.log" | grep -c " restart osd") -ge 1 ]]
  repaired=$(sed -n 's/.*read-repair: \([0-9]*\) objects repaired.*/\1/p' "$work"/c/logs/osd.*.log |
    awk '{s+=$1} END {print s+0}')
  [[ $repaired -gt 0 && $(field verify_failures) == 0 && $(field hung) == 0 ]]
  # the clients reconnected to each OSD restarted with 4 s of the run left
  # (one restarted at the very end may not be reached again: not a fault)
  for id in $(grep -v "after the run" "$work/c/faults.log" |
              sed -n 's/^t=\([0-9]*\)s restart osd\.\([0-9]*\) .*/\1 \2/p' |
              awk '$1 <= 6 {print $2}' | sort -u); do
    served=$(grep "stopped:" "$work/c/logs/osd.$id.log" | tail -n 1 | awk '{print $3}')
    echo "osd.$id after its restart: $served client ops"
    [[ $served -gt 0 ]]
  done
  [[ $(field issued) == $(( $(field ops) + $(field failed) )) && $(field duplicates) == 0 ]]
  ;;
plain-events) # the plain messenger records nothing, even with a session running;
  # a traced cluster in the same session is the control (it must record)
  timeout -s KILL 150 "$hoptrace" record -o "$work/trace" \
    --filter '$ctx.procname == "sim-*"' -- bash -c '
    bash "$1" --bin "$2" --work "$3/c" --messenger plain --osds 4 --clients 2 --duration 3 &&
    bash "$1" --bin "$2" --work "$3/t" --messenger traced --osds 4 \
      --clients 2 --duration 2 --rate 100' _ "$cluster" "$bin" "$work" \
    2> "$work/record.log"
  cat "$work/record.log"
  grep -q "cluster: 2 clients" "$work/record.log"
  [[ $(wc -l < "$work/c/pids") -ge 6 ]]
  # per-process event counts, streamed (the session may hold other
  # processes' events too: a shared host)
  : > "$work/vpids.txt"
  if [[ -d $work/trace ]]; then
    babeltrace2 "$work/trace" 2> /dev/null | grep "hoptrace:" | grep -oE "vpid = [0-9]+" |
      awk '{print $3}' | sort | uniq -c > "$work/vpids.txt" || true
  fi
  count() { # hoptrace events of the processes listed in $1
    awk 'NR == FNR { want[$1] = 1; next } ($2 in want) { n += $1 } END { print n + 0 }' \
      "$1" "$work/vpids.txt"
  }
  plain=$(count "$work/c/pids")
  echo "hoptrace events of the plain cluster's processes: $plain"
  [[ $plain == 0 ]]
  control=$(count "$work/t/pids")
  echo "hoptrace events of the traced control cluster's processes: $control"
  [[ $control -gt 100 ]]
  ;;
traced-trees) # every sampled write: client -> primary -> every replica
  timeout -s KILL 150 "$hoptrace" record -o "$work/trace" --subbuf-size 4M \
    --filter "$own_filter" -- \
    bash "$cluster" --bin "$bin" "${own[@]}" --work "$work/c" --messenger traced --osds 4 --clients 2 \
    --duration 4 --rate 150 --sample-ratio 1 2> "$work/record.log"
  cat "$work/record.log"
  if ! grep -q " 0 discarded by LTTng" "$work/record.log"; then
    echo "LTTng discarded events (another process flooded the session?): exact counts" \
         "cannot be checked; skipped" >&2
    exit 77
  fi
  timeout 120 "$hoptrace" export --format zipkin -o "$work/zipkin.json" "$work/trace"
  python3 "$src/tests/sim/check_trees.py" "$work/zipkin.json" "$work/c/cluster.map" \
    "$work/c/pids" "$(field writes)"
  ;;
failed-calls) # osd.1 crashes, clients fail over: every call leaves a span
  # (check_failed_calls.py); sampling 1.0 so that every count is exact
  timeout -s KILL 150 "$hoptrace" record -o "$work/trace" --subbuf-size 4M -- \
    bash "$cluster" --bin "$bin" "${own[@]}" --work "$work/c" --messenger traced --osds 4 \
    --clients 2 --duration $((kill_at * 3)) --rate 150 --sample-ratio 1 --kill-osd 1@$kill_at \
    --client-arg --failover "${slow[@]}" 2> "$work/record.log" || true
  cat "$work/record.log"
  if ! grep -q " 0 discarded by LTTng" "$work/record.log"; then
    echo "LTTng discarded events: exact counts cannot be checked" >&2
    exit 1
  fi
  timeout 120 "$hoptrace" export --format zipkin -o "$work/zipkin.json" "$work/trace"
  timeout 120 "$hoptrace" export --format otlp -o "$work/otlp.json" "$work/trace"
  python3 "$src/tests/sim/check_failed_calls.py" "$work/zipkin.json" "$work/c/logs" \
    "$work/c/clients.txt" "$work/otlp.json"
  ;;
flight-errors) # flight mode (every request in memory), captures on error;
  # osd.1 crashes: the failed calls fire captures, `record --flight`
  # snapshots them within its rate limit, with exact counts
  HT_FLIGHT=1 HT_CAPTURE=error timeout -s KILL 150 "$hoptrace" record --flight \
    -o "$work/flight" -- bash "$cluster" --bin "$bin" "${own[@]}" --work "$work/c" \
    --messenger traced --osds 4 --clients 2 --duration $((kill_at * 3)) --rate 150 \
    --kill-osd 1@$kill_at --client-arg --failover "${slow[@]}" 2> "$work/record.log" || true
  grep 'flight recorder' "$work/record.log"
  python3 - "$work/flight" "$(field failed)" <<'PY'
import json, os, subprocess, sys
d, failed = sys.argv[1], int(sys.argv[2])
c = json.load(open(os.path.join(d, "capture.json")))
print({k: v for k, v in c.items() if k != "snapshot_list"})
assert c["triggers_fired"] > 0 and c["triggers_fired"] >= failed, "fewer captures than failed calls"
assert c["triggers_fired"] == c["snapshots"] + c["coalesced"] + c["dropped"], "counts"
assert c["snapshots"] == len(c["snapshot_list"]) > 0 and c["snapshot_failures"] == 0
last = os.path.join(d, c["snapshot_list"][-1]["name"])
out = subprocess.run(["babeltrace2", last], capture_output=True, text=True)
assert out.returncode == 0, out.stderr
assert "hoptrace:capture" in out.stdout and "why = 2" in out.stdout, "no error capture in " + last
print("flight-errors: %d failed calls, %d captures fired, %d snapshots"
      % (failed, c["triggers_fired"], c["snapshots"]))
PY
  python3 "$src/tests/sim/snapshot_rate.py" "$work/flight/capture.json" 2
  ;;
flight-memory) # flight mode in process memory (HT_FLIGHT=memory), head
  # sampling at 1 %: the spans of unsampled traces stay in the processes'
  # rings until captured; osd.1 crashes, the failed calls fire captures:
  # >= 99 % of the captured traces complete, their spans written from
  # the rings (span_r events in the snapshots), the recorder's counts
  # exact. A failover's next attempt is a call made after its trace was
  # captured: its request carries the capture to the server
  HT_FLIGHT=memory HT_CAPTURE=error timeout -s KILL 150 "$hoptrace" record --flight \
    --max-defer-ms 10000 -o "$work/flight" -- bash "$cluster" --bin "$bin" "${own[@]}" \
    --work "$work/c" --messenger traced --osds 4 --clients 2 --duration $((kill_at * 3)) \
    --rate 150 --sample-ratio 0.01 --kill-osd 1@$kill_at --client-arg --failover "${slow[@]}" \
    2> "$work/record.log" || true
  grep 'flight recorder' "$work/record.log"
  timeout 120 "$hoptrace" report -o "$work/report.txt" "$work/flight"
  sed -n '/^Captures/,/^$/p' "$work/report.txt"
  python3 - "$work/flight" "$work/report.txt" "$(field failed)" <<'PY'
import json, os, re, subprocess, sys
d, report, failed = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3])
m = re.search(r"captured traces: (\d+) \((\d+) complete, (\d+) partial\)", report)
assert m, "no capture section in the report"
n, complete, partial = map(int, m.groups())
assert n > 0, "nothing captured: the run proves nothing"
assert complete + partial == n and complete >= 0.99 * n, "only %d of %d complete" % (complete, n)
c = json.load(open(os.path.join(d, "capture.json")))
assert c["triggers_fired"] == c["snapshots"] + c["coalesced"] + c["dropped"], "counts"
last = os.path.join(d, c["snapshot_list"][-1]["name"])
out = subprocess.run(["babeltrace2", last], capture_output=True, text=True)
assert out.returncode == 0, out.stderr
replayed = out.stdout.count("hoptrace:span_r:")
assert replayed > 0, "no span_r in " + last + ": the spans did not go through the rings"
print("flight-memory: %d failed calls, %d captured traces, %d complete; %d span_r in the last snapshot"
      % (failed, n, complete, replayed))
PY
  ;;
flight-wrap) # flight mode with rings of 32 KiB a CPU that wrap 50 times
  # and more (LTTng's own packet counts say so) before one capture by
  # hand: every span of the snapshot still has its names and its process.
  # Names and the process event are written again every second by
  # default, and the default ring (8 MiB a CPU) holds 30 s of the demo;
  # 50 wraps of that would take half an hour, so both are scaled down
  # here: a ring holding ~0.2 s, names written again every 20 ms. The
  # capture waits for the traffic, not for a time (a loaded machine got
  # 26 wraps through in the 11 s that gave 62 alone): once osd.0 has
  # received `msgs` sampled messages, or at the latest 3 s before the
  # run's end. ~160 messages make a wrap of both CPUs' rings together, but
  # the count is the least busy ring's, and a loaded scheduler shares the
  # traffic unevenly (2.1:1 seen: 41.8 wraps after 10,208): 14,000 make
  # some 88 wraps on average, 13 s at full speed. The names have a ring
  # of their own (--flight-names-size 16K here, 256 KiB by default),
  # filled only by the names: it wraps only when they are written again
  # (36.5 wraps by the capture here; 0.2 with HT_NAMES_REFRESH_MS=60000,
  # every span still named: the names written at the start never left)
  wraps=50 names_wraps=10 dur=36 rate=500 msgs=14000
  # a sanitizer's build runs the cluster several times slower: fewer wraps
  # awaited, the same property checked
  [[ -n ${HT_SANITIZE:-} ]] && wraps=30 dur=44 msgs=8400
  [[ -n ${HT_TEST_SLOW:-} ]] && wraps=3 names_wraps=2 dur=20 rate=100 msgs=840
  HT_NAMES_REFRESH_MS=20 HT_FLIGHT=1 timeout -s KILL 150 "$hoptrace" record --flight --flight-size 32K \
    --flight-names-size 16K \
    -o "$work/flight" -- bash "$cluster" --bin "$bin" "${own[@]}" --work "$work/c" \
    --messenger traced --osds 3 --clients 2 --duration "$dur" --rate "$rate" --ctl \
    "${slow[@]}" > "$work/run.log" 2> "$work/record.log" &
  rec=$!
  end=$((SECONDS + dur - 3)) got=0
  while ((SECONDS < end)); do
    sleep 0.5
    got=$("$hoptrace" ctl --timeout 10 "$work/c/ctl/osd.0.sock" status 2> /dev/null |
      sed -n 's/.* msgs_received_sampled=\([0-9]*\).*/\1/p') || true
    ((${got:-0} < msgs)) || break
  done
  echo "flight-wrap: capture after $SECONDS s, osd.0 received $got sampled messages (awaited $msgs)"
  "$hoptrace" ctl --timeout 10 "$work/c/ctl/osd.0.sock" capture
  wait "$rec" || { cat "$work/record.log"; exit 1; }
  grep 'flight recorder' "$work/record.log"
  snap=$(python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))
print(c["snapshot_list"][0]["name"] if c["snapshots"] == 1 else "")' "$work/flight/capture.json")
  [[ -n $snap ]] || { echo "flight-wrap: not one snapshot" >&2; exit 1; }
  read -r min names_min < <(python3 "$src/tests/sim/ring_wraps.py" "$work/flight/$snap" 8 4 |
    tee /dev/stderr | tail -n 1)
  python3 -c 'import sys; sys.exit(float(sys.argv[1]) < float(sys.argv[2]))' "$min" "$wraps" ||
    { echo "flight-wrap: the rings wrapped $min times, fewer than $wraps" >&2; exit 1; }
  # the names' own ring (16 KiB a CPU) must have wrapped too: else the
  # names written once at the start would still be there, and the test
  # would pass with names never written again
  python3 -c 'import sys; sys.exit(float(sys.argv[1]) < float(sys.argv[2]))' "$names_min" "$names_wraps" ||
    { echo "flight-wrap: the names ring wrapped $names_min times, fewer than $names_wraps" >&2; exit 1; }
  "$hoptrace" export --all --format zipkin -o "$work/all.json" "$work/flight" 2> "$work/export.log"
  "$hoptrace" export --all --format otlp -q -o "$work/all-otlp.json" "$work/flight"
  cat "$work/export.log"
  python3 - "$work/all.json" "$min" "$work/all-otlp.json" "$tag" "$work/flight/$snap" <<'PY'
import collections, json, re, subprocess, sys
spans = [s for s in json.load(open(sys.argv[1])) if "hoptrace.unfinished" not in s.get("tags", {})]
# Each CPU's ring reaches back its own way (a busier CPU's less far). A
# span side before every ring holds data, plus 40 ms (twice the names'
# period), may come before its names and never meet them again (its
# operation or peer not used since, or used on a CPU whose ring is
# younger): named or not, it is not counted. Every later one must be.
first = {}
text = subprocess.run(["babeltrace2", "--clock-seconds", sys.argv[5]], capture_output=True,
                      text=True, check=True).stdout
for m in re.finditer(r"^\[(\d+\.\d+)\].*?cpu_id = (\d+)", text, re.M):
    first.setdefault(m.group(2), float(m.group(1)))
start = int(max(first.values()) * 1e6)  # us, as Zipkin's timestamps
edge = [s for s in spans if s["timestamp"] < start + 40000]
spans = [s for s in spans if s["timestamp"] >= start + 40000]
bad = [s for s in spans if s.get("name") in (None, "", "unknown")
       or not s.get("localEndpoint", {}).get("serviceName", "").startswith(("osd.", "client."))]
print("flight-wrap: rings whole from %s (first event of each CPU: %s); %d spans before"
      " it or in its first 40 ms left out" % (start, first, len(edge)))
# every span's process named by its process event (OTLP's resource)
otlp = json.load(open(sys.argv[3]))
resources = [{a["key"]: list(a["value"].values())[0] for a in r["resource"]["attributes"]}
             for r in otlp["resourceSpans"]
             if any(int(x["startTimeUnixNano"]) >= (start + 40000) * 1000 and
                    not any(a["key"] == "hoptrace.unfinished" for a in x["attributes"])
                    for ss in r["scopeSpans"] for x in ss["spans"])]
unnamed = [r for r in resources if not str(r.get("process.executable.name", "")).startswith(sys.argv[4])]
print("flight-wrap: rings wrapped %s times; %d spans in the snapshot, %d without names;"
      " %d processes, %d without their name" % (sys.argv[2], len(spans), len(bad),
                                                len(resources), len(unnamed)))
assert spans and not bad, bad[:3]
assert resources and not unnamed, unnamed[:3]
PY
  ;;
flight-storm) # every OSD span a trigger for 5 s (capture-policy at run
  # time, through the control sockets): the host's snapshots stay at 2 a
  # second, and every trigger the processes fired is counted by the
  # recorder exactly (none dropped, none lost)
  HT_FLIGHT=1 timeout -s KILL 150 "$hoptrace" record --flight --max-defer-ms 10000 \
    -o "$work/flight" -- bash "$cluster" --bin "$bin" "${own[@]}" --work "$work/c" \
    --messenger traced --osds 3 --clients 2 --duration 12 --rate 200 --ctl \
    "${slow[@]}" > "$work/run.log" 2> "$work/record.log" &
  rec=$!
  # the OSDs' control sockets, once they serve (a loaded machine takes
  # longer than a fixed pause to start the recorder and the cluster)
  for ((t = 0; t < 600; t++)); do
    [[ -S $work/c/ctl/osd.0.sock && -S $work/c/ctl/osd.1.sock && -S $work/c/ctl/osd.2.sock ]] && break
    sleep 0.1
  done
  for i in 0 1 2; do "$hoptrace" ctl --timeout 10 "$work/c/ctl/osd.$i.sock" capture-policy slow-server=1us; done
  sleep 5
  fired=0
  for i in 0 1 2; do
    "$hoptrace" ctl --timeout 10 "$work/c/ctl/osd.$i.sock" capture-policy off > /dev/null
  done
  sleep 1 # what was fired before "off" is counted now
  for i in 0 1 2; do
    line=$("$hoptrace" ctl --timeout 10 "$work/c/ctl/osd.$i.sock" status)
    n=$(grep -o 'captures_fired=[0-9]*' <<< "$line" | cut -d= -f2)
    u=$(grep -o 'captures_unrecorded=[0-9]*' <<< "$line" | cut -d= -f2)
    [[ $u == 0 ]] || { echo "flight-storm: osd.$i: $u captures not recorded" >&2; exit 1; }
    fired=$((fired + n))
  done
  wait "$rec" || { cat "$work/record.log"; exit 1; }
  grep 'flight recorder' "$work/record.log"
  # every capture event (the OSDs' triggers, and the clients' captures by
  # the replies' flag) once in the snapshots: the report counts them
  "$hoptrace" report -o "$work/report.txt" "$work/flight"
  sed -n '/^Captures/,/^$/p' "$work/report.txt"
  python3 - "$work/flight/capture.json" "$fired" "$work/report.txt" <<'PY'
import json, re, sys
c, fired = json.load(open(sys.argv[1])), int(sys.argv[2])
report = open(sys.argv[3]).read()
print({k: v for k, v in c.items() if k != "snapshot_list"})
by_reason = {m[0]: int(m[1]) for m in re.findall(r"^ {4}(slow-client|error|slow-server|manual) +(\d+)$", report, re.M)}
notices = int(re.search(r"capture notices answered[^:]*: (\d+)", report).group(1))
events = sum(by_reason.values()) + notices
assert by_reason.get("slow-server", 0) > 1000, "a storm of %s triggers only" % by_reason
assert fired <= events, "the OSDs fired %d, the snapshots hold %d" % (fired, events)
assert c["triggers_fired"] + c["tracer_discarded_notifications"] == events, \
    "the snapshots hold %d capture events, the recorder was told of %d (+%d discarded)" % (
        events, c["triggers_fired"], c["tracer_discarded_notifications"])
assert c["triggers_fired"] == c["snapshots"] + c["coalesced"] + c["dropped"], "counts"
assert c["dropped"] == 0 and c["snapshot_failures"] == 0
print("flight-storm: %d capture events (%s, %d by notice; %d by the OSDs), %d snapshots"
      " (%d coalesced), at most 2 a second" % (events, by_reason, notices, fired,
                                               c["snapshots"], c["coalesced"]))
PY
  python3 "$src/tests/sim/snapshot_rate.py" "$work/flight/capture.json" 2
  ;;
mid-session) # sessions started while the traced cluster runs: each one
  # gets the processes' name tables (written again when tracing is seen
  # enabled after being disabled), so every span side has its names
  source "$src/scripts/lttng-env.sh"
  ht_private_world "$0" "$@" # (runs the script again, in a world of its own)
  ht_sessiond_ensure
  sessions=()
  cleanup_mid() {
    for s in "${sessions[@]}"; do timeout 30 lttng destroy "$s" >/dev/null 2>&1 || true; done
    ht_sessiond_release
  }
  trap cleanup_mid EXIT
  run --messenger traced "${own[@]}" --osds 3 --clients 2 --duration 16 --rate 100 \
    --sample-ratio 1 > "$work/run.log" 2>&1 &
  cluster_pid=$!
  for k in 1 2; do
    sleep 2.5 # traffic with no session: tracing seen disabled
    s="ht-mid-$tag-$k"
    sessions+=("$s")
    timeout 30 lttng create "$s" --output="$work/s$k" >/dev/null
    timeout 30 lttng enable-event -u -s "$s" 'hoptrace:*' --filter "$own_filter" >/dev/null
    timeout 30 lttng add-context -u -s "$s" -t vpid -t procname >/dev/null
    timeout 30 lttng start "$s" >/dev/null
    # longer than the names' 1 s refresh, with room: a name written between
    # enable-event and start went to a session not yet active (lost), and
    # is written again within 1 s; a 1.5 s session under ASan recorded
    # 1.06 s, and sides written before the refresh stayed unnamed
    sleep 3
    timeout 60 lttng stop "$s" >/dev/null
    timeout 30 lttng destroy "$s" >/dev/null
    sessions=("${sessions[@]/$s}")
    timeout 120 "$hoptrace" export --format zipkin -o "$work/s$k.json" "$work/s$k" \
      2> "$work/s$k.log"
    cat "$work/s$k.log"
    if grep -q "unnamed" "$work/s$k.log"; then
      echo "session $k: span sides without names" >&2; exit 1
    fi
    python3 - "$work/s$k.json" "$((min_ops / 20))" <<'PY'
import json, sys
# a span the session's start or stop cut (its key-values recorded, its end
# not, or the other way round) is the tool's "unfinished": not a name lost
spans = [s for s in json.load(open(sys.argv[1])) if "hoptrace.unfinished" not in s.get("tags", {})]
want = int(sys.argv[2])
named = [s for s in spans if s.get("name") not in (None, "", "unknown")
         and s.get("localEndpoint", {}).get("serviceName", "").startswith(("osd.", "client."))]
print("mid-session: %d spans, %d named, from %d processes" % (
    len(spans), len(named), len({s["tags"].get("hoptrace.pid") for s in spans})))
if len(spans) < want or len(named) != len(spans):
    sys.exit("FAIL: %d of %d spans named (want all, and at least %d)" % (len(named), len(spans), want))
PY
  done
  wait "$cluster_pid"
  ;;
slow-report) # --slow-osd: the slow replica stands out in `hoptrace report`
  timeout -s KILL 150 "$hoptrace" record -o "$work/trace" --subbuf-size 4M \
    --filter "$own_filter" -- \
    bash "$cluster" --bin "$bin" "${own[@]}" --work "$work/c" --messenger traced --osds 4 --clients 2 \
    --duration 4 --rate 100 --sample-ratio 1 --slow-osd 3 --slow-ms 10 2> "$work/record.log"
  timeout 120 "$hoptrace" report -o "$work/report.txt" "$work/trace"
  python3 - "$work/report.txt" <<'PY'
import re, sys
rows, label = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"^(\S+) -> (osd\.\d+) (replica_write)$", line.rstrip())
    if m:
        label = (m.group(1), m.group(2))
    elif label and line.strip().startswith("service"):
        rows[label] = float(line.split()[2])  # p50, microseconds
        label = None
    elif not line.startswith("  "):
        label = None
slow = {k: v for k, v in rows.items() if k[1] == "osd.3"}
fast = {k: v for k, v in rows.items() if k[1] != "osd.3"}
print("replica_write service p50 (us): slow", sorted(slow.values()), "others", sorted(fast.values()))
assert len(slow) == 3 and len(fast) >= 6, rows
assert min(slow.values()) >= 10000, "the slow OSD does not show its 10 ms"
assert max(fast.values()) < min(slow.values()) / 2, "the slow OSD does not stand out"
PY
  # the aggregate critical path: each operation's shares add up to 100 %;
  # at p99 the slow OSD's service holds a write's largest share. A run of
  # its own: above, every write of osd.3 is 10 ms slower and a loaded
  # machine's stalls (tens of ms) make the slowest 1 %; here 4 % of them
  # are 300 ms slower, which the slowest 1 % then are
  timeout -s KILL 150 "$hoptrace" record -o "$work/trace-tail" --subbuf-size 4M \
    --filter "$own_filter" -- \
    bash "$cluster" --bin "$bin" "${own[@]}" --work "$work/c2" --messenger traced --osds 4 \
    --clients 2 --duration 4 --rate 100 --sample-ratio 1 --slow-osd 3 --slow-ms 300 \
    --slow-pct 4 2> "$work/record-tail.log"
  for t in trace trace-tail; do
    timeout 120 "$hoptrace" report --format json -q -o "$work/$t.json" "$work/$t"
  done
  timeout 120 "$hoptrace" report -q -o "$work/report-tail.txt" "$work/trace-tail"
  python3 - "$work/trace.json" "$work/trace-tail.json" "$work/report-tail.txt" <<'PY'
import json, re, sys
for path in sys.argv[1:3]:
    cp = json.load(open(path))["critical_path"]
    ops = {o["operation"]: o for o in cp["operations"]}
    assert "osd_write" in ops, list(ops)
    for name, o in ops.items():
        for col in ("share_all", "share_slowest_1pct"):
            total = sum(r[col] for r in o["rows"])
            assert abs(total - 1) < 1e-6, "%s %s: %s adds up to %r" % (path, name, col, total)
top = max(ops["osd_write"]["rows"], key=lambda r: r["share_slowest_1pct"])
print("osd_write at p99: %s %s %s holds %.1f %% (%.1f %% of all)" % (
    top["service"], top["operation"], top["phase"], 100 * top["share_slowest_1pct"],
    100 * top["share_all"]))
assert (top["service"], top["phase"]) == ("osd.3", "service self time"), top
text = open(sys.argv[3]).read()
section = text[text.index("Aggregate critical path per operation"):]
totals = re.findall(r"^ +([0-9.]+)% +([0-9.]+)%  total$", section, re.M)
assert len(totals) == len(ops) and all(t == ("100.0", "100.0") for t in totals), totals
PY
  ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
echo "sim $mode: passed"
