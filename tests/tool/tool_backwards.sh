#!/usr/bin/env bash
# A process whose clock runs backwards, recorded beside a sane one: the
# tool gives the same exit status and the same spans with one decoder
# (one babeltrace2 graph) or several, the sane process's traces whole, and
# the backwards process's spans flagged (they end before they start) and
# counted. The clock is an LTTng-UST clock plugin (backwards_clock.c)
# loaded into that one process only.
# usage: tool_backwards.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR CLOCK_PLUGIN
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5 plugin=$6
rm -rf "$work" && mkdir -p "$work/tmp"
export HT_LTTNG_PROVIDER=$provider TMPDIR=$work/tmp
if [[ $(nproc) -lt 2 ]]; then
  echo "one CPU: both processes would share a stream file" >&2
  exit 77
fi
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }

timeout 120 "$hoptrace" record -o "$work/trace" --filter '$ctx.procname == "trace_workload"' -- \
  bash -c "taskset -c 0 '$workload' --traces 200 --fanout 2 --expect '$work/expect-sane.txt' &
           LTTNG_UST_CLOCK_PLUGIN='$plugin' taskset -c 1 '$workload' --traces 200 --fanout 2 \
             --op backwards --expect '$work/expect-back.txt'
           wait" 2> "$work/record.log"
cat "$work/record.log"

declare -A status
for d in 1 2; do
  for f in zipkin otlp chrome; do
    status[$d-$f]=0
    timeout 120 "${tool[@]}" export --decoders $d --format $f -o "$work/$f-$d.json" "$work/trace" \
      2> "$work/export-$f-$d.log" || status[$d-$f]=$?
    echo "--decoders $d --format $f: exit ${status[$d-$f]}"
    cat "$work/export-$f-$d.log"
  done
  status[$d-report]=0
  timeout 120 "${tool[@]}" report --decoders $d -o "$work/report-$d.txt" "$work/trace" \
    2> /dev/null || status[$d-report]=$?
done
for f in zipkin otlp chrome report; do
  [[ ${status[1-$f]} == "${status[2-$f]}" ]] ||
    { echo "$f: exit ${status[1-$f]} with one decoder, ${status[2-$f]} with two" >&2; exit 1; }
  [[ ${status[1-$f]} == 0 ]] || { echo "$f: exit ${status[1-$f]}" >&2; exit 1; }
done
for d in 1 2; do # the sane process's traces, whole
  python3 "$src/check_outputs.py" "$work/expect-sane.txt" "$work/zipkin-$d.json" \
    "$work/otlp-$d.json" "$work/chrome-$d.json" "$work/report-$d.txt"
done
# the same summary (counts) and the same spans both ways
[[ $(grep "events," "$work/export-zipkin-1.log") == $(grep "events," "$work/export-zipkin-2.log") ]]
python3 "$src/same_zipkin.py" "$work/zipkin-1.json" "$work/zipkin-2.json"
python3 - "$work/zipkin-1.json" <<'PY'
import json, sys
back = [s for s in json.load(open(sys.argv[1]))
        if "hoptrace.time.end_before_start_ns" in s.get("tags", {})]
assert back, "no span flagged hoptrace.time.end_before_start_ns"
assert all("duration" not in s for s in back), "a backwards span has a duration"
print("zipkin: %d spans flagged as ending before they start" % len(back))
PY
grep -E "^hoptrace: [1-9][0-9]* spans end before they start" "$work/export-zipkin-1.log"
grep -E "spans ending before they start: +[1-9]" "$work/report-1.txt"
