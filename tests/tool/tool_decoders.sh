#!/usr/bin/env bash
# Parallel decoding on a real recorded session: two workloads pinned to
# CPUs 0 and 1 fill two stream files; every output of `--decoders 2`
# (one decoder process per stream file) must hold the same spans as the
# in-process graph (`--decoders 1`) and match what the workloads say they
# recorded; the temporary link directories are gone afterwards.
# usage: tool_decoders.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
rm -rf "$work" && mkdir -p "$work/tmp"
export HT_LTTNG_PROVIDER=$provider
if [[ $(nproc) -lt 2 ]]; then
  echo "one CPU: a trace has one stream file, nothing to decode in parallel" >&2
  exit 77
fi
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }

timeout 120 "$hoptrace" record -o "$work/trace" --filter '$ctx.procname == "trace_workload"' -- \
  bash -c "taskset -c 0 '$workload' --traces 300 --fanout 2 --expect '$work/expect0.txt' &
           taskset -c 1 '$workload' --traces 300 --fanout 3 --expect '$work/expect1.txt'
           wait" 2> "$work/record.log"
cat "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log"
cat "$work/expect0.txt" "$work/expect1.txt" > "$work/expect.txt"
streams=$(find "$work/trace" -type f -size +0 -name 'hoptrace_*' ! -name '*.idx' | wc -l)
echo "stream files with data: $streams"
[[ $streams -ge 2 ]]

export TMPDIR=$work/tmp
for d in 1 2; do
  for f in zipkin otlp chrome; do
    timeout 120 "${tool[@]}" export --decoders $d --format $f -o "$work/$f-$d.json" "$work/trace" \
      2> "$work/export-$f-$d.log"
  done
  timeout 120 "${tool[@]}" report --decoders $d -o "$work/report-$d.txt" "$work/trace" 2> /dev/null
  python3 "$src/check_outputs.py" "$work/expect.txt" "$work/zipkin-$d.json" \
    "$work/otlp-$d.json" "$work/chrome-$d.json" "$work/report-$d.txt"
done
grep -h "events," "$work/export-zipkin-1.log" "$work/export-zipkin-2.log"
# the same summary line (counts) both ways
[[ $(grep "events," "$work/export-zipkin-1.log") == $(grep "events," "$work/export-zipkin-2.log") ]]
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def spans(path):
    return sorted(json.dumps(s, sort_keys=True) for s in json.load(open(path)))
one, two = spans(work + "/zipkin-1.json"), spans(work + "/zipkin-2.json")
assert len(one) >= 300 * 4 + 300 * 5, len(one)
assert one == two, "zipkin spans differ between --decoders 1 and 2"
print("zipkin: %d spans, identical with 1 and 2 decoders" % len(one))
PY
if [[ -n $(ls -A "$work/tmp") ]]; then
  echo "temporary directories left behind: $(ls "$work/tmp")" >&2
  exit 1
fi
# a bad --decoders value is refused
if "$hoptrace" export --decoders 0 --format zipkin "$work/trace" 2>/dev/null; then exit 1; fi
echo "tool decoders test passed"
