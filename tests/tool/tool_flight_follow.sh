#!/usr/bin/env bash
# `export --follow DIR` beside `record --flight -o DIR`, against a real
# session daemon: a flight-mode process captures 8 traces by hand, 1 s
# apart, 40 uncaptured traces before each (flight_fire); the follower
# writes the captured traces while the recorder still runs, each once,
# with their capture tags, and ends by itself once the recorder has
# (its capture.json); what it wrote is what offline `export DIR` writes.
# Two snapshots cut from the recording at a capture (the first holds the
# trace's spans, the second its capture): follow writes what offline
# does, and drops the spans only after 32 snapshots that add nothing.
# Then on a copy without capture.json: SIGINT ends it within 2 s, what it
# held written, marked unsettled, the JSON whole; --timeout ends it.
# usage: tool_flight_follow.sh HOPTRACE FLIGHT_FIRE PROVIDER WORKDIR SRCDIR
set -euo pipefail
src=$(cd "$5" && pwd)
source "$src/../../scripts/lttng-env.sh"
hoptrace=$1 fire=$2 provider=$3 work=$4
ht_test_open "$work" "$provider" ht_private_world_end "$0" "$@"
mkdir "$work/rec"
ht_sessiond_release # record --flight starts a daemon of its own

"$hoptrace" export --follow --format zipkin -o "$work/follow.json" "$work/rec" \
  2> "$work/follow.log" &
follower=$!
"$hoptrace" record --flight -o "$work/rec" -- "$fire" 8 1000000 40 \
  > "$work/rec.out" 2> "$work/rec.log" &
recorder=$!
# Traces the follower has written while the recorder runs, each with the
# wall time it was first seen and its root's end (the capture's moment).
python3 - "$work/follow.json" "$recorder" "$work/seen.txt" <<'PY'
import json, os, sys, time
path, pid, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seen = {}
def alive():
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not reaped by the shell yet) is not running; nor
    # is one reaped between the two looks
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False
deadline = time.time() + 120
while alive() and time.time() < deadline:
    now = time.time()
    try:
        text = open(path).read()
    except FileNotFoundError:
        text = ""
    # the array is open while the follower runs: close it to parse
    body = text.strip().rstrip(",")
    if body.startswith("["):
        try:
            spans = json.loads(body + ("" if body.endswith("]") else "]"))
        except ValueError:
            spans = []  # a trace half written: next time
        for s in spans:
            if "parentId" not in s and s["traceId"] not in seen:
                seen[s["traceId"]] = (now, (s["timestamp"] + s["duration"]) / 1e6)
    time.sleep(0.05)
with open(out, "w") as f:
    for t, (at, end) in sorted(seen.items(), key=lambda x: x[1]):
        f.write("%s %.3f\n" % (t, at - end))
PY
rc=0
wait "$recorder" || rc=$?
[[ $rc == 0 ]] || { cat "$work/rec.log" >&2; echo "record: exit $rc" >&2; exit 1; }
# the recorder's end (capture.json) ends the follower
rc=0
for ((i = 0; i < 300; i++)); do kill -0 "$follower" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$follower" 2>/dev/null; then
  kill -TERM "$follower"
  echo "the follower did not end within 30 s of the recorder's end" >&2
  exit 1
fi
wait "$follower" || rc=$?
cat "$work/follow.log"
[[ $rc == 0 ]] || { echo "follower: exit $rc" >&2; exit 1; }
echo "seen while the recorder ran (trace, seconds from its capture to written):"
cat "$work/seen.txt"
live=$(wc -l < "$work/seen.txt")
[[ $live -ge 2 ]] || { echo "only $live captured traces written while recording" >&2; exit 1; }
grep -q "followed [1-9][0-9]* snapshots" "$work/follow.log"
grep -q "8 captured traces (8 complete, 0 partial), 8 triggers" "$work/follow.log"

timeout 120 "$hoptrace" export --format zipkin -o "$work/offline.json" "$work/rec" \
  2> "$work/offline.log"
python3 - "$work/follow.json" "$work/offline.json" <<'PY'
import collections, json, sys
follow, offline = (json.load(open(p)) for p in sys.argv[1:3])
roots = [s for s in follow if "parentId" not in s]
per_trace = collections.Counter(s["traceId"] for s in roots)
assert len(roots) == 8 and all(n == 1 for n in per_trace.values()), per_trace
assert all(r["tags"]["hoptrace.capture.reason"] == "manual" for r in roots), roots
assert not any("hoptrace.capture.settled" in r["tags"] for r in roots), roots
key = lambda s: json.dumps(s, sort_keys=True)
assert sorted(map(key, follow)) == sorted(map(key, offline)), "follow and offline differ"
print("follow = offline: %d spans, %d captured traces, each once" % (len(follow), len(roots)))
PY

# A ring that wrapped between two snapshots: the first snapshot cut just
# before its capture event (it holds the first captured trace's spans,
# not its capture), the second from that capture on (the capture, not
# the spans). Follow holds the uncaptured trace until the capture
# reaches it, as offline reading of both does: 2 traces, 4 spans.
snaps=("$work"/rec/capture-00000[12]-*)
babeltrace2 --clock-seconds "${snaps[0]}" > "$work/first.txt" # whole: no SIGPIPE
cap=$(grep -m1 'hoptrace:capture:' "$work/first.txt" | tr -d '[]' | cut -d' ' -f1)
before=$(python3 -c 'import sys; s, n = sys.argv[1].split("."); t = int(s + n) - 1
print("%d.%09d" % divmod(t, 10**9))' "$cap")
mkdir "$work/wrapped"
for part in "0 --end=$before" "1 --begin=$cap"; do
  read -r i bound <<< "$part"
  out="$work/wrapped/capture-000001-20261128-000000-$i"
  babeltrace2 "${snaps[i]}" "$bound" -o ctf -w "$out" > /dev/null
  touch "$out/.hoptrace-written"
done
timeout 60 "$hoptrace" export --follow --grace 0.2 --timeout 1 --format zipkin \
  -o "$work/wrapped-follow.json" "$work/wrapped" 2> "$work/wrapped-follow.log"
timeout 60 "$hoptrace" export --format zipkin -o "$work/wrapped-offline.json" "$work/wrapped" \
  2> "$work/wrapped-offline.log"
cat "$work/wrapped-follow.log"
python3 "$src/same_zipkin.py" "$work/wrapped-follow.json" "$work/wrapped-offline.json" 4
# The hold's size: at most half of --max-open-traces (30 of the 41
# uncaptured), the least recently added to dropped first (the captured
# trace's spans came last: kept), and counted.
timeout 60 "$hoptrace" export --follow --grace 0.2 --timeout 1 --max-open-traces 60 \
  --format zipkin -o "$work/bound.json" "$work/wrapped" 2> "$work/bound.log"
python3 "$src/same_zipkin.py" "$work/bound.json" "$work/wrapped-offline.json" 4
grep "held for a later capture, dropped: 0 after 32 snapshots .*, [1-9][0-9]* past the bound" \
  "$work/bound.log"
# the uncaptured traces the open-trace limit pushed out were not written:
# not counted as written early (it said 11 before the assembler counted
# only the traces it wrote; an incomplete one among them made the exit 3)
if grep "written before their grace" "$work/bound.log"; then
  echo "uncaptured traces, never written, counted as written early" >&2
  exit 1
fi

# The hold's age: between the two parts, snapshots that add nothing to
# the trace (each one event of another, a copy). After 31 the capture
# still finds the trace's spans; after 32 (HOLD_SNAPSHOTS) they were
# dropped, and the summary counts them.
first=$(grep -m1 'hoptrace:span' "$work/first.txt" | tr -d '[]' | cut -d' ' -f1)
filler="$work/wrapped/filler"
babeltrace2 "${snaps[0]}" --begin="$first" --end="$first" -o ctf -w "$filler" > /dev/null
touch "$filler/.hoptrace-written"
mv "$work/wrapped/capture-000001-20261128-000000-1" "$work/wrapped/capture-000001-20261128-000000-40"
aged() { # N: follow with N snapshots between; its spans' count, its log
  for ((i = 1; i <= $1; i++)); do
    [[ -d "$work/wrapped/capture-000001-20261128-000000-$i" ]] ||
      cp -r "$filler" "$work/wrapped/capture-000001-20261128-000000-$i"
  done
  timeout 60 "$hoptrace" export --follow --grace 0.2 --timeout 1 --format zipkin \
    -o "$work/aged.json" "$work/wrapped" 2> "$work/aged-$1.log"
  python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$work/aged.json"
}
mv "$filler" "$work/filler" && filler="$work/filler" # not a snapshot itself
spans=$(aged 31)
[[ $spans == 4 ]] || { cat "$work/aged-31.log"; echo "31 between: $spans spans" >&2; exit 1; }
! grep -q "held for a later capture" "$work/aged-31.log"
spans=$(aged 32)
[[ $spans == 2 ]] || { cat "$work/aged-32.log"; echo "32 between: $spans spans" >&2; exit 1; }
grep "held for a later capture, dropped: [1-9][0-9]* after 32 snapshots" "$work/aged-32.log"

# SIGINT on a follower that holds traces not settled yet (no
# capture.json: it would wait for more snapshots)
cp -r "$work/rec" "$work/copy"
rm "$work/copy/capture.json"
"$hoptrace" export --follow --grace 60 --format zipkin -o "$work/int.json" "$work/copy" \
  2> "$work/int.log" &
follower=$!
# every snapshot read (the settle time is 60 s: nothing written yet): its
# threads asleep for 1 s, that is, in each 0.1 s less than 10 ms on a CPU
# or waiting for one (schedstat, ns: a reader starved by a loaded machine
# waits on the run queue, and counts busy). Its clock ticks could not
# tell: polling every 200 ms costs a tick now and then, every 0.2 s under
# ASan on a loaded machine; a fixed sleep was too short there.
busy_ns() {
  cat /proc/"$follower"/task/*/schedstat 2> /dev/null | awk '{n += $1 + $2} END {print n + 0}'
}
busy_last=$(busy_ns) still=0
for ((i = 0; i < 600 && still < 10; i++)); do
  sleep 0.1
  busy=$(busy_ns)
  if ((busy - busy_last < 10000000)); then still=$((still + 1)); else still=0; fi
  busy_last=$busy
done
(( still >= 10 )) || { kill "$follower"; echo "the follower still busy after 60 s" >&2; exit 1; }
if grep -q '"traceId"' "$work/int.json"; then
  echo "a trace written before its settle time" >&2
  exit 1
fi
started=$(date +%s%N)
kill -INT "$follower"
rc=0
wait "$follower" || rc=$?
took=$((($(date +%s%N) - started) / 1000000))
cat "$work/int.log"
echo "SIGINT: exit $rc after $took ms"
[[ $rc == 0 && $took -lt 2000 ]]
python3 - "$work/int.json" <<'PY'
import json, sys
roots = [s for s in json.load(open(sys.argv[1])) if "parentId" not in s]
assert len(roots) == 8, len(roots)
assert all(r["tags"]["hoptrace.capture.settled"].startswith("no:") for r in roots), roots
PY

# --timeout: no new snapshot for 1 s ends it, every trace written
rc=0
timeout 60 "$hoptrace" export --follow --grace 0.2 --timeout 1 --format zipkin \
  -o "$work/quiet.json" "$work/copy" 2> "$work/quiet.log" || rc=$?
[[ $rc == 0 ]] || { cat "$work/quiet.log" >&2; exit 1; }
python3 "$src/same_zipkin.py" "$work/quiet.json" "$work/offline.json" 16
echo "tool_flight_follow: ok"
