#!/usr/bin/env python3
"""The Chrome export as a JSON reader holds it: json.load's doubles.
Every ts and dur, read as a double and turned back into ns, must be the
exact ns the text says (times are relative to otherData's
time_origin_unix_ns: near the epoch a double is only good to 256 ns);
from those ns, every annotation (instant) lies inside its own slice and
on its track (but for a span flagged as ending before it starts: its
marks cannot all lie in a slice), and no two complete events of one
track partly overlap.

usage: chrome_parsed.py CHROME_JSON   (or import: check(path))"""
import decimal
import json
import sys


def partial_overlaps(slices):
    """Pairs of (start, end) in one track that overlap without nesting."""
    bad, stack = 0, []
    for start, end in sorted(slices, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1] <= start:
            stack.pop()
        if stack and end > stack[-1]:
            bad += 1
        stack.append(end)
    return bad


def check(path, fail):
    """Returns (origin ns, {(trace, span): (start, end) absolute ns},
    instants checked); calls fail(msg) on the first kind of error found,
    with how many events have it."""
    text = open(path).read()
    doc = json.loads(text)
    exact = json.loads(text, parse_float=decimal.Decimal)["traceEvents"]
    events = doc["traceEvents"]
    ns = lambda v: round(v * 1000)  # a reader keeping integer ns
    inexact = 0
    for e, x in zip(events, exact):
        for field in ("ts", "dur"):
            if field in e and ns(e[field]) != int(x[field] * 1000):
                inexact += 1
    slices = [e for e in events if e["ph"] == "X"]
    origin = doc.get("otherData", {}).get("time_origin_unix_ns")
    if slices and not isinstance(origin, str):
        fail("chrome: otherData.time_origin_unix_ns missing or not a string: %r" % (origin,))
    origin = int(origin) if origin is not None else 0
    spans, tracks, by_span, backwards = {}, {}, {}, set()
    for e in slices:
        start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        if "hoptrace.time.end_before_start_ns" in e["args"]:
            backwards.add((e["pid"], e["args"]["span_id"]))
        by_span[(e["pid"], e["args"]["span_id"])] = (e["tid"], start, end)
        tracks.setdefault((e["pid"], e["tid"]), []).append((start, end))
        spans[(e["args"]["trace_id"], e["args"]["span_id"])] = (origin + start, origin + end)
    overlapping = sum(partial_overlaps(v) for v in tracks.values())
    instants = [e for e in events if e["ph"] == "i"]
    outside = 0
    for e in instants:
        if (e["pid"], e["args"]["span_id"]) in backwards:
            continue
        tid, start, end = by_span[(e["pid"], e["args"]["span_id"])]
        if e["tid"] != tid or not start <= ns(e["ts"]) <= end:
            outside += 1
    if inexact or overlapping or outside:
        fail("chrome after json.load: %d times not their exact ns, %d of %d instants outside "
             "their slice or track, %d of %d slices partly overlap another of their track" % (
                 inexact, outside, len(instants), overlapping, len(slices)))
    return origin, spans, len(instants)


def main():
    def fail(msg):
        print("chrome_parsed: FAIL: " + msg)
        sys.exit(1)
    _, spans, instants = check(sys.argv[1], fail)
    print("chrome_parsed: %d slices, %d instants: exact, inside, nested" % (len(spans), instants))


if __name__ == "__main__":
    main()
