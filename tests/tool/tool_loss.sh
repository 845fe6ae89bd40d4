#!/usr/bin/env bash
# A channel far too small for a burst of traces forces LTTng to discard
# events; the tool must say so (count in the summary and the report) and
# mark the affected traces incomplete in its outputs.
# usage: tool_loss.sh HOPTRACE WORKLOAD PROVIDER WORKDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider

timeout 180 "$hoptrace" record -o "$work/trace" --filter '$ctx.procname == "trace_workload"' --subbuf-size 4096 --num-subbuf 2 -- \
  "$workload" --traces 30000 --fanout 3 2> "$work/record.log"
cat "$work/record.log"
discarded=$(sed -n 's/.* \([0-9][0-9]*\) discarded by LTTng.*/\1/p' "$work/record.log")
echo "record reported $discarded discarded events"
[[ -n "$discarded" && "$discarded" -gt 0 ]]

timeout 180 "$hoptrace" report -o "$work/report.txt" "$work/trace" 2> "$work/summary.txt"
cat "$work/summary.txt"
grep -q "events discarded by LTTng: *$discarded " "$work/report.txt"
grep -q " $discarded events discarded by LTTng" "$work/summary.txt"
incomplete=$(sed -n 's/.*traces: [0-9]* complete, \([0-9]*\) incomplete.*/\1/p' "$work/report.txt")
echo "incomplete traces: $incomplete"
[[ "$incomplete" -gt 0 ]]

timeout 180 "$hoptrace" export --format zipkin -q -o "$work/zipkin.json" "$work/trace"
python3 - "$work/zipkin.json" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
marked = [s for s in spans if "hoptrace.incomplete" in s["tags"]]
assert marked, "no span marked incomplete"
lossy = [s for s in marked if "LTTng discarded events on host " in s["tags"]["hoptrace.incomplete"]]
assert lossy, "no span's reason names the host that lost events"
print("%d of %d spans carry hoptrace.incomplete, e.g. %r" % (
    len(marked), len(spans), marked[0]["tags"]["hoptrace.incomplete"]))
PY
echo "tool loss test passed"
