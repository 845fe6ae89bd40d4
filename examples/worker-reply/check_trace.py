#!/usr/bin/env python3
"""Checks a worker-reply run recorded by LTTng (babeltrace2 text output).

usage: check_trace.py EVENTS_TXT VPID N

Per request, one trace of four spans:
  client "square" (root) -> front "square" (the handler's server span)
  -> front "store.put" (sent by the worker) -> store "store.put".
Each parent must be exact, and the worker must be visible. A span is one
event (hoptrace:span), written by the thread that ends it, named through
the process's hoptrace:desc table: the handler's span ends with the reply,
on the worker, and front's "store.put" ends when its reply arrives, on
front's loop thread, so the two must differ.
Only events of process VPID are read (the session may hold others).
"""
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from hoptrace_bt import parse_fields  # noqa: E402

EVENT = re.compile(r"hoptrace:(span|span_x|desc): (.*)$")


def fields(text):
    """'{ cpu_id = 0 }, { vpid = 1, ... }, { side = [...], ... }' by name."""
    text = text.strip()
    text = text[2:-2] if text.startswith("{ ") and text.endswith(" }") else text
    pairs = parse_fields(text.replace(" }, { ", ", "))
    return {k: v[1:-1] if v.startswith('"') else int(v) for k, v in pairs}


def main():
    path, vpid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    descs, sides = {}, []
    for line in open(path):
        m = EVENT.search(line)
        if not m:
            continue
        f = fields(m.group(2))
        if f.get("vpid") != vpid:
            continue
        if m.group(1) == "desc":
            descs[f["id"]] = f
        else:
            sides.append(f)
    spans = {}  # span_id -> its side, named, with end_vtid
    for f in sides:
        d = descs.get(f["desc"])
        if d is None:
            print(f"FAIL: span {f['span_id']:x}: desc {f['desc']} never written",
                  file=sys.stderr)
            sys.exit(1)
        f.update(name=d["name"], service=d["service"], kind=d["kind"],
                 end_vtid=f["vtid"])
        spans[f["span_id"]] = f

    traces = defaultdict(list)
    for s in spans.values():
        traces[(s["trace_id_hi"], s["trace_id_lo"])].append(s)
    errors = []
    if len(traces) != n:
        errors.append(f"{len(traces)} traces recorded, want {n}")

    def one(trace, service, kind, name):
        got = [s for s in trace
               if (s["service"], s["kind"], s["name"]) == (service, kind, name)]
        if len(got) != 1:
            raise ValueError(f"{len(got)} {service} {name} spans of kind {kind}")
        return got[0]

    for tid, trace in traces.items():
        try:
            if len(trace) != 4:
                raise ValueError(f"{len(trace)} spans, want 4")
            root = one(trace, "client", 1, "square")
            handler = one(trace, "front", 2, "square")
            put = one(trace, "front", 1, "store.put")
            stored = one(trace, "store", 2, "store.put")
            if root["parent_span_id"] != 0:
                raise ValueError("the client span is not a root")
            if handler["parent_span_id"] != root["span_id"]:
                raise ValueError("handler span: wrong parent")
            if put["parent_span_id"] != handler["span_id"]:
                raise ValueError("store.put span: not a child of the handler's")
            if stored["parent_span_id"] != put["span_id"]:
                raise ValueError("store span: wrong parent")
            if handler["end_vtid"] == put["end_vtid"]:
                raise ValueError("the reply left from front's loop thread")
        except (KeyError, ValueError) as e:
            errors.append(f"trace {tid[0]:016x}{tid[1]:016x}: {e}")
    for e in errors[:10]:
        print("FAIL:", e, file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"{n} traces: client -> front handler -> (worker) store.put -> store, "
          "parents exact, replies from the workers")


main()
