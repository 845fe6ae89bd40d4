#!/usr/bin/env python3
"""Checks a simulated-hosts run's ground truth (hosts.txt) against its raw
traces: for every RPC between two hosts, the client's send/receive (cs, cr)
and the server's receive/send (sr, ss) must keep their causal order once
each timestamp t of host h is put on true time, t - theta_h(t), with

  theta_h(t) = (metadata_offset_h - D) + ppm_h * 1e-6 * (mono(t) - anchor_h),
  mono(t) = t - D.

Prints, per ordered host pair (client -> server), the number of RPCs, the
smallest one-way delays sr-cs and cr-ss before and after the correction,
and the server's offset estimated from the RPCs (((sr-cs) - (cr-ss)) / 2,
median) next to the true one (theta_server - theta_client at the median
RPC), and the drift fitted from the RPCs over time next to the true one
(ppm_server - ppm_client). Exit 1 when a corrected one-way delay is negative beyond --slack-us
(default 20: LTTng timestamps a send before the bytes leave and a receive
after they were read, so the true delays are positive), and when it finds
no RPC between two hosts at all.

usage: hosts_truth.py OUT [--slack-us N]     (OUT holds hosts.txt and relay/)"""
import os
import re
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from hoptrace_bt import parse_fields  # noqa: E402

# a span side (hoptrace_schema.h): its end is the event's time, its start
# a time of the same clock in cycles; cs/sr and cr/ss only when its flags
# say both ends were frames
LINE = re.compile(r"^\[([^\]]+)\] .*?hoptrace:(span|span_x|desc): (.*)$")
START_FRAME, END_FRAME = 0x40, 0x80
CLIENT, SERVER = 1, 2


def fields(text):
    text = text.strip()
    text = text[2:-2] if text.startswith("{ ") and text.endswith(" }") else text
    return dict(parse_fields(text.replace(" }, { ", ", ")))


def events(trace):
    """(event, fields, ns) of each span side and desc; ns from the clock's
    origin, and a span's start converted with the same clock's offset
    (the cycles and seconds of one event, babeltrace2 run both ways)."""
    run = lambda how: subprocess.run(["babeltrace2", how, trace], capture_output=True,
                                     text=True, check=False).stdout.splitlines()
    for secs, cycles in zip(run("--clock-seconds"), run("--clock-cycles")):
        m, c = LINE.match(secs), LINE.match(cycles)
        if not m or not c:
            continue
        whole, _, frac = m[1].partition(".")
        ns = int(whole) * 1000000000 + int(frac.ljust(9, "0")[:9])
        f = fields(m[3])
        if m[2] != "desc":
            f["start_ns"] = int(f["start"]) + ns - int(c[1])
        yield m[2], f, ns


def load_hosts(out):
    hosts, d = {}, None
    for line in open(os.path.join(out, "hosts.txt")):
        f = line.split()
        if f and f[0] == "D":
            d = int(f[1])
        elif f and f[0] == "host":
            kv = dict(x.split("=", 1) for x in f[2:])
            if kv["metadata_offset_ns"] != "-":  # else: no trace from that host
                hosts[f[1]] = dict(ppm=float(kv["ppm"]), anchor=int(kv["anchor_ns"]),
                                   meta=int(kv["metadata_offset_ns"]),
                                   trace=os.path.join(out, kv["trace"]))
    for h in hosts.values():
        h["D"] = d
    return hosts


def theta(h, t):
    return (h["meta"] - h["D"]) + h["ppm"] * 1e-6 * ((t - h["D"]) - h["anchor"])


def main():
    out = sys.argv[1]
    slack = float(sys.argv[sys.argv.index("--slack-us") + 1]) * 1000 if "--slack-us" in sys.argv else 20000
    hosts = load_hosts(out)
    client, server = {}, {}  # client span id -> (host, cs, cr); -> (host, sr, ss)
    for name, h in hosts.items():
        kinds, sides = {}, []
        for ev, f, ns in events(h["trace"]):
            if ev == "desc":
                kinds[(f["vpid"], f["id"])] = int(f["kind"])
            elif int(f["flags"]) & (START_FRAME | END_FRAME) == START_FRAME | END_FRAME:
                sides.append((f, ns))
        for f, end in sides:
            kind = kinds.get((f["vpid"], f["desc"]))
            if kind == CLIENT:
                client[f["span_id"]] = (name, f["start_ns"], end)
            elif kind == SERVER:
                server[f["parent_span_id"]] = (name, f["start_ns"], end)
    pairs = defaultdict(list)
    for sid, (ch, cs, cr) in client.items():
        if sid in server and server[sid][0] != ch:
            sh, sr, ss = server[sid]
            pairs[(ch, sh)].append((cs, sr, ss, cr))
    bad = 0
    print("hosts truth: client -> server  rpcs  min(sr-cs) min(cr-ss) raw | corrected (us)"
          "  offset from rpcs | true (us)  drift from rpcs | true (ppm)")
    for (ch, sh), rpcs in sorted(pairs.items()):
        c, s = hosts[ch], hosts[sh]
        raw1 = min(sr - cs for cs, sr, ss, cr in rpcs)
        raw2 = min(cr - ss for cs, sr, ss, cr in rpcs)
        cor1 = min((sr - theta(s, sr)) - (cs - theta(c, cs)) for cs, sr, ss, cr in rpcs)
        cor2 = min((cr - theta(c, cr)) - (ss - theta(s, ss)) for cs, sr, ss, cr in rpcs)
        est = sorted(((sr - cs) - (cr - ss)) / 2 for cs, sr, ss, cr in rpcs)[len(rpcs) // 2]
        mid = sorted(rpcs)[len(rpcs) // 2]
        true = theta(s, mid[1]) - theta(c, mid[0])
        # drift: slope of the per-RPC offset over the client's time (least squares)
        xs = [(cs - mid[0]) / 1e9 for cs, sr, ss, cr in rpcs]
        ys = [((sr - cs) - (cr - ss)) / 2 for cs, sr, ss, cr in rpcs]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx / 1e3 if sxx else 0.0
        true_ppm = s["ppm"] - c["ppm"]
        ok = cor1 >= -slack and cor2 >= -slack
        bad += not ok
        print("  %s -> %s %6d  %10.1f %10.1f | %8.1f %8.1f  %10.1f | %10.1f  %8.1f | %6.1f%s" % (
            ch, sh, len(rpcs), raw1 / 1e3, raw2 / 1e3, cor1 / 1e3, cor2 / 1e3, est / 1e3,
            true / 1e3, slope, true_ppm, "" if ok else "  <- causality broken after correction"))
    if not pairs:  # nothing checked is a failure, not a pass
        print("  no RPC between two hosts found")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
