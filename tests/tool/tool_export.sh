#!/usr/bin/env bash
# Records a real LTTng session of trace_workload with `hoptrace record`,
# then checks every output of the tool against what the workload says it
# recorded (check_outputs.py), and the HTML view in headless Chromium.
# usage: tool_export.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
traces=40
# HT_TEST_WRAPPER="valgrind ..." (scripts/valgrind.sh) runs the tool's
# reading commands under it (not the recorded workload: the session keeps
# only processes named trace_workload).
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }

timeout 120 "$hoptrace" record -o "$work/trace" --filter '$ctx.procname == "trace_workload"' -- \
  "$workload" --traces $traces --fanout 2 --expect "$work/expect.txt" 2> "$work/record.log"
cat "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log"

for f in zipkin otlp chrome; do
  timeout 120 "${tool[@]}" export --format $f -o "$work/$f.json" "$work/trace"
done
timeout 120 "${tool[@]}" report -o "$work/report.txt" "$work/trace"
timeout 120 "${tool[@]}" view -o "$work/waterfall.html" "$work/trace"
first=$(head -n1 "$work/expect.txt" | cut -d' ' -f1)
timeout 120 "${tool[@]}" view --trace-id "$first" -q -o "$work/waterfall-one.html" "$work/trace"
python3 "$src/check_outputs.py" "$work/expect.txt" "$work/zipkin.json" \
  "$work/otlp.json" "$work/chrome.json" "$work/report.txt"

# The session has no contexts (as `hoptrace record` sets it up): the events
# carry their process and thread. Every span names the workload's pid, as
# its own process event gives it, and every Chrome slice a thread.
pid=$(timeout 60 babeltrace2 "$work/trace" |
  sed -n 's/.*hoptrace:process: .*vpid = \([0-9]*\).*/\1/p')
pid=${pid%%$'\n'*} # the first (no `| head`: under pipefail sed could die of SIGPIPE)
python3 - "$work/zipkin.json" "$work/chrome.json" "$pid" <<'PY'
import json, sys
spans, chrome, pid = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
pids = {s["tags"].get("hoptrace.pid") for s in spans}
assert pid and pids == {pid}, (pid, pids)
tids = {e["tid"] for e in chrome["traceEvents"] if e.get("ph") == "X"}
assert tids and all(isinstance(t, int) and t > 0 for t in tids), tids
print("pid %s on all %d spans, %d threads" % (pid, len(spans), len(tids)))
PY

# One trace by id: exactly its spans.
timeout 60 "${tool[@]}" export --format zipkin --trace-id "$first" -q "$work/trace" > "$work/one.json"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert len(s)==6 and {x["traceId"] for x in s}=={sys.argv[2]}, s' \
  "$work/one.json" "$first"

# Bad input: a clear error, non-zero exit.
if "${tool[@]}" export --format zipkin "$work/no-such-dir" 2> "$work/err.txt"; then
  echo "export of a missing directory succeeded" >&2; exit 1
fi
grep -q "no CTF trace" "$work/err.txt"
if "${tool[@]}" export --format yaml "$work/trace" 2>/dev/null; then exit 1; fi

# The waterfall pages, rendered by a real browser: every trace listed, and
# the rows of the one trace selected by id.
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$chromium" ]]; then
  echo "chromium not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
render() {
  timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/chromium-profile" --dump-dom "file://$1" 2> "$work/chromium.log"
}
render "$work/waterfall.html" > "$work/dom.html"
render "$work/waterfall-one.html" > "$work/dom-one.html"
# The list draws only the rows in sight (virtual scrolling): its count
# line says how many traces it holds.
rows=$(grep -o 'class="span-row[ "]' "$work/dom-one.html" | wc -l)
listed=$(grep -o '<div id="count">[0-9]* of [0-9]* traces' "$work/dom.html" | grep -o '[0-9]* traces')
echo "waterfall: $listed listed, $rows span rows shown"
[[ $rows -eq 6 && ${listed% traces} -ge $traces ]]
echo "tool export test passed"
