#!/usr/bin/env python3
"""The launcher's closing digest of a recorded run, from zipkin.json:
traces recorded per second (the sampling ratio changes show), and each
OSD's service time as a replica (a slow OSD stands out).

usage: sim_summary.py ZIPKIN PIDS [SCHEDULE] [INITIAL_RATIO]
PIDS: file with the cluster's process ids, one a line (other processes'
traces recorded by the same session are left out)."""
import collections
import json
import sys


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * (len(v) - 1) + 0.5))] if v else 0


def main():
    pids = set(open(sys.argv[2]).read().split())
    spans = [s for s in json.load(open(sys.argv[1]))
             if s.get("tags", {}).get("hoptrace.pid") in pids]
    schedule = []
    if len(sys.argv) > 3 and sys.argv[3]:
        schedule = [tuple(float(x) for x in s.split(":")) for s in sys.argv[3].split(",")]
    initial = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    roots = [s for s in spans if "parentId" not in s]
    if not roots:
        print("no traces recorded")
        return
    t0 = min(s["timestamp"] for s in roots)
    per_sec = collections.Counter(int((s["timestamp"] - t0) / 1e6) for s in roots)
    changes = ", ".join("%g at %g s" % (r, t) for t, r in schedule)
    print("Traces recorded per second (ratio %g%s):" % (initial, ", then " + changes if changes else ""))
    line = ["%2ds %4d" % (sec, per_sec[sec]) for sec in range(max(per_sec) + 1)]
    for i in range(0, len(line), 8):
        print("  " + " |".join(line[i:i + 8]))
    service = collections.defaultdict(list)
    for s in spans:
        if s.get("kind") == "SERVER" and s["name"] in ("replica_write", "replica_delete"):
            service[s["localEndpoint"]["serviceName"]].append(s["duration"])
    if service:
        print("\nReplica service time per OSD (server span of replica_write/_delete), ms:")
        # marked only when clearly apart: p50 over 1 ms and 3x the others' median
        worst = max(service, key=lambda k: pct(service[k], 50))
        others = sorted(pct(service[k], 50) for k in service if k != worst)
        if not others or pct(service[worst], 50) < max(1000, 3 * others[len(others) // 2]):
            worst = None
        for osd in sorted(service):
            v = service[osd]
            print("  %-6s %6d spans  p50 %8.2f  p99 %8.2f%s" % (
                osd, len(v), pct(v, 50) / 1000, pct(v, 99) / 1000,
                "   <- slowest replica" if osd == worst else ""))


if __name__ == "__main__":
    main()
