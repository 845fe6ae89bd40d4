#!/usr/bin/env python3
"""flight_hosts.py SRC RUN OUT: trigger to snapshot written, own host and
every host, from a run-hosts.sh --flight run (see bench_flight_hosts.sh)."""
import collections
import glob
import json
import math
import multiprocessing
import os
import platform
import re
import subprocess
import sys
import time

src, run, out_path = sys.argv[1:]
CAPTURE = re.compile(r"^\[(\d+)\.(\d{9})\].*hoptrace:capture: .*ids = \[ \[0\] = (\w+), "
                     r"\[1\] = (\w+), \[2\] = (\w+),.*hops = (\d+)")
SIDE = re.compile(r"^\[(\d+)\.(\d{9})\].*hoptrace:(span|span_k|span_r): .*rec = \[ (.*?) \]")
# span, span_k, span_r's rec (src/provider/hoptrace_schema.h): the span id,
# and span_r's end (a side written after it ended: memory mode's replay)
REC_SPAN, REC_R_END = 4, 12


def clock_offset_ns(snapdir):
    """(freq, epoch offset in ns) of the snapshot's clock, from its metadata."""
    meta = glob.glob(os.path.join(snapdir, "**", "metadata"), recursive=True)
    if not meta:
        raise SystemExit("no metadata in " + snapdir)
    p = subprocess.run(["babeltrace2", "--output-format=ctf-metadata", os.path.dirname(meta[0])],
                       capture_output=True, text=True)
    clock = re.search(r"clock \{(.*?)\};", p.stdout, re.S)
    if p.returncode != 0 or not clock:
        raise SystemExit("cannot read the clock of %s: %s" % (snapdir, p.stderr[-300:]))
    field = {k: int(v) for k, v in re.findall(r"\b(\w+) = (\d+);", clock.group(1))}
    freq = field.get("freq", 10**9)
    return freq, field.get("offset_s", 0) * 10**9 + field.get("offset", 0) * 10**9 // freq


def captures(snapdir):
    """(captures, ends) of one snapshot: (trace, span that fired, hops,
    epoch ns) of every capture event, and each span side's end (epoch ns)
    by span id: a side's own time, or span_r's end word (its event is
    written at the replay, after the trigger)."""
    p = subprocess.run(["babeltrace2", "--clock-seconds", snapdir], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("babeltrace2 failed on %s: %s" % (snapdir, p.stderr[-500:]))
    freq, offset = clock_offset_ns(snapdir)
    found, ends = [], {}
    for line in p.stdout.splitlines():
        if "hoptrace:capture:" in line:
            m = CAPTURE.match(line)
            if not m:
                raise SystemExit("cannot read a capture event: " + line[:300])
            trace = "%016x%016x" % (int(m.group(3), 0), int(m.group(4), 0))
            found.append((trace, int(m.group(5), 0), int(m.group(6)),
                          int(m.group(1)) * 10**9 + int(m.group(2))))
            continue
        m = SIDE.match(line)
        if not m:
            continue
        rec = [int(v.split("=")[1], 0) for v in m.group(4).split(", ")]
        at = int(m.group(1)) * 10**9 + int(m.group(2))
        if m.group(3) == "span_r":
            at = offset + rec[REC_R_END] * 10**9 // freq
        ends[rec[REC_SPAN]] = at
    return found, ends


def quantile(values, q):
    v = sorted(values)
    return v[max(0, math.ceil(q * len(v)) - 1)] if v else float("nan")


jobs, counters = [], {}
for cj in sorted(glob.glob(os.path.join(run, "flight", "h*", "capture.json"))):
    host = os.path.basename(os.path.dirname(cj))
    c = json.load(open(cj))
    counters[host] = c
    for s in c["snapshot_list"]:
        dirs = glob.glob(os.path.join(run, "relay", host, "*", s["name"] + "*"))
        if len(dirs) != 1:
            raise SystemExit("%s: snapshot %s: %d directories under relay/" % (host, s["name"], len(dirs)))
        jobs.append((host, s["written_ns"], dirs[0]))
if not jobs:
    raise SystemExit("no snapshot written: the run proves nothing")

with multiprocessing.Pool(os.cpu_count() or 2) as pool:
    results = pool.map(captures, [d for _, _, d in jobs])

fired = {}                                  # trace -> (epoch ns, host, span) of its first hops-0 event
written = collections.defaultdict(dict)     # trace -> host -> first snapshot written holding it
span_end = {}                               # (host, span id) -> its end, epoch ns
for (host, written_ns, _), (found, ends) in zip(jobs, results):
    for span, at in ends.items():
        span_end[(host, span)] = at
    for trace, span, hops, at in found:
        if hops == 0 and (trace not in fired or at < fired[trace][0]):
            fired[trace] = (at, host, span)
        prev = written[trace].get(host)
        if prev is None or written_ns < prev:
            written[trace][host] = written_ns

# From the trigger: the end of the span that fired it (a trigger fires as
# its span ends), where the snapshot holds that span; else (fired by
# hand, or its side not in the snapshot) from the capture event.
own, every, own_event, hosts_per_trace, from_event = [], [], [], collections.Counter(), 0
for trace, (at, host, span) in fired.items():
    on = written[trace]
    trigger = span_end.get((host, span))
    if trigger is None or trigger > at:
        trigger, from_event = at, from_event + 1
    own.append((on[host] - trigger) / 1e6)
    every.append((max(on.values()) - trigger) / 1e6)
    own_event.append((on[host] - at) / 1e6)
    hosts_per_trace[len(on)] += 1
notice_only = sum(1 for t in written if t not in fired)

commit = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"],
                        capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
lines = ["# hoptrace benchmark: flight across hosts",
         "# date: %s  commit: %s" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), commit),
         "# machine: %s %s, %d cpus, %s" % (platform.system(), platform.release(), os.cpu_count(), cpu),
         "# 3 simulated hosts, 3 clients x 250 ops/s, osd.1 slow on 0.5 % of its writes (+20 ms),",
         "# capture slow-client=20ms,error; recorders' defaults; one kernel clock (--skew none)",
         "# spans kept: %s" % ("in each process's own rings (HT_FLIGHT=memory, head sampling 1 %);"
                               " the trigger's capture event is written after its replay (the"
                               " replay thread scans at most every 50 ms): the trigger's time is its"
                               " span's end (span_r's end word), not the event's"
                               if os.environ.get("HT_BENCH_MODE") == "memory"
                               else "in LTTng's overwrite rings (record --flight)"),
         "",
         "%-6s %6s %6s %9s %8s %8s %10s" % ("host", "fired", "snaps", "coalesced", "ratelim", "dropped",
                                           "p99 ms (*)")]
for host, c in sorted(counters.items()):
    lines.append("%-6s %6d %6d %9d %8d %8d %10.1f" % (
        host, c["triggers_fired"], c["snapshots"], c["coalesced"], c["rate_limited"], c["dropped"],
        c["trigger_to_snapshot_ms"]["p99"]))
lines.append("(*) the recorder's own figure: from its notification's receipt")
lines.append("")
lines.append("traces fired: %d (snapshots hold a capture event of %d traces; %d reached only by notices)"
             % (len(fired), len(written), notice_only))
lines.append("hosts holding each fired trace: %s" % ", ".join(
    "%d host(s): %d" % (k, v) for k, v in sorted(hosts_per_trace.items())))
lines.append("")
lines.append("trigger time: the end of the span that fired it, as its snapshot holds it (%d of %d"
             " traces; the others from their capture event)" % (len(fired) - from_event, len(fired)))
lines.append("")
lines.append("%-34s %8s %8s %8s %8s   %s" % ("from the trigger to written", "p50 ms", "p99 ms",
                                             "max ms", "goal", "met"))
for label, vals, goal in (("on the host that fired", own, 250.0), ("on every host of the trace", every, 1000.0),
                          ("(own host, from the capture event)", own_event, None)):
    p99 = quantile(vals, 0.99)
    lines.append("%-34s %8.1f %8.1f %8.1f %8s   %s" % (
        label, quantile(vals, 0.5), p99, max(vals) if vals else float("nan"),
        "-" if goal is None else "%.0f" % goal, "-" if goal is None else "yes" if p99 <= goal else "NO"))
text = "\n".join(lines) + "\n"
sys.stdout.write(text)
with open(out_path, "w") as f:
    f.write(text)
