#!/usr/bin/env bash
# The report's numbers against what the workload issued: a real LTTng
# session of trace_workload whose roots its ratio sampler decides
# (HT_SAMPLE_RATIO), with some roots forced (probability 1), some replica
# writes failed and some timed out; check_report.py compares the report,
# the Zipkin and the OTLP files with the workload's own count (facts.txt).
# Then a rate-limited sampler (HT_SAMPLE_RATE), whose roots record no
# probability: the report must say "at least" and "unknown", not p = 1.
# usage: tool_report.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
ratio=0.25 issued=4000 forced=20

HT_SAMPLE_RATIO=$ratio timeout 120 "$hoptrace" record -o "$work/trace" \
  --filter '$ctx.procname == "trace_workload"' -- \
  "$workload" --traces $issued --fanout 2 --sampler --forced $forced --errors 7 \
  --timeouts 11 --expect "$work/expect.txt" --facts "$work/facts.txt" 2> "$work/record.log"
cat "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log"

timeout 120 "${tool[@]}" report -o "$work/report.txt" "$work/trace"
timeout 120 "${tool[@]}" report --format json -o "$work/report.json" "$work/trace"
timeout 120 "${tool[@]}" export --format zipkin -o "$work/zipkin.json" "$work/trace"
timeout 120 "${tool[@]}" export --format otlp -o "$work/otlp.json" "$work/trace"
python3 "$src/check_report.py" "$work/report.txt" "$work/zipkin.json" "$work/otlp.json" \
  "$work/expect.txt" "$work/facts.txt" $ratio $forced "$work/report.json"

HT_SAMPLE_RATE=50 timeout 120 "$hoptrace" record -o "$work/rate-trace" \
  --filter '$ctx.procname == "trace_workload"' -- \
  "$workload" --traces 400 --fanout 1 --sampler --forced $forced \
  --expect "$work/rate-expect.txt" 2> "$work/rate-record.log"
grep -q " 0 discarded by LTTng" "$work/rate-record.log" || { cat "$work/rate-record.log"; exit 1; }
timeout 120 "${tool[@]}" report -o "$work/rate-report.txt" "$work/rate-trace"
python3 "$src/check_report.py" --rate "$work/rate-report.txt" "$work/rate-expect.txt" $forced
echo "tool report test passed"
