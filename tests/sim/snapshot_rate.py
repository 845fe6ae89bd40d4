#!/usr/bin/env python3
"""snapshot_rate.py CAPTURE_JSON RATE: the flight recorder's rate limit
held: its snapshots started at least 1/RATE apart, less 1 ms for the
clock's own grain. Read from each snapshot's start_mono_ns, the monotonic
clock the limit keeps (at_ns is the wall clock read a moment later: a
thread preempted between the two reads made two starts 497.5 ms apart
at 2/s). Exit 1 naming the first two starts too close; importable
(too_close) by the checkers that collect their failures."""
import json
import sys


def too_close(snapshot_list, rate):
    """The first two consecutive starts closer than the limit, as a
    sentence; None when the limit held."""
    starts = [s["start_mono_ns"] for s in snapshot_list]
    gap = 1e9 / rate
    for i, (a, b) in enumerate(zip(starts, starts[1:])):
        if b - a < gap - 1e6:
            return "snapshots %d and %d started %.1f ms apart, the limit %.1f ms (%g a second)" % (
                i, i + 1, (b - a) / 1e6, gap / 1e6, rate)
    return None


if __name__ == "__main__":
    path, rate = sys.argv[1], float(sys.argv[2])
    why = too_close(json.load(open(path))["snapshot_list"], rate)
    if why:
        sys.exit("%s: %s" % (path, why))
    print("%s: snapshots at least %.1f ms apart" % (path, 1e3 / rate))
