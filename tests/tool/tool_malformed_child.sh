#!/usr/bin/env bash
# A child dropped as malformed marks its trace incomplete: hostile_events
# writes N three-span traces, one child side the decoder must drop (a
# start no clock converts, span id 0, or a span_k key with no NUL in its
# 32 bytes), the other a span_k whose 31-byte key and value every format
# keeps. Every format tags each such
# trace hoptrace.incomplete with the malformed event, the summary and
# the report count them, and one decoder or two give the same outcome.
# usage: tool_malformed_child.sh HOPTRACE WORKDIR HOSTILE
set -euo pipefail
hoptrace=$1 work=$2 hostile=$3
rm -rf "$work" && mkdir -p "$work"
n=20
timeout 120 "$hoptrace" record -o "$work/trace" -- "$hostile" --malformed-child $n \
  2> "$work/record.log"
cat "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log"
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }

declare -A status
for d in 1 2; do
  for f in zipkin otlp chrome; do
    status[$d-$f]=0
    timeout 120 "${tool[@]}" export --decoders $d --format $f -o "$work/$f-$d.json" \
      "$work/trace" 2> "$work/export-$f-$d.log" || status[$d-$f]=$?
    echo "--decoders $d --format $f: exit ${status[$d-$f]}"
    cat "$work/export-$f-$d.log"
    grep -q "hoptrace: $n traces lost $n events dropped as malformed: marked incomplete" \
      "$work/export-$f-$d.log"
  done
  status[$d-report]=0
  timeout 120 "${tool[@]}" report --decoders $d -o "$work/report-$d.txt" "$work/trace" \
    2> /dev/null || status[$d-report]=$?
  grep -q "malformed hoptrace events: *$n (dropped), of known traces: $n, traces affected: $n" \
    "$work/report-$d.txt"
  grep -q "traces: 0 complete, $n incomplete" "$work/report-$d.txt"
done
for f in zipkin otlp chrome report; do
  [[ ${status[1-$f]} == "${status[2-$f]}" ]] ||
    { echo "$f: exit ${status[1-$f]} with one decoder, ${status[2-$f]} with two" >&2; exit 1; }
done
[[ $(grep "events," "$work/export-zipkin-1.log") == $(grep "events," "$work/export-zipkin-2.log") ]]
python3 - "$n" "$work" <<'PY'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
why = "1 malformed event(s) dropped"
for d in (1, 2):
    zipkin = json.load(open("%s/zipkin-%d.json" % (work, d)))
    marked = {s["traceId"] for s in zipkin if why in s.get("tags", {}).get("hoptrace.incomplete", "")}
    assert len({s["traceId"] for s in zipkin}) == n and len(marked) == n, (d, len(marked))
    kept = sorted(int(s["tags"]["k" * 31]) for s in zipkin if "k" * 31 in s.get("tags", {}))
    assert kept == list(range(-n, 0)), ("span_k key-values", d, kept)
    otlp = json.load(open("%s/otlp-%d.json" % (work, d)))
    marked = set()
    for rs in otlp["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                for a in s.get("attributes", []):
                    if a["key"] == "hoptrace.incomplete" and why in a["value"]["stringValue"]:
                        marked.add(s["traceId"])
    assert len(marked) == n, ("otlp", d, len(marked))
    assert why in open("%s/chrome-%d.json" % (work, d)).read(), ("chrome", d)
print("%d traces, each marked incomplete for its malformed child, in every format,"
      " with one decoder and two" % n)
PY
