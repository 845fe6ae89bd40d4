#!/usr/bin/env bash
# Tool benchmark: records a ~1M-event trace with trace_workload, then
# times `hoptrace export` (zipkin, otlp) and `hoptrace report` over it and
# reads their peak RSS. Prints a table and writes bench/results/tool.txt.
# usage: bench/tool/bench_tool.sh [BUILD_DIR]   (default build/)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
hoptrace=$build/tools/hoptrace/hoptrace
workload=$build/tests/tool/trace_workload
export HT_LTTNG_PROVIDER=$build/libhoptrace-tp.so
work=$(mktemp -d /tmp/hoptrace-bench-tool.XXXXXX)
trap 'rm -rf "$work"' EXIT
traces=${HT_BENCH_TRACES:-25000}

"$hoptrace" record -o "$work/trace" --subbuf-size 8M --num-subbuf 8 -- \
  "$workload" --traces "$traces" --fanout 3 2> "$work/record.log"
cat "$work/record.log"

python3 - "$hoptrace" "$work/trace" "$src/bench/results/tool.txt" "$src" <<'PY'
import os, platform, resource, subprocess, sys, time
hoptrace, trace, out_path, src = sys.argv[1:5]
MEASURE = """
import resource, subprocess, sys, time
t0 = time.monotonic()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
dt = time.monotonic() - t0
sys.stderr.write(p.stderr)
print(dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)
"""
def run(args):
    # a fresh parent per command, so the peak RSS is that command's alone
    p = subprocess.run([sys.executable, "-c", MEASURE, hoptrace] + args + [trace],
                       capture_output=True, text=True, check=True)
    dt, rss, rc = p.stdout.split()
    if rc != "0":
        sys.exit("hoptrace %s failed: %s" % (args, p.stderr))
    events = int(p.stderr.split(" events,")[0].split()[-1])
    return float(dt), int(rss), events, p.stderr.strip()
commit = subprocess.run(["git", "-C", src, "describe", "--always", "--dirty"],
                        capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
lines = ["# hoptrace benchmark: tool",
         "# date: %s  commit: %s" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), commit),
         "# machine: %s %s, %d cpus, %s" % (platform.system(), platform.release(), os.cpu_count(), cpu),
         "", "%-22s %12s %10s %14s %14s" % ("command", "events", "seconds", "events/s", "peak RSS MiB")]
for label, args in (("export zipkin", ["export", "--format", "zipkin", "-o", "/dev/null"]),
                    ("export zipkin grace .2", ["export", "--format", "zipkin", "--grace", "0.2", "-o", "/dev/null"]),
                    ("export otlp", ["export", "--format", "otlp", "-o", "/dev/null"]),
                    ("report", ["report", "-o", "/dev/null"])):
    dt, rss, events, summary = run(args)
    lines.append("%-22s %12d %10.2f %14.0f %14.1f" % (label, events, dt, events / dt, rss / 1024.0))
# the floor: babeltrace2 itself reading the same trace into a dummy sink
t0 = time.monotonic()
p = subprocess.run([sys.executable, "-c", MEASURE, "babeltrace2", "-o", "dummy", trace],
                   capture_output=True, text=True, check=True)
dt, rss, rc = p.stdout.split()
lines.append("%-22s %12d %10.2f %14.0f %14.1f" % ("babeltrace2 -o dummy", events, float(dt),
                                                  events / float(dt), int(rss) / 1024.0))
lines.append("")
lines.append("summary of the last run: " + summary)
lines.append("peak RSS: maximum resident set of each process (getrusage). Memory follows the")
lines.append("traces open at once: all traces of the last --grace seconds (default 2) stay open.")
text = "\n".join(lines) + "\n"
print(text)
open(out_path, "w").write(text)
print("results written to " + out_path)
PY
