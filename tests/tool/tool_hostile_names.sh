#!/usr/bin/env bash
# Names belong to their process: while trace_workload runs, hostile_events
# (its own provider `hoptrace`) writes process, desc and peer events
# claiming the workload's vpid, every name "FORGED", before the workload's
# expected traces. `hoptrace record` records who wrote each name event
# (LTTng's vpid context): the tool ignores the forged ones, counts them,
# and every expected span keeps its own name.
# usage: tool_hostile_names.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR HOSTILE
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4 hostile=$6
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
# the workload's names are not written again during the run: the forged
# ones are the last word on its ids when its expected spans come
export HT_NAMES_REFRESH_MS=60000
ids=256
timeout 120 "$hoptrace" record -o "$work/trace" -- bash -c '
  "$1" --warm-up --traces 20 --fanout 2 --pause-us 1000 --expect "$2/expect.txt" &
  pid=$!
  sleep 1 # its names written, warm-up traces recorded
  "$3" --forge-vpid "$pid" --ids "$4"
  kill -USR1 "$pid"
  wait "$pid"' _ "$workload" "$work" "$hostile" "$ids" 2> "$work/record.log"
cat "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log"

timeout 120 "$hoptrace" export --format zipkin -o "$work/zipkin.json" "$work/trace" \
  2> "$work/export.log"
cat "$work/export.log"
timeout 120 "$hoptrace" report -o "$work/report.txt" "$work/trace" 2> /dev/null
# process + ids desc + ids peer events, each ignored and counted
forged=$((1 + 2 * ids))
grep -q "hoptrace: $forged name events (process/desc/peer) naming another process" \
  "$work/export.log"
grep -q "name events for another process:  $forged (ignored)" "$work/report.txt"
python3 - "$work/expect.txt" "$work/zipkin.json" <<'PY'
import json, sys
expect = [l.split() for l in open(sys.argv[1])]
spans = json.load(open(sys.argv[2]))
text = json.dumps(spans)
assert "FORGED" not in text, [s for s in spans if "FORGED" in json.dumps(s)][:2]
by_id = {(s["traceId"], s["id"]): s for s in spans}
for trace, span, parent, kind, service, name in expect:
    s = by_id.get((trace, span))
    assert s is not None, ("missing", trace, span)
    assert s["name"] == name and s["localEndpoint"]["serviceName"] == service, (s, name, service)
print("%d expected spans named by their own process; no forged name in %d spans"
      % (len(expect), len(spans)))
PY
