#!/usr/bin/env python3
"""What the receiver decoded (one JSON line a span, receiver.js) against
`hoptrace export --format otlp` of the same input: every span the tool
read arrives exactly once, with the same parent, name, kind, times,
status, attributes, events and resource.

usage: compare_push.py OTLP_FILE RECEIVED.jsonl|OTHER_OTLP_FILE.json ENCODING
(ENCODING "file" with a second OTLP file: the same spans in both)"""
import json
import sys


def fail(msg):
    print("compare_push: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def value(v):
    return next(iter(v.values()))


def from_file(path):
    spans = {}
    for rs in json.load(open(path))["resourceSpans"]:
        resource = {a["key"]: value(a["value"]) for a in rs["resource"]["attributes"]}
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                key = (s["traceId"], s["spanId"])
                if key in spans:
                    fail("span %r twice in the file" % (key,))
                spans[key] = {
                    "scope": ss["scope"]["name"], "resource": resource,
                    "parentSpanId": s.get("parentSpanId", ""), "name": s["name"],
                    "kind": s["kind"], "start": s["startTimeUnixNano"],
                    "end": s["endTimeUnixNano"],
                    "attributes": {a["key"]: value(a["value"]) for a in s["attributes"]},
                    "events": [[e["timeUnixNano"], e["name"]] for e in s["events"]],
                    "status": {"code": s["status"].get("code", 0),
                               "message": s["status"].get("message", "")}}
    return spans


def main():
    want = from_file(sys.argv[1])
    encoding = sys.argv[3]
    got = from_file(sys.argv[2]) if encoding == "file" else {}
    for line in open(sys.argv[2]) if encoding != "file" else []:
        s = json.loads(line)
        key = (s["traceId"], s["spanId"])
        if key in got:
            fail("span %r arrived twice" % (key,))
        if s["encoding"] != encoding:
            fail("span %r came as %s, want %s" % (key, s["encoding"], encoding))
        got[key] = s
    if not want:
        fail("the file holds no span")
    missing = set(want) - set(got)
    extra = set(got) - set(want)
    if missing or extra:
        fail("%d spans missing, %d unexpected (of %d): %r" % (
            len(missing), len(extra), len(want), sorted(missing | extra)[:3]))
    for key, w in want.items():
        g = got[key]
        for field in w:
            if g[field] != w[field]:
                fail("span %r: %s is %r, want %r" % (key, field, g[field], w[field]))
    print("compare_push: %d spans arrived once each, as %s, equal to the OTLP file" %
          (len(want), encoding))


if __name__ == "__main__":
    main()
