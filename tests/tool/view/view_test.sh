#!/usr/bin/env bash
# The waterfall page (`hoptrace view`) in Debian's chromium, driven by
# playwright-core: records view_workload's traces (errors, three
# operations, several durations) with `hoptrace record`, writes the page
# and checks its behaviour (view_check.js check: filters against the
# workload's own list and the OTLP export's durations, span rows, tags,
# critical path, collapsing, the aggregate critical path against `report
# --format json`'s, no network request, no script error), keeping
# screenshots in WORKDIR/waterfall.png and WORKDIR/critical-path.png. Then bench/view/run.sh over
# 100,000 traces into WORKDIR (not bench/results/), which fails only on a
# hang (10x the goals).
# usage: view_test.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
rm -rf "$work/trace" "$work/big" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/npm_env.sh"
# HT_TEST_WRAPPER="valgrind ..." (scripts/valgrind.sh) runs the tool's
# reading commands under it (not the benchmark's, which times them).
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
view_npm_install "$work/npm"

timeout 120 "$hoptrace" record -o "$work/trace" --filter '$ctx.procname == "view_workload"' -- \
  "$workload" 60 2 300 "$work/expect.txt" 2> "$work/record.log"
cat "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log"
timeout 300 "${tool[@]}" view -o "$work/waterfall.html" "$work/trace"
timeout 300 "${tool[@]}" export --format otlp -q -o "$work/otlp.json" "$work/trace"
timeout 300 "${tool[@]}" report --format json -q -o "$work/report.json" "$work/trace"
# each trace's duration (first start to last end, ns) from the OTLP export
python3 - "$work/otlp.json" > "$work/durations.txt" <<'PY'
import json, sys
spans = {}
for rs in json.load(open(sys.argv[1]))["resourceSpans"]:
    for ss in rs["scopeSpans"]:
        for s in ss["spans"]:
            a, b = int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])
            lo, hi = spans.get(s["traceId"], (a, b))
            spans[s["traceId"]] = (min(lo, a), max(hi, b))
for t, (lo, hi) in spans.items():
    print(t, hi - lo)
PY
timeout 180 node "$here/view_check.js" check "$work/waterfall.html" "$work/expect.txt" \
  "$work/durations.txt" "$work/waterfall.png" "$work/report.json"
[[ -s "$work/waterfall.png" && -s "$work/critical-path.png" ]]
timeout 300 "${tool[@]}" view --trace-id 0123456789abcdef -q -o "$work/empty.html" "$work/trace"
timeout 60 node "$here/view_check.js" empty "$work/empty.html"

HT_VIEW_RESULTS=$work/view.txt HT_VIEW_RUNS=1 timeout 280 \
  "$src/../../bench/view/run.sh" "$(dirname "$(dirname "$(dirname "$hoptrace")")")"
echo "view test passed"
