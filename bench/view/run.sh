#!/usr/bin/env bash
# Waterfall benchmark: records 100,000 traces of view_workload (fanout 2:
# ~433,000 spans) with `hoptrace record`, writes them with `hoptrace view`
# and opens the page in Debian's chromium through playwright-core
# (tests/tool/view/view_check.js bench): the time until the list is drawn
# and the page answers (goal: 3 s), from a click on a trace to the next
# frame with its waterfall drawn (goal: 200 ms; 5 traces a run), DOM nodes
# and JS heap. Prints and writes the figures to bench/results/view.txt.
# usage: bench/view/run.sh [BUILD_DIR]   (default build/)
#   HT_VIEW_TRACES (100000), HT_VIEW_RUNS (3: page loads, best and worst
#   kept), HT_VIEW_RESULTS (the results file)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
traces=${HT_VIEW_TRACES:-100000} runs=${HT_VIEW_RUNS:-3}
results=${HT_VIEW_RESULTS:-$src/bench/results/view.txt}
export HT_LTTNG_PROVIDER=$build/libhoptrace-tp.so
source "$src/tests/tool/view/npm_env.sh"
view_npm_install "$build/view-npm"
work=$(mktemp -d /tmp/hoptrace-bench-view.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$build/tools/hoptrace/hoptrace" record -o "$work/trace" --subbuf-size 8M --num-subbuf 8 \
  --filter '$ctx.procname == "view_workload"' -- \
  "$build/tests/tool/view_workload" "$traces" 2 0 2> "$work/record.log"
cat "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log"
t0=$(date +%s.%N)
"$build/tools/hoptrace/hoptrace" view -o "$work/view.html" "$work/trace" 2> "$work/view.log"
t1=$(date +%s.%N)
cat "$work/view.log"
for _ in $(seq "$runs"); do
  node "$src/tests/tool/view/view_check.js" bench "$work/view.html" | tee -a "$work/runs.jsonl"
done
python3 - "$work/runs.jsonl" "$results" "$src" "$(stat -c %s "$work/view.html")" \
  "$t0" "$t1" "$(grep -o '[0-9]* traces' "$work/view.log" | head -1)" <<'PY'
import json, os, platform, subprocess, sys, time
runs = [json.loads(l) for l in open(sys.argv[1])]
out, src, size = sys.argv[2], sys.argv[3], int(sys.argv[4])
secs, traces = float(sys.argv[6]) - float(sys.argv[5]), sys.argv[7]
commit = subprocess.run(["git", "-C", src, "describe", "--always", "--dirty"],
                        capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
loads = sorted(r["load_ms"] for r in runs)
clicks = sorted(c for r in runs for c in r["click_ms"])
lines = ["# hoptrace benchmark: view (bench/view/run.sh)",
         "# date: %s  commit: %s" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), commit),
         "# machine: %s %s, %d cpus, %s" % (platform.system(), platform.release(), os.cpu_count(), cpu),
         "# chromium: %s" % subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True,
                                          text=True).stdout.strip(),
         "",
         "input: %s, page %.1f MB, written by `hoptrace view` in %.2f s" % (traces, size / 1e6, secs),
         "run  load ms  click ms (5 traces)       DOM nodes  JS heap MB"]
for i, r in enumerate(runs):
    lines.append("%-4d %7d  %-24s %9d  %10.1f" % (i + 1, r["load_ms"], " ".join(map(str, r["click_ms"])),
                                                r["dom_nodes"], r["heap_mb"]))
lines += ["",
          "load: best %d ms, worst %d ms (goal 3000 ms: %s)" % (loads[0], loads[-1],
                                                              "met" if loads[-1] <= 3000 else "NOT met"),
          "click: median %d ms, worst %d ms (goal 200 ms: %s)" % (clicks[len(clicks) // 2], clicks[-1],
                                                               "met" if clicks[-1] <= 200 else "NOT met")]
text = "\n".join(lines) + "\n"
print(text, end="")
with open(out, "w") as f:
    f.write(text)
PY
