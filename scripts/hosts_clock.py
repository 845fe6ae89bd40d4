#!/usr/bin/env python3
"""Helpers of scripts/hosts.sh (simulated hosts).

  hosts_clock.py skew SPEC N   one line per host: "hI offset_ns ppm spec"
                               (SPEC: hI=+7ms|-250us|+0.5s|+20ns|+100ppm,...
                               or none; one host's entries add up)
  hosts_clock.py measure       "D anchor": D = realtime - monotonic (ns) from
                               the tightest of 100 bracketed readings (how
                               lttng-sessiond measures the offset it writes
                               into the metadata), anchor = monotonic now"""
import re
import sys
import time

UNITS = {"s": 10**9, "ms": 10**6, "us": 10**3, "µs": 10**3, "ns": 1}


def skew(spec, n):
    hosts = {}
    for e in ([] if spec in ("", "none") else spec.split(",")):
        m = re.fullmatch(r"h(\d+)=([+-]?\d+(?:\.\d+)?)(s|ms|us|µs|ns|ppm)", e.strip())
        if not m or not 1 <= int(m[1]) <= n:
            sys.exit("hosts: bad --skew entry %r (hI=+7ms, -250us, +100ppm; I in 1..%d)" % (e, n))
        h = hosts.setdefault(int(m[1]), [0, 0.0, []])
        if m[3] == "ppm":
            h[1] += float(m[2])
        else:
            h[0] += round(float(m[2]) * UNITS[m[3]])
        h[2].append(("" if m[2][0] in "+-" else "+") + m[2] + m[3])
    for i in range(1, n + 1):
        off, ppm, s = hosts.get(i, [0, 0.0, []])
        print("h%d %d %g %s" % (i, off, ppm, "".join(s) if s else "none"))


def measure():
    mono, real = time.CLOCK_MONOTONIC, time.CLOCK_REALTIME
    s = []
    for _ in range(100):
        m0 = time.clock_gettime_ns(mono)
        r = time.clock_gettime_ns(real)
        m1 = time.clock_gettime_ns(mono)
        s.append((m1 - m0, r - (m0 + m1) // 2))
    print(min(s)[1], time.clock_gettime_ns(mono))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "skew":
        skew(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 2 and sys.argv[1] == "measure":
        measure()
    else:
        sys.exit(__doc__)
