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
                     r"\[1\] = (\w+),.*hops = (\d+)")


def captures(snapdir):
    """(trace, hops, epoch ns) of every capture event in one snapshot."""
    p = subprocess.run(["babeltrace2", "--clock-seconds", snapdir], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("babeltrace2 failed on %s: %s" % (snapdir, p.stderr[-500:]))
    found = []
    for line in p.stdout.splitlines():
        if "hoptrace:capture:" not in line:
            continue
        m = CAPTURE.match(line)
        if not m:
            raise SystemExit("cannot read a capture event: " + line[:300])
        trace = "%016x%016x" % (int(m.group(3), 0), int(m.group(4), 0))
        found.append((trace, int(m.group(5)), int(m.group(1)) * 10**9 + int(m.group(2))))
    return found


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

fired = {}                                  # trace -> (epoch ns, host) of its first hops-0 event
written = collections.defaultdict(dict)     # trace -> host -> first snapshot written holding it
for (host, written_ns, _), found in zip(jobs, results):
    for trace, hops, at in found:
        if hops == 0 and (trace not in fired or at < fired[trace][0]):
            fired[trace] = (at, host)
        prev = written[trace].get(host)
        if prev is None or written_ns < prev:
            written[trace][host] = written_ns

own, every, hosts_per_trace = [], [], collections.Counter()
for trace, (at, host) in fired.items():
    on = written[trace]
    own.append((on[host] - at) / 1e6)
    every.append((max(on.values()) - at) / 1e6)
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
                               " replay thread scans at most every 50 ms): the trigger fired up to"
                               " ~50 ms before the time measured from"
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
lines.append("%-34s %8s %8s %8s %8s   %s" % ("from the trigger's event to written", "p50 ms", "p99 ms",
                                             "max ms", "goal", "met"))
for label, vals, goal in (("on the host that fired", own, 250.0), ("on every host of the trace", every, 1000.0)):
    p99 = quantile(vals, 0.99)
    lines.append("%-34s %8.1f %8.1f %8.1f %8.0f   %s" % (
        label, quantile(vals, 0.5), p99, max(vals) if vals else float("nan"), goal,
        "yes" if p99 <= goal else "NO"))
text = "\n".join(lines) + "\n"
sys.stdout.write(text)
with open(out_path, "w") as f:
    f.write(text)
