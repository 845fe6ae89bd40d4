#!/usr/bin/env python3
"""Checks the hoptrace tool's outputs against what trace_workload says it
recorded: every format parses as JSON and has its required fields, and
the span set and parentage of the workload's traces are exactly the
expected ones. Traces of other processes that emitted hoptrace events
while the session recorded (the session takes every process of the
user) are counted and left out of the comparison.

usage: check_outputs.py EXPECT ZIPKIN OTLP CHROME REPORT"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chrome_parsed  # noqa: E402


def fail(msg):
    print("check_outputs: FAIL: " + msg)
    sys.exit(1)


def load_expect(path):
    spans = {}
    with open(path) as f:
        for line in f:
            trace, span, parent, kind, service, name = line.split()
            spans[(trace, span)] = (parent, kind, service, name)
    return spans


def ours(trace_id, expect_traces):
    return trace_id.rjust(32, "0") in expect_traces


def check_zipkin(path, expect):
    everything = json.load(open(path))
    if not isinstance(everything, list):
        fail("zipkin: not a list")
    expect_traces = {t for t, _ in expect}
    spans = [s for s in everything if ours(s.get("traceId", ""), expect_traces)]
    foreign = {s.get("traceId") for s in everything} - {s["traceId"] for s in spans}
    got = {}
    for s in spans:
        for field in ("traceId", "id", "name", "timestamp", "duration", "localEndpoint"):
            if field not in s:
                fail("zipkin: span without %s: %r" % (field, s))
        if len(s["traceId"]) not in (16, 32) or len(s["id"]) != 16:
            fail("zipkin: bad id lengths %r" % s)
        if not isinstance(s["timestamp"], int) or s["duration"] < 1:
            fail("zipkin: bad timestamp/duration %r" % s)
        if "serviceName" not in s["localEndpoint"]:
            fail("zipkin: localEndpoint without serviceName")
        if "hoptrace.incomplete" in s.get("tags", {}):
            fail("zipkin: complete trace marked incomplete: %r" % s)
        trace = s["traceId"].rjust(32, "0")
        got[(trace, s["id"])] = (s.get("parentId", "0" * 16), s.get("kind", "INTERNAL").lower(),
                                 s["localEndpoint"]["serviceName"], s["name"])
    if got != expect:
        missing = set(expect) - set(got)
        extra = set(got) - set(expect)
        wrong = [k for k in set(got) & set(expect) if got[k] != expect[k]]
        fail("zipkin spans differ: %d missing, %d extra, %d wrong (e.g. %r)" % (
            len(missing), len(extra), len(wrong),
            (list(missing) + list(extra) + wrong)[:2]))
    # server spans nest inside their client span on the timeline
    by_id = {(s["traceId"].rjust(32, "0"), s["id"]): s for s in spans}
    for s in spans:
        parent = by_id.get((s["traceId"].rjust(32, "0"), s.get("parentId")))
        if parent and s.get("kind") == "SERVER":
            if s["timestamp"] < parent["timestamp"] or \
               s["timestamp"] + s["duration"] > parent["timestamp"] + parent["duration"] + 1:
                fail("zipkin: server span %s outside its client span" % s["id"])
    annotations = {a["value"] for s in spans for a in s["annotations"]}
    if not {"cs", "sr", "ss", "cr"} <= annotations:
        fail("zipkin: missing Dapper annotations, have %r" % annotations)
    return len(spans), len(foreign)


def check_otlp(path, expect):
    doc = json.load(open(path))
    expect_traces = {t for t, _ in expect}
    n = 0
    for rs in doc["resourceSpans"]:
        keys = {a["key"] for a in rs["resource"]["attributes"]}
        if "service.name" not in keys:
            fail("otlp: resource without service.name")
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                for field in ("traceId", "spanId", "name", "kind", "startTimeUnixNano",
                              "endTimeUnixNano", "attributes", "events", "status"):
                    if field not in s:
                        fail("otlp: span without %s" % field)
                if len(s["traceId"]) != 32 or len(s["spanId"]) != 16:
                    fail("otlp: bad id length")
                # only a span flagged as such may end before it starts
                # (its process's clock went back: tool_backwards)
                if (int(s["endTimeUnixNano"]) < int(s["startTimeUnixNano"]) and
                        not any(a["key"] == "hoptrace.time.end_before_start_ns"
                                for a in s["attributes"])):
                    fail("otlp: span ends before it starts, not flagged")
                if s["kind"] not in (1, 2, 3, 4, 5):
                    fail("otlp: bad kind %r" % s["kind"])
                if not ours(s["traceId"], expect_traces):
                    continue
                key = (s["traceId"], s["spanId"])
                if key not in expect or expect[key][0] != s.get("parentSpanId", "0" * 16):
                    fail("otlp: unexpected span or parent %r" % (key,))
                n += 1
    if n != len(expect):
        fail("otlp: %d spans, want %d" % (n, len(expect)))


OTLP_RESOURCE_KEYS = {"service.name", "service.instance.id", "host.name", "process.pid",
                      "telemetry.sdk.name", "telemetry.sdk.language", "telemetry.sdk.version"}


def otlp_attrs(attrs):
    return {a["key"]: next(iter(a["value"].values())) for a in attrs}


def check_otlp_conventions(path):
    """Current semantic conventions: one ResourceSpans per resource, the
    resource keys, RPC attributes (semantic conventions v1.45.0), status
    UNSET unless ERROR, ERROR always with a message and error.type, no
    deprecated net.peer.name nor rpc.system."""
    doc = json.load(open(path))
    seen = set()
    for rs in doc["resourceSpans"]:
        res = otlp_attrs(rs["resource"]["attributes"])
        if not OTLP_RESOURCE_KEYS <= set(res):
            fail("otlp: resource lacks %r" % (OTLP_RESOURCE_KEYS - set(res)))
        ident = tuple(sorted(res.items()))
        if ident in seen:
            fail("otlp: resource %r in two ResourceSpans" % res["service.instance.id"])
        seen.add(ident)
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                a = otlp_attrs(s["attributes"])
                if "net.peer.name" in a:
                    fail("otlp: deprecated net.peer.name")
                if s["kind"] in (2, 3) and (a.get("rpc.system.name") != "hoptrace" or
                                            a.get("rpc.method") != s["name"]):
                    fail("otlp: RPC span without rpc.system.name/rpc.method: %r" % a)
                if "rpc.system" in a:
                    fail("otlp: deprecated rpc.system")
                if s["kind"] == 3 and "network.peer.address" in a and \
                        not {"server.address", "server.port", "network.peer.port"} <= set(a):
                    fail("otlp: client span without server.address/port: %r" % a)
                code = s["status"].get("code", 0)
                if code == 1:
                    fail("otlp: status OK set (UNSET on success)")
                if (code == 2) != ("error.type" in a) or (code == 2 and not s["status"].get("message")):
                    fail("otlp: failure without ERROR, message and error.type: %r" % s)
    return len(seen)


def check_chrome(path, expect):
    doc = json.load(open(path))
    events = doc["traceEvents"]
    expect_traces = {t for t, _ in expect}
    complete = [e for e in events if e["ph"] == "X" and ours(e["args"]["trace_id"], expect_traces)]
    if len(complete) != len(expect):
        fail("chrome: %d span events, want %d" % (len(complete), len(expect)))
    for e in complete:
        for field in ("name", "pid", "tid", "ts", "dur", "args"):
            if field not in e:
                fail("chrome: event without %s" % field)
    if not any(e["ph"] == "M" and e["name"] == "process_name" for e in events):
        fail("chrome: no process_name metadata")


def otlp_times(path):
    """(trace, span) -> (start ns, end ns, [event ns]) from the OTLP export,
    whose times are the tool's integer nanoseconds. A span ending before it
    starts (flagged: check_otlp) is left out: no slice can show it."""
    times = {}
    for rs in json.load(open(path))["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                if int(s["endTimeUnixNano"]) < int(s["startTimeUnixNano"]):
                    continue
                times[(s["traceId"], s["spanId"])] = (
                    int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"]),
                    [int(e["timeUnixNano"]) for e in s["events"]])
    return times


def check_chrome_exact(path, times):
    """Chrome: every ts/dur is integer ns / 1000 with three decimals (the
    OTLP export's ns, less the origin), exact once parsed as doubles,
    annotations inside their span on its track, no two complete events of
    one (pid, tid) partly overlapping (chrome_parsed.py)."""
    text = open(path).read()
    for m in re.finditer(r'"(ts|dur)":(-?[0-9.eE+]+)', text):
        if not re.fullmatch(r"-?[0-9]+\.[0-9]{3}", m.group(2)):
            fail("chrome: %s %s is not us with three decimals" % m.groups())
    _, spans, instants = chrome_parsed.check(path, fail)
    for key, (start, end) in spans.items():
        if key in times and (start, end) != times[key][:2]:
            fail("chrome: span %s at [%d, %d] ns, otlp says %r" % (key[1], start, end, times[key][:2]))
    return instants


def check_zipkin_exact(path, times, expect):
    """Zipkin: timestamp = start rounded down, timestamp + duration = end
    rounded up (so it covers the last annotation), annotations rounded down;
    endpoints as trace_workload gives them: localEndpoint the span's own
    address (ht_span_info.endpoint), remoteEndpoint the peer of its
    message (client span to osd.0)."""
    floor_us = lambda v: v // 1000
    ceil_us = lambda v: -((-v) // 1000)
    for s in json.load(open(path)):
        key = (s["traceId"].rjust(32, "0"), s["id"])
        if key not in expect:
            continue
        start, end, marks = times[key]
        if s["timestamp"] != floor_us(start) or \
           s["timestamp"] + s["duration"] != max(ceil_us(end), floor_us(start) + 1):
            fail("zipkin: span %s [%d, +%d] us for [%d, %d] ns" % (
                s["id"], s["timestamp"], s["duration"], start, end))
        last = max(a["timestamp"] for a in s["annotations"])
        if s["timestamp"] + s["duration"] < last:
            fail("zipkin: span %s ends before its last annotation" % s["id"])
        if sorted(a["timestamp"] for a in s["annotations"]) != sorted(floor_us(m) for m in marks):
            fail("zipkin: span %s annotation times differ from otlp" % s["id"])
        service = expect[key][2]
        port = 7000 if service == "client" else 6800 + int(service.split(".")[1])
        local = s["localEndpoint"]
        if local.get("ipv4") != "127.0.0.1" or local.get("port") != port:
            fail("zipkin: span %s (%s) localEndpoint %r, want its own port %d" % (
                s["id"], service, local, port))
        remote = s.get("remoteEndpoint")
        if service == "client" and remote != {"ipv4": "127.0.0.1", "port": 6800}:
            fail("zipkin: client span %s remoteEndpoint %r, want osd.0's" % (s["id"], remote))
        if service != "client" and remote is not None:
            fail("zipkin: span %s has a remoteEndpoint no peer gave" % s["id"])


def main():
    expect_path, zipkin, otlp, chrome, report = sys.argv[1:6]
    expect = load_expect(expect_path)
    traces = {t for t, _ in expect}
    n, foreign = check_zipkin(zipkin, expect)
    check_otlp(otlp, expect)
    check_otlp_conventions(otlp)
    check_chrome(chrome, expect)
    times = otlp_times(otlp)
    instants = check_chrome_exact(chrome, times)
    check_zipkin_exact(zipkin, times, expect)
    text = open(report).read()
    if foreign:
        print("check_outputs: %d traces of other processes left out" % foreign)
    elif "hoptrace report: %d traces, %d spans" % (len(traces), len(expect)) not in text:
        fail("report header wrong:\n" + text[:300])
    needles = ["client -> osd.0 osd_write", "osd.0 -> osd.1 replica_write",
               "request net+queue", "Slowest traces"]
    if not foreign:
        needles.append(" 0 incomplete")
    for needle in needles:
        if needle not in text:
            fail("report lacks %r" % needle)
    print("check_outputs: %d traces, %d spans, %d chrome instants: zipkin, otlp, chrome, report ok"
          % (len(traces), n, instants))


if __name__ == "__main__":
    main()
