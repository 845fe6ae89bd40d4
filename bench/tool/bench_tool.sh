#!/usr/bin/env bash
# Tool benchmark: records ~1M-event traces with trace_workload, then times
# `hoptrace export` (zipkin, otlp) and `hoptrace report` over them and
# measures their peak memory. Prints a table and writes
# bench/results/tool.txt.
#   burst:  one workload process, 25,000 traces as fast as it can: nearly
#           every event in one CPU's stream file, and every trace still
#           open (within --grace) when the input ends.
#   2 cpus: two workload processes pinned to CPUs 0 and 1 (12,500 traces
#           each): two stream files of about equal size, as a cluster
#           spread over CPUs records.
#   paced, paced2x: one process, 300 us between traces (12 s and 24 s of
#           recording, 0.95M and 1.9M events): traces close while the
#           input goes on, so memory stays that of the traces open at
#           once whatever the size of the trace.
#   messenger: the traced messenger (schema 3: one event a span side),
#           bench_recording's request/reply pair, 400,000 requests: the
#           spans a second the tool exports (goal: >= 500,000).
# The span-API traces above write about 7 events a span (schema 1).
# Seconds: best of 3 runs (the machines are shared and noisy). Memory: the
# sum of the proportional set size (PSS) of hoptrace and its decoder
# processes, sampled every 5 ms in a 4th run.
# usage: bench/tool/bench_tool.sh [BUILD_DIR]   (default build/)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
hoptrace=$build/tools/hoptrace/hoptrace
workload=$build/tests/tool/trace_workload
pair=$build/bench/recording/bench_recording
export HT_LTTNG_PROVIDER=$build/libhoptrace-tp.so
work=$(mktemp -d /tmp/hoptrace-bench-tool.XXXXXX)
trap 'rm -rf "$work"' EXIT
traces=${HT_BENCH_TRACES:-25000}

"$hoptrace" record -o "$work/burst" --subbuf-size 8M --num-subbuf 8 -- \
  "$workload" --traces "$traces" --fanout 3 2> "$work/record.log"
cat "$work/record.log"
inputs=("burst=$work/burst")
if [[ $(nproc) -ge 2 ]]; then
  "$hoptrace" record -o "$work/twocpu" --subbuf-size 8M --num-subbuf 8 -- \
    bash -c "taskset -c 0 '$workload' --traces $((traces / 2)) --fanout 3 &
             taskset -c 1 '$workload' --traces $((traces / 2)) --fanout 3; wait" \
    2> "$work/record2.log"
  cat "$work/record2.log"
  inputs+=("2 cpus=$work/twocpu")
fi
for n in 1 2; do
  "$hoptrace" record -o "$work/paced$n" --subbuf-size 8M --num-subbuf 8 -- \
    "$workload" --traces $((traces * n)) --fanout 3 --pause-us 300 2> "$work/record-paced.log"
  cat "$work/record-paced.log"
  label=paced
  [[ $n == 1 ]] || label=paced${n}x
  inputs+=("$label=$work/paced$n")
done

"$hoptrace" record -o "$work/messenger" --subbuf-size 8M --num-subbuf 8 -- \
  "$pair" traced 1000 "${HT_BENCH_HOPS:-400000}" > /dev/null 2> "$work/record-msg.log"
cat "$work/record-msg.log"
inputs+=("messenger=$work/messenger")
# spans in it: its span-side events (not the name tables)
msg_spans=$(babeltrace2 "$work/messenger" 2>/dev/null | grep -cE 'hoptrace:span(_x|_s)?:' || true)

python3 - "$hoptrace" "$src/bench/results/tool.txt" "$src" "$msg_spans" "${inputs[@]}" <<'PY'
import os, platform, subprocess, sys, threading, time
hoptrace, out_path, src, msg_spans = sys.argv[1:5]
msg_spans = int(msg_spans)
inputs = [a.split("=", 1) for a in sys.argv[5:]]

def tree(pid):
    """pid and its descendants."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            for task in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return pids

def pss_kib(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0

def run(cmd, sample=False):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = [0]
    def sampler():
        while p.poll() is None:
            peak[0] = max(peak[0], sum(pss_kib(q) for q in tree(p.pid)))
            time.sleep(0.005)
    t = threading.Thread(target=sampler) if sample else None
    if t:
        t.start()
    err = p.communicate()[1]
    dt = time.monotonic() - t0
    if t:
        t.join()
    if p.returncode != 0:
        sys.exit("%s failed: %s" % (cmd, err))
    return dt, peak[0], err

def measure(cmd):
    best, err = min((run(cmd)[0:3:2] for _ in range(3)), key=lambda r: r[0])
    _, peak, _ = run(cmd, sample=True)
    return best, peak, err

commit = subprocess.run(["git", "-C", src, "describe", "--always", "--dirty"],
                        capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
lines = ["# hoptrace benchmark: tool",
         "# date: %s  commit: %s" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), commit),
         "# machine: %s %s, %d cpus, %s" % (platform.system(), platform.release(), os.cpu_count(), cpu),
         "", "%-9s %-26s %10s %9s %12s %11s" % ("trace", "command", "events", "seconds", "events/s",
                                               "peak MiB")]
commands = (("export zipkin", ["export", "--format", "zipkin", "-o", "/dev/null"]),
            ("export zipkin --decoders 1", ["export", "--format", "zipkin", "--decoders", "1",
                                            "-o", "/dev/null"]),
            ("export otlp", ["export", "--format", "otlp", "-o", "/dev/null"]),
            ("report", ["report", "-o", "/dev/null"]))
summaries = []
spans_rate = []
for label, trace in inputs:
    events = None
    for name, args in commands if not label.startswith("paced") else commands[:1] + commands[3:]:
        dt, peak, err = measure([hoptrace] + args + [trace])
        events = int(err.split(" events,")[0].split()[-1])
        lines.append("%-9s %-26s %10d %9.2f %12.0f %11.1f" % (label, name, events, dt, events / dt,
                                                             peak / 1024.0))
        if label == "messenger":
            spans_rate.append((name, msg_spans / dt))
        summary = err.strip().splitlines()[0]
    # the floor: babeltrace2 itself reading the same trace into a dummy sink
    dt, peak, _ = measure(["babeltrace2", "-o", "dummy", trace])
    lines.append("%-9s %-26s %10d %9.2f %12.0f %11.1f" % (label, "babeltrace2 -o dummy", events, dt,
                                                         events / dt, peak / 1024.0))
    summaries.append("%s: %s" % (label, summary))
lines.append("")
for name, rate in spans_rate:
    lines.append("messenger %-26s %d spans, %.0f spans/s (goal 500,000: %s)" % (
        name, msg_spans, rate, "met" if rate >= 500000 else "missed"))
lines.append("")
lines += summaries
lines.append("seconds: best of 3 runs. peak MiB: the largest sum of PSS of the process and its")
lines.append("decoder processes, sampled every 5 ms. Memory follows the traces open at once: all")
lines.append("traces of the last --grace seconds (default 2) stay open; in the burst and 2 cpus")
lines.append("traces that is every trace (all recorded within 0.2 s), in the paced ones a few")
lines.append("thousand.")
text = "\n".join(lines) + "\n"
print(text)
open(out_path, "w").write(text)
print("results written to " + out_path)
PY
