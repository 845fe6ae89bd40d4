#!/usr/bin/env python3
"""Checks that every sampled write of a simulator run is one trace tree
read back from the real LTTng trace (the hoptrace tool's Zipkin export):

  client.N  CLIENT osd_write
    osd.P   SERVER osd_write                 (exactly one: the primary)
      osd.P   CLIENT replica_write           (one per replica)
        osd.R SERVER replica_write           (exactly one, R != P, distinct)

with correct parentage, server spans nested in their client spans, and
{P} + replicas being the placement set of some PG of the cluster map, P
first (no OSD was down). The number of write trees must equal the writes
the clients acknowledged (sampling ratio 1, no faults).

Only spans of the cluster's processes count (PIDS file): a session on a
shared host also records any other traced process of the user.

usage: check_trees.py ZIPKIN MAP PIDS WRITES"""
import collections
import json
import sys

MASK = (1 << 64) - 1


def fail(msg):
    print("check_trees: FAIL: " + msg)
    sys.exit(1)


def fnv(data, seed):
    h = 1469598103934665603 ^ seed
    for b in data:
        h ^= b
        h = (h * 1099511628211) & MASK
    return h


def load_map(path):
    pg_num, size, osds = 64, 3, {}
    for line in open(path):
        f = line.split("#")[0].split()
        if not f:
            continue
        if f[0] == "osd":
            osds[int(f[1])] = f[2]
        elif f[0] == "pg_num":
            pg_num = int(f[1])
        elif f[0] == "size":
            size = int(f[1])
    n = len(osds)
    size = min(size, n)
    sets = set()
    for pg in range(pg_num):
        score = {i: fnv(pg.to_bytes(8, "little") + i.to_bytes(8, "little"), 0x5eed)
                 for i in range(n)}
        order = sorted(range(n), key=lambda i: (-score[i], i))
        sets.add((order[0], frozenset(order[1:size])))
    return size, sets


def kind(s):
    return s.get("kind", "INTERNAL")


def service(s):
    return s["localEndpoint"]["serviceName"]


def nested(child, parent):
    return (child["timestamp"] >= parent["timestamp"] and
            child["timestamp"] + child["duration"] <= parent["timestamp"] + parent["duration"] + 1)


def check_write(root, children, size, sets):
    servers = children[root["id"]]
    if len(servers) != 1:
        return "client span has %d children, want 1 server span" % len(servers)
    primary = servers[0]
    if kind(primary) != "SERVER" or primary["name"] != "osd_write" or \
            not service(primary).startswith("osd."):
        return "bad primary span %r" % primary
    if not nested(primary, root):
        return "primary span outside the client span"
    p = int(service(primary)[4:])
    replicas = []
    for rc in children[primary["id"]]:
        if kind(rc) != "CLIENT" or rc["name"] != "replica_write" or service(rc) != service(primary):
            return "unexpected child of the primary: %r" % rc
        rs = children[rc["id"]]
        if len(rs) != 1 or kind(rs[0]) != "SERVER" or rs[0]["name"] != "replica_write":
            return "replica request without exactly one replica server span"
        if not nested(rs[0], rc):
            return "replica span outside its client span"
        replicas.append(int(service(rs[0])[4:]))
    if len(replicas) != size - 1 or len(set(replicas)) != len(replicas) or p in replicas:
        return "primary osd.%d replicated to %r, want %d distinct others" % (p, replicas, size - 1)
    if (p, frozenset(replicas)) not in sets:
        return "osd.%d + %r is no placement set of the map" % (p, sorted(replicas))
    return None


def main():
    zipkin, map_path, pid_path, writes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    size, sets = load_map(map_path)
    pids = set(open(pid_path).read().split())
    if not pids:
        fail("no cluster pids in %s" % pid_path)
    spans = [s for s in json.load(open(zipkin)) if s.get("tags", {}).get("hoptrace.pid") in pids]
    traces = collections.defaultdict(list)
    for s in spans:
        if "hoptrace.incomplete" in s.get("tags", {}):
            fail("incomplete trace %s: %s" % (s["traceId"], s["tags"]["hoptrace.incomplete"]))
        traces[s["traceId"]].append(s)
    n_write = 0
    for tid, ss in traces.items():
        ids = {s["id"] for s in ss}
        roots = [s for s in ss if "parentId" not in s]
        if len(roots) != 1:
            fail("trace %s has %d roots" % (tid, len(roots)))
        for s in ss:
            if "parentId" in s and s["parentId"] not in ids:
                fail("trace %s: span %s has a missing parent" % (tid, s["id"]))
        root = roots[0]
        if kind(root) != "CLIENT" or not service(root).startswith("client."):
            fail("trace %s: root is not a client span: %r" % (tid, root))
        if root["name"] != "osd_write":
            continue
        children = collections.defaultdict(list)
        for s in ss:
            if "parentId" in s:
                children[s["parentId"]].append(s)
        why = check_write(root, children, size, sets)
        if why:
            fail("trace %s: %s" % (tid, why))
        n_write += 1
    if n_write != writes:
        fail("%d write trees in the trace, the clients acknowledged %d writes" % (n_write, writes))
    print("check_trees: %d traces, %d write trees client -> primary -> %d replicas: ok" % (
        len(traces), n_write, size - 1))


if __name__ == "__main__":
    main()
