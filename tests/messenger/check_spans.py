#!/usr/bin/env python3
"""Checks spans the hoptrace tool exported (Zipkin v2 JSON) for the
messenger integration tests. Only spans of this run count: their service
names end with "-TAG" (other programs may record into the same session).

  check_spans.py three ZIPKIN TRACES TAG
      every trace id in TRACES (one per client request) is one trace of
      exactly 8 spans: client -> A server -> A clients to B, C (inside the
      handler) and B again (worker thread) -> their server spans; exact
      parents, cs/cr on client spans, sr/ss on server spans, server spans
      inside their client span on the timeline; no other trace of ours.
  check_spans.py none ZIPKIN TAG
      no span of this run at all.
  check_spans.py count ZIPKIN TRACES TAG SERVICE [MIN MAX]
      prints how many server spans of SERVICE-TAG belong to the traces in
      TRACES; checks MIN <= n <= MAX when given.
"""
import json
import sys


def fail(msg):
    print("check_spans: FAIL: " + msg)
    sys.exit(1)


def load(path, tag):
    spans = json.load(open(path)) if path != "-" else []
    suffix = "-" + tag
    return [s for s in spans
            if s.get("localEndpoint", {}).get("serviceName", "").endswith(suffix)]


def ids(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def norm(trace):
    return trace.rjust(32, "0")


def service(s):
    return s["localEndpoint"]["serviceName"].rsplit("-", 1)[0]


def annotations(s):
    return sorted(a["value"] for a in s.get("annotations", []))


def nested(child, parent):
    return (child["timestamp"] >= parent["timestamp"] and
            child["timestamp"] + child["duration"] <=
            parent["timestamp"] + parent["duration"] + 1)


def one(spans, pred, what):
    found = [s for s in spans if pred(s)]
    if len(found) != 1:
        fail("%s: expected 1 span, found %d" % (what, len(found)))
    return found[0]


def check_trace(trace, spans):
    if len(spans) != 8:
        fail("trace %s: %d spans, expected 8: %r" % (
            trace, len(spans), sorted((service(s), s["name"], s.get("kind")) for s in spans)))
    if any("hoptrace.incomplete" in s.get("tags", {}) for s in spans):
        fail("trace %s marked incomplete" % trace)
    root = one(spans, lambda s: "parentId" not in s, trace + " root")
    if (service(root), root["name"], root.get("kind")) != ("client", "fan", "CLIENT"):
        fail("trace %s: root is %r" % (trace, root))
    a = one(spans, lambda s: s.get("parentId") == root["id"], trace + " A server")
    if (service(a), a["name"], a.get("kind")) != ("A", "fan", "SERVER"):
        fail("trace %s: A server span is %r" % (trace, a))
    calls = [s for s in spans if s.get("parentId") == a["id"]]
    got = sorted((service(s), s["name"], s.get("kind"), s.get("remoteEndpoint", {}).get("serviceName", ""))
                 for s in calls)
    names = sorted((service(s), s["name"], s.get("kind")) for s in calls)
    if names != [("A", "leaf", "CLIENT"), ("A", "leaf", "CLIENT"), ("A", "leaf_later", "CLIENT")]:
        fail("trace %s: A's children are %r" % (trace, got))
    servers = []
    for c in calls:
        srv = one(spans, lambda s: s.get("parentId") == c["id"], trace + " server of " + c["name"])
        if srv.get("kind") != "SERVER" or srv["name"] != c["name"]:
            fail("trace %s: server span %r under %r" % (trace, srv, c))
        servers.append((c, srv))
    if sorted(service(srv) for _, srv in servers) != ["B", "B", "C"]:
        fail("trace %s: servers %r" % (trace, [service(srv) for _, srv in servers]))
    later = [srv for c, srv in servers if c["name"] == "leaf_later"]
    if service(later[0]) != "B":
        fail("trace %s: worker's call did not reach B" % trace)
    for s in spans:
        want = ["cr", "cs"] if s.get("kind") == "CLIENT" else ["sr", "ss"]
        if annotations(s) != want:
            fail("trace %s: span %s (%s) has annotations %r" % (
                trace, s["id"], s["name"], annotations(s)))
        if s.get("tags", {}).get("error"):
            fail("trace %s: span %s has an error %r" % (trace, s["id"], s["tags"]))
    for c, srv in servers + [(root, a)]:
        if not nested(srv, c):
            fail("trace %s: server span %s outside its client span %s" % (trace, srv["id"], c["id"]))
    for c, _ in servers:
        if not nested(c, a):
            fail("trace %s: A's call %s outside A's server span" % (trace, c["id"]))


def three(path, traces_path, tag):
    spans = load(path, tag)
    want = [norm(t) for t in ids(traces_path)]
    if not want:
        fail("the client reported no trace ids")
    by_trace = {}
    for s in spans:
        by_trace.setdefault(norm(s["traceId"]), []).append(s)
    if set(by_trace) != set(want) or len(set(want)) != len(want):
        fail("traces of this run %d, client requests %d (distinct %d)" % (
            len(by_trace), len(want), len(set(want))))
    for t in want:
        check_trace(t, by_trace[t])
    print("check_spans: %d traces of 8 spans, parents, annotations and nesting ok" % len(want))


def none(path, tag):
    spans = load(path, tag)
    if spans:
        fail("%d spans recorded, expected none: %r" % (len(spans), spans[:2]))
    print("check_spans: nothing recorded")


def count(path, traces_path, tag, svc, lo=None, hi=None):
    spans = load(path, tag)
    want = {norm(t) for t in ids(traces_path)}
    n = sum(1 for s in spans if service(s) == svc and s.get("kind") == "SERVER"
            and norm(s["traceId"]) in want)
    print(n)
    if lo is not None and not (int(lo) <= n <= int(hi)):
        fail("%s: %d server spans, expected %s..%s" % (svc, n, lo, hi))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "three":
        three(*sys.argv[2:5])
    elif mode == "none":
        none(*sys.argv[2:4])
    elif mode == "count":
        count(*sys.argv[2:])
    else:
        fail("unknown mode " + mode)
