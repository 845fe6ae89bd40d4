#!/usr/bin/env python3
"""Two Zipkin exports of one input hold the same spans (whatever their
order): what one decoder and several must both write. Prints the count.

usage: same_zipkin.py A.json B.json [MIN_SPANS]"""
import json
import sys


def spans(path):
    return sorted(json.dumps(s, sort_keys=True) for s in json.load(open(path)))


one, two = spans(sys.argv[1]), spans(sys.argv[2])
if len(sys.argv) > 3 and len(one) < int(sys.argv[3]):
    sys.exit("same_zipkin: %d spans, want at least %s" % (len(one), sys.argv[3]))
if one != two:
    sys.exit("same_zipkin: the spans of %s and %s differ" % (sys.argv[1], sys.argv[2]))
print("zipkin: %d spans, identical in %s and %s" % (len(one), sys.argv[1], sys.argv[2]))
