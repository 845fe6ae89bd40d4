#!/usr/bin/env python3
"""Compares babeltrace2's text output of a hoptrace session with the
events the driver says it emitted, exactly and in order, and checks the
span tree's shape independently of the driver.

Schema 2: `process` and `desc` events are taken out of the comparison
(exactly one process event; every desc before the first span that uses
it); a span event's (span, span_k, span_a) desc id is replaced by its
names (kind/name/service/endpoint), and an expected value "*" is a time: non-zero, and no earlier
than the span's start.

usage: check_trace.py BABELTRACE_OUTPUT EXPECTED_FILE (tree|empty)
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from hoptrace_bt import parse_fields  # noqa: E402

SPANS = ("hoptrace:span", "hoptrace:span_k", "hoptrace:span_a")
LINE = re.compile(r"^\[[^\]]*\] \([^)]*\) \S+ (hoptrace:\w+): \{ cpu_id = \d+ \}, \{ (.*) \}$")


def canonical(path):
    events = []
    with open(path) as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if not raw:
                continue
            m = LINE.match(raw)
            if not m:
                sys.exit("unparsed babeltrace line: " + raw)
            fields = parse_fields(m.group(2))
            events.append((m.group(1), fields))
    return events


def with_names(events):
    """Drops desc events, naming each span event's desc id by them."""
    descs, out = {}, []
    for name, f in events:
        d = dict(f)
        if name == "hoptrace:desc":
            descs[d["id"]] = "/".join([d["kind"]] + [d[k].strip('"') for k in
                                                      ("name", "service", "endpoint")])
            continue
        if name in SPANS:
            if d["desc"] not in descs:
                sys.exit("%s uses desc %s before any desc event names it" % (name, d["desc"]))
            f = [(k, descs[v] if k == "desc" else v) for k, v in f]
        out.append((name, f))
    return out


def matches(got, want):
    """got and want are (event, fields) lists; "*" in want: a time."""
    if got[0] != want[0] or [k for k, _ in got[1]] != [k for k, _ in want[1]]:
        return False
    start = dict(got[1]).get("start")
    for (k, g), (_, w) in zip(got[1], want[1]):
        if w == "*":
            if not g.isdigit() or int(g) == 0 or (k != "start" and int(g) < int(start)):
                return False
        elif g != w:
            return False
    return True


def parse_want(line):
    name, _, rest = line.partition(" ")
    return name, re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', rest)


def check_tree(events):
    ids = lambda f: {k: v for k, v in f}
    traces = {(ids(f)["trace_id_hi"], ids(f)["trace_id_lo"]) for _, f in events}
    if len(traces) != 1:
        sys.exit("expected one trace id, got %r" % traces)
    spans = {}  # span_id -> (name, parent)
    for name, f in events:
        d = ids(f)
        if name in SPANS:
            if d["span_id"] in spans:
                sys.exit("span recorded twice: " + d["span_id"])
            spans[d["span_id"]] = (d["desc"].split("/")[1], d["parent_span_id"])
    by_name = {n: (sid, p) for sid, (n, p) in spans.items()}
    want = {"req": None, "osd_write": "req", "checksum": "req",
            "replica_write": "osd_write"}
    if set(by_name) != set(want):
        sys.exit("span names %r != %r" % (sorted(by_name), sorted(want)))
    for n, parent in want.items():
        sid, p = by_name[n]
        expect_parent = "0" if parent is None else by_name[parent][0]
        if p != expect_parent:
            sys.exit("span %s has parent %s, want %s" % (n, p, expect_parent))
    ends = {}
    for name, f in events:
        d = ids(f)
        if d["span_id"] not in spans:
            sys.exit("event for unknown span: %s %r" % (name, d))
        if d["parent_span_id"] != spans[d["span_id"]][1]:
            sys.exit("event parent differs from its span's: %s" % name)
        if name in SPANS:
            ends[d["span_id"]] = ends.get(d["span_id"], 0) + 1
    if any(ends.get(s) != 1 for s in spans):
        sys.exit("every span must be recorded exactly once: %r" % ends)


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("tree", "empty"):
        sys.exit(__doc__)
    got = canonical(sys.argv[1])
    # the process names itself once (schema 2's `process` event), before its
    # first span: the driver's list holds only the span events
    processes = [f for n, f in got if n == "hoptrace:process"]
    got = with_names([(n, f) for n, f in got if n != "hoptrace:process"])
    got_lines = [n + "".join(" %s=%s" % kv for kv in f) for n, f in got]
    if sys.argv[3] == "tree" and len(processes) != 1:
        sys.exit("expected one process event, got %d" % len(processes))
    with open(sys.argv[2]) as f:
        want_lines = [l.rstrip("\n") for l in f if l.strip()]
    if sys.argv[3] == "empty":
        # The driver's file lists what it emitted while sampled; with no
        # provider (or no sampling) nothing may reach the trace.
        if got_lines:
            sys.exit("expected no events, got %d:\n%s"
                     % (len(got_lines), "\n".join(got_lines[:5])))
        print("ok: no events recorded (driver emitted %d)" % len(want_lines))
        return
    for i in range(max(len(got_lines), len(want_lines))):
        g = got_lines[i] if i < len(got_lines) else "<none>"
        w = want_lines[i] if i < len(want_lines) else "<none>"
        if g == "<none>" or w == "<none>" or not matches(got[i], parse_want(w)):
            sys.exit("event %d differs:\n got  %s\n want %s" % (i, g, w))
    if len(got_lines) != 11:
        sys.exit("expected 11 events, got %d" % len(got_lines))
    check_tree(got)
    print("ok: %d events, tree verified" % len(got_lines))


main()
