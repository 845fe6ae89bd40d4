#!/usr/bin/env bash
# Traces of the previous schema still read: every output of the tool from
# a committed hoptrace 0.1 trace (data/schema1/, one event per span API
# call) holds exactly the spans its workload recorded (check_outputs.py).
# usage: tool_schema1.sh HOPTRACE WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 work=$2 src=$3
data=$src/data/schema1
rm -rf "$work" && mkdir -p "$work"
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
for f in zipkin otlp chrome; do
  timeout 60 "${tool[@]}" export --format $f -o "$work/$f.json" "$data/trace" 2> "$work/$f.log"
  cat "$work/$f.log"
  grep -q "0 incomplete" "$work/$f.log"
  grep -q " 0 malformed" "$work/$f.log"
done
timeout 60 "${tool[@]}" report -o "$work/report.txt" "$data/trace"
python3 "$src/check_outputs.py" "$data/expect.txt" "$work/zipkin.json" \
  "$work/otlp.json" "$work/chrome.json" "$work/report.txt"
# the annotations and tags of schema 1 events reach the outputs
python3 - "$work/zipkin.json" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
values = {a["value"] for s in spans for a in s.get("annotations", [])}
assert {"cs", "sr", "ss", "cr"} <= values, values
tags = {k for s in spans for k in s.get("tags", {})}
assert len(tags - {"hoptrace.pid", "hoptrace.host", "hoptrace.tid"}) >= 3, tags
# schema 1 recorded no sampling probability: none is invented
assert "hoptrace.sampling.probability" not in tags, tags
print("schema 1: %d spans, annotations %s, tags %s" % (len(spans), sorted(values), sorted(tags)))
PY
# ... and the report says the issued count is unknown rather than a number
grep -q "traces recorded: 6; estimated issued: unknown " "$work/report.txt"
grep -Eq "^  osd_write +client +6 +unknown +unknown " "$work/report.txt"
echo "tool schema 1 test passed"
