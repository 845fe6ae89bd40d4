#!/usr/bin/env bash
# Flight-recorder snapshots, read by the tool:
#  - three snapshots of one snapshot session taken while the workload
#    runs overlap (each is the whole ring at its moment); read together
#    each event counts once: the events read less the copies the summary
#    says it skipped are babeltrace2's own union of the snapshots, with 1
#    and 4 decoders, and no span has an annotation or tag twice;
#  - capture events (capture_emit, as flight-mode processes write them)
#    for five traces: by default only those are exported, their roots
#    tagged with why (hoptrace.capture.*); one whose notice reached a
#    process with no span left, one with no span at all, are partial and
#    say so; --all exports every trace the snapshots hold;
#  - report's capture section: triggers by reason and by process,
#    captured, complete, partial (what is missing), and capture.json's
#    counters when one lies beside the snapshots;
#  - `hoptrace record --flight` around a flight-mode process capturing
#    traces by hand while others fill the ring (flight_fire): every
#    capture event of the snapshots read once (the recorder's
#    triggers_fired), every captured trace written, each event once; a
#    recorder that captured nothing: its counters, no error;
#  - a recording to disk of a flight-mode process whose sampler keeps 1
#    in 4: only the kept traces by default, the others counted as
#    recorded, not kept; --all writes them all.
# usage: tool_flight.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR CAPTURE_EMIT FLIGHT_FIRE
set -euo pipefail
trap 'echo "tool_flight: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
hoptrace=$1 workload=$2 provider=$3 work=$4 here=$5 emit=$6 fire=$7
source "$here/../../scripts/lttng-env.sh"
session=hoptrace-flight-$$
cleanup() {
  lttng --no-sessiond destroy "$session" >/dev/null 2>&1 || true
  ht_sessiond_release
}
# a daemon of its own, in a world of its own
ht_test_open "$work" "$provider" cleanup "$0" "$@"
ht_sessiond_ensure
snaps=$work/flight
lt() { lttng --no-sessiond "$@" > /dev/null; }
lt create "$session" --snapshot -o "$snaps"
lt enable-channel -u c --overwrite --subbuf-size 64K --num-subbuf 4 --buffers-uid
lt enable-event -u -c c 'hoptrace:*'
lt start

"$workload" --traces 600 --fanout 2 --pause-us 5000 --expect "$work/expect.txt" &
wpid=$!
sleep 1.5
lt snapshot record -n early
wait "$wpid"
lt snapshot record -n late

# Five captures, on the workload's last traces (still in the ring): a
# slow client call (and its notice answered by the workload's process), an
# error, a slow server span whose notice also reached a process holding no
# span of it (pid 999999), a capture by hand; and one for a trace no
# snapshot holds.
roots=$(awk '$3 == "0000000000000000" {print $1, $2}' "$work/expect.txt" | tail -4)
read -r t1 s1 t2 s2 t3 s3 t4 s4 <<< "$(echo $roots)"
gone=0123456789abcdef0123456789abcdef
cat > "$work/captures.txt" <<CAP
$t1 $s1 $wpid 1 0 1000000 3500000 client
$t1 $s1 $wpid 5 1 0 0 client
$t2 $s2 $wpid 2 0 0 4294967282 client
$t3 $s3 $wpid 3 0 2000000 2500000 client
$t3 $s3 999999 5 2 0 0 client
$t4 0 $wpid 4 0 0 0 ctl
$gone 1 $wpid 1 0 1000000 9000000 client
CAP
"$emit" < "$work/captures.txt"
lt snapshot record -n captured
lt destroy "$session"
ls "$snaps"
[[ $(ls "$snaps" | wc -l) == 3 ]]

# 1. Each event once.
union=$(babeltrace2 "$snaps" 2>/dev/null | grep -c ' hoptrace:')
for d in 1 4; do
  timeout 120 "$hoptrace" export --all --format zipkin --decoders $d -o "$work/all$d.json" \
    "$snaps" 2> "$work/all$d.log"
  cat "$work/all$d.log"
  read_n=$(sed -n 's/^hoptrace: \([0-9]*\) events,.*/\1/p' "$work/all$d.log")
  copies=$(sed -n 's/.*snapshots: \([0-9]*\) copies of events.*/\1/p' "$work/all$d.log")
  echo "decoders $d: $read_n events read, $copies copies skipped, babeltrace2's union $union"
  [[ $copies -gt 0 && $((read_n - copies)) == "$union" ]]
done
cmp "$work/all1.json" "$work/all4.json"
python3 - "$work/all1.json" "$work/expect.txt" <<'PY'
import json, sys, collections
spans = json.load(open(sys.argv[1]))
keys = collections.Counter((s["traceId"], s["id"], s.get("kind")) for s in spans)
assert all(v == 1 for v in keys.values()), "a span side twice"
for s in spans:
    ann = [(a["timestamp"], a["value"]) for a in s.get("annotations", [])]
    assert len(ann) == len(set(ann)), "an annotation twice: %r" % s
expected = set()
for line in open(sys.argv[2]):
    t, sid, parent, kind = line.split()[:4]
    expected.add((t, sid))
got = {(s["traceId"], s["id"]) for s in spans}
assert got <= expected, "spans nobody recorded: %r" % list(got - expected)[:3]
print("all: %d spans of %d traces, each once" % (len(spans), len({s['traceId'] for s in spans})))
PY

# 2. Only the captured traces by default, their roots tagged.
timeout 120 "$hoptrace" export --format zipkin -o "$work/captured.json" "$snaps" \
  2> "$work/captured.log"
cat "$work/captured.log"
grep -q "5 captured traces (3 complete, 2 partial), 5 triggers, 2 capture notices answered" \
  "$work/captured.log"
python3 - "$work/captured.json" "$t1" "$t2" "$t3" "$t4" "$wpid" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
t1, t2, t3, t4, wpid = sys.argv[2:]
assert {s["traceId"] for s in spans} == {t1, t2, t3, t4}, {s["traceId"] for s in spans}
root = {s["traceId"]: s["tags"] for s in spans if "parentId" not in s}
r1, r2, r3, r4 = root[t1], root[t2], root[t3], root[t4]
assert r1["hoptrace.capture.reason"] == "slow-client", r1
assert r1["hoptrace.capture.threshold_ms"] == "1.000" and r1["hoptrace.capture.value_ms"] == "3.500", r1
assert r1["hoptrace.capture.by"].startswith("client (host ") and r1["hoptrace.capture.by"].endswith(", pid %s)" % wpid), r1
assert r1["hoptrace.capture.hosts"] == "1" and "hoptrace.incomplete" not in r1, r1
assert r2["hoptrace.capture.reason"] == "error" and r2["hoptrace.capture.status"] == "-14", r2
assert r3["hoptrace.capture.reason"] == "slow-server" and r3["hoptrace.capture.hosts"] == "1", r3
assert "pid 999999" in r3["hoptrace.incomplete"], r3
assert r4["hoptrace.capture.reason"] == "manual" and r4["hoptrace.capture.by"].startswith("ctl "), r4
for t in (t1, t2, t4):
    assert not any("hoptrace.incomplete" in s["tags"] for s in spans if s["traceId"] == t), t
print("captured: %d spans of 4 traces, roots tagged" % len(spans))
PY

# A trace asked for by its id is written, captured or not: one the
# snapshots hold (the rings may have lost any given one) and not captured.
other=$(python3 -c 'import json, sys
held = {x["traceId"] for x in json.load(open(sys.argv[1]))}
print(sorted(held - {x["traceId"] for x in json.load(open(sys.argv[2]))})[0])' \
  "$work/all1.json" "$work/captured.json")
timeout 120 "$hoptrace" export --format zipkin --trace-id "$other" -o "$work/one.json" "$snaps" \
  2> "$work/one.log"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s and {x["traceId"] for x in s} == {sys.argv[2]}, s[:1]' \
  "$work/one.json" "$other"

# 3. The report's capture section, with capture.json's counters.
cat > "$snaps/capture.json" <<'JSON'
{"triggers_fired": 7, "snapshots": 3, "coalesced": 2, "rate_limited": 1, "dropped": 0,
 "daemon_dropped_notifications": 0, "snapshot_failures": 0,
 "trigger_to_snapshot_ms": {"p50": 41.5, "p99": 180.25, "max": 190},
 "snapshot_list": ["early", "late", "captured"]}
JSON
timeout 120 "$hoptrace" report -o "$work/report.txt" "$snaps" 2> "$work/report.log"
sed -n '/^Captures/,/^$/p' "$work/report.txt"
grep -Eq "^ *slow-client +2$" "$work/report.txt"
grep -Eq "^ *manual +1$" "$work/report.txt"
grep -q "captured traces: 5 (3 complete, 2 partial)" "$work/report.txt"
grep -q "pid 999999" "$work/report.txt"
grep -q "snapshots 3, coalesced 2, rate-limited 1, dropped 0, daemon-dropped 0" "$work/report.txt"
grep -q "trigger to snapshot: p50 41.5 ms, p99 180.25 ms" "$work/report.txt"
grep -Eq "^  events of overlapping snapshots read once: [1-9][0-9]* copies skipped$" "$work/report.txt"

# 4. Outside snapshots nothing changes: no capture section, every trace.
mkdir -p "$work/plain"
cp -r "$snaps"/late-*/. "$work/plain/"
timeout 120 "$hoptrace" report -o "$work/plain.txt" "$work/plain" 2> "$work/plain.log"
if grep -q "^Captures" "$work/plain.txt"; then echo "FAIL: a capture section without snapshots" >&2; exit 1; fi
if grep -q "captured traces" "$work/plain.log"; then echo "FAIL: captured traces without snapshots" >&2; exit 1; fi
# 5. The recorder's own snapshots: 12 captures by hand, 100 ms apart,
# 40 uncaptured traces before each.
ht_sessiond_release # record --flight starts a daemon of its own
timeout 120 "$hoptrace" record --flight -o "$work/rec" -- "$fire" 12 100000 40 \
  > "$work/rec.out" 2> "$work/rec.log" || { cat "$work/rec.log"; exit 1; }
fired=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["triggers_fired"])' \
  "$work/rec/capture.json")
union=$(babeltrace2 "$work/rec" 2>/dev/null | grep -c ' hoptrace:')
timeout 120 "$hoptrace" export --format zipkin -o "$work/rec.json" "$work/rec" 2> "$work/rec-export.log"
cat "$work/rec-export.log"
read_n=$(sed -n 's/^hoptrace: \([0-9]*\) events,.*/\1/p' "$work/rec-export.log")
copies=$(sed -n 's/.*snapshots: \([0-9]*\) copies of events.*/\1/p' "$work/rec-export.log")
echo "recorder: $fired triggers fired, $(ls -d "$work"/rec/capture-* | wc -l) snapshots;" \
  "$read_n events read, $copies copies skipped, babeltrace2's union $union"
[[ $((read_n - copies)) == "$union" ]]
grep -q "12 captured traces (12 complete, 0 partial), 12 triggers, 0 capture notices answered" \
  "$work/rec-export.log"
[[ $fired == 12 ]]
python3 - "$work/rec.json" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
roots = [s for s in spans if "parentId" not in s]
assert len(roots) == 12 and len(spans) == 24, (len(roots), len(spans))
assert all(r["tags"]["hoptrace.capture.reason"] == "manual" for r in roots)
PY
mkdir -p "$work/nothing"
echo '{"triggers_fired":0,"snapshots":0,"coalesced":0,"rate_limited":0,"dropped":0}' \
  > "$work/nothing/capture.json"
timeout 60 "$hoptrace" report -o "$work/nothing.txt" "$work/nothing" 2> "$work/nothing.log"
grep -q "captured traces: 0 (0 complete, 0 partial)" "$work/nothing.txt"
grep -q "triggers fired 0, snapshots 0" "$work/nothing.txt"
# 6. Recorded, not kept: a disk recording beside flight mode.
timeout 120 env HT_FLIGHT=1 HT_SAMPLE_RATIO=0.25 "$hoptrace" record -o "$work/disk" -- \
  "$workload" --traces 400 --fanout 2 --sampler > /dev/null 2> "$work/disk-record.log" ||
  { cat "$work/disk-record.log"; exit 1; }
timeout 120 "$hoptrace" export --format zipkin -o "$work/kept.json" "$work/disk" 2> "$work/kept.log"
timeout 120 "$hoptrace" export --all --format zipkin -o "$work/disk-all.json" "$work/disk" \
  2> "$work/disk-all.log"
cat "$work/kept.log"
not_kept=$(sed -n 's/^hoptrace: \([0-9]*\) traces recorded, not kept.*/\1/p' "$work/kept.log")
kept=$(sed -n 's/^hoptrace: [0-9]* events, \([0-9]*\) traces.*/\1/p' "$work/kept.log")
all=$(sed -n 's/^hoptrace: [0-9]* events, \([0-9]*\) traces.*/\1/p' "$work/disk-all.log")
echo "disk: $kept kept, $not_kept recorded and not kept, $all with --all"
[[ $kept -gt 0 && $not_kept -gt 0 && $((kept + not_kept)) == 400 && $all == 400 ]]
if grep -q "not kept" "$work/disk-all.log"; then echo "FAIL: --all says traces not kept" >&2; exit 1; fi
echo "tool flight test passed"
