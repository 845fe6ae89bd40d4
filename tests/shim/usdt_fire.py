#!/usr/bin/env python3
"""The USDT twins fire: every span_start / span_end site of hoptrace's
stapsdt notes becomes a kernel uprobe (with the note's semaphore as its
reference counter, so the library sees the probe enabled), the span-tree
driver runs, and the ids the probes fetched from the driver's registers
and memory must be exactly the spans the driver says it started and
finished -- what perf, bpftrace or SystemTap users would see.

  usdt_fire.py BINARY_WITH_NOTES DRIVER WORK_DIR

BINARY_WITH_NOTES is libhoptrace.so for the shared driver, the driver
itself for the static one. Needs root and tracefs with uprobe_events; exits
77 (skipped) without them. Uses its own tracing instance and probe group,
removes both, and unmounts tracefs only if it mounted it.
"""
import os
import re
import subprocess
import sys

SKIP = 77
EVENTS = {"span_start": 4, "span_end": 4}  # fetched: the four ids


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def tracefs():
    """(path, mounted_here) of a tracefs with uprobe_events."""
    for path in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.exists(os.path.join(path, "uprobe_events")):
            return path, False
    if os.geteuid() != 0:
        skip("tracefs is not mounted and we are not root")
    path = "/sys/kernel/tracing"
    if not os.path.isdir(path) or subprocess.run(
            ["mount", "-t", "tracefs", "nodev", path],
            capture_output=True).returncode != 0:
        skip("cannot mount tracefs")
    if not os.path.exists(os.path.join(path, "uprobe_events")):
        subprocess.run(["umount", path])
        skip("kernel without uprobes")
    return path, True


def load_segments(binary):
    out = subprocess.run(["readelf", "-lW", binary], check=True,
                         capture_output=True, text=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[5], 16)))
    return segs  # (file offset, vaddr, memsz)


def file_offset(segs, addr):
    for off, vaddr, memsz in segs:
        if vaddr <= addr < vaddr + memsz:
            return addr - vaddr + off
    fail("address 0x%x in no LOAD segment" % addr)


def stapsdt_base(binary):
    out = subprocess.run(["readelf", "-SW", binary], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"\.stapsdt\.base\s+\S+\s+([0-9a-f]+)", out)
    return int(m.group(1), 16) if m else None


def probes(binary):
    """[(name, location, semaphore, [arg specs])] of provider hoptrace."""
    out = subprocess.run(["readelf", "-n", "--wide", binary], check=True,
                         capture_output=True, text=True).stdout
    found, prov, name = [], None, None
    for line in out.splitlines():
        m = re.search(r"Provider: (\S+)", line)
        if m:
            prov = m.group(1)
        m = re.search(r"Name: (\S+)", line)
        if m:
            name = m.group(1)
        m = re.search(r"Location: (0x[0-9a-f]+), Base: (0x[0-9a-f]+), "
                      r"Semaphore: (0x[0-9a-f]+)", line)
        if m:
            loc, base, sem = (int(x, 16) for x in m.groups())
        m = re.search(r"Arguments: (.*)", line)
        if m and prov == "hoptrace" and name in EVENTS:
            found.append((name, loc, base, sem, m.group(1).split()))
    return found


REG = {"rax": "ax", "rbx": "bx", "rcx": "cx", "rdx": "dx", "rsi": "si",
       "rdi": "di", "rbp": "bp", "rsp": "sp", "eax": "ax", "ebx": "bx",
       "ecx": "cx", "edx": "dx", "esi": "si", "edi": "di", "ebp": "bp"}


def fetcharg(spec):
    """An SDT operand (8@%rax, 8@16(%rbx), -4@%r13d) as a uprobe fetcharg."""
    size, op = spec.split("@", 1)
    kind = ("s" if size.startswith("-") else "u") + str(8 * abs(int(size)))

    def reg(r):
        r = r.lstrip("%")
        if r in REG:
            return "%" + REG[r]
        m = re.fullmatch(r"(r\d+)[dwb]?", r)
        if m:
            return "%" + m.group(1)
        return None

    m = re.fullmatch(r"(-?\d*)\((%\w+)\)", op)
    if m and reg(m.group(2)):
        return "+%d(%s):%s" % (int(m.group(1) or 0), reg(m.group(2)), kind)
    if reg(op):
        return "%s:%s" % (reg(op), kind)
    return None  # rip-relative, immediate: not needed for the ids


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    binary = os.path.realpath(sys.argv[1])
    driver, work = sys.argv[2], sys.argv[3]
    if os.geteuid() != 0:
        skip("uprobes need root")
    segs = load_segments(binary)
    sdt_base = stapsdt_base(binary)
    sites = probes(binary)
    if not sites:
        fail("no hoptrace span_start/span_end notes in " + binary)
    root, mounted = tracefs()
    group = "htusdt%d" % os.getpid()
    inst = os.path.join(root, "instances", group)
    defined = []

    def write(path, text, append=True):
        # one write(2), no seek: tracefs files take neither Python's
        # buffered append (it seeks to the end) nor partial lines
        flags = os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC)
        fd = os.open(path, flags)
        try:
            os.write(fd, (text + "\n").encode())
        finally:
            os.close(fd)

    try:
        for i, (name, loc, base, sem, args) in enumerate(sites):
            delta = sdt_base - base if sdt_base is not None else 0
            ids = [fetcharg(a) for a in args[:EVENTS[name]]]
            if None in ids:
                fail("cannot fetch %s's ids from %s" % (name, args))
            event = "%s_%d" % (name, i)
            fields = " ".join("%s=%s" % (n, a) for n, a in
                              zip(("hi", "lo", "span", "parent"), ids))
            write(os.path.join(root, "uprobe_events"),
                  "p:%s/%s %s:0x%x(0x%x) %s" % (
                      group, event, binary, file_offset(segs, loc + delta),
                      file_offset(segs, sem + delta), fields))
            defined.append(event)
        os.mkdir(inst)
        for event in defined:
            write(os.path.join(inst, "events", group, event, "enable"), "1",
                  append=False)
        os.makedirs(work, exist_ok=True)
        expect = os.path.join(work, "usdt-expected.txt")
        # no LTTng at all: the USDT twins stand on their own
        env = dict(os.environ, HT_LTTNG="0")
        run = subprocess.run([driver, "sampled", expect], env=env,
                             capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            fail("driver exit %d: %s" % (run.returncode, run.stderr))
        for event in defined:
            write(os.path.join(inst, "events", group, event, "enable"), "0",
                  append=False)
        with open(os.path.join(inst, "trace")) as f:
            text = f.read()
    finally:
        if os.path.isdir(inst):
            os.rmdir(inst)
        for event in defined:
            write(os.path.join(root, "uprobe_events"),
                  "-:%s/%s" % (group, event))
        if mounted:
            subprocess.run(["umount", root])

    got = []
    pat = re.compile(r"(span_start|span_end)_\d+: \(0x[0-9a-f]+\) hi=(\d+) "
                     r"lo=(\d+) span=(\d+) parent=(\d+)")
    for line in text.splitlines():
        m = pat.search(line)
        if m:
            got.append((m.group(1),) + tuple(int(x) for x in m.groups()[1:]))
    # the driver lists LTTng's events: a span is one span, span_k or
    # span_a there, and both a span_start and a span_end probe here
    want = []
    pat = re.compile(r"hoptrace:span(?:_k|_a)? trace_id_hi=(\d+) "
                     r"trace_id_lo=(\d+) span_id=(\d+) parent_span_id=(\d+)")
    with open(expect) as f:
        for line in f:
            m = pat.match(line)
            if m:
                ids = tuple(int(x) for x in m.groups())
                want += [("span_start",) + ids, ("span_end",) + ids]
    if len(want) != 8:
        fail("driver expected %d span starts and ends, not 8" % len(want))
    if sorted(got) != sorted(want):
        fail("probes fetched\n  %s\nwanted\n  %s" % (
            "\n  ".join(map(str, got)), "\n  ".join(map(str, want))))
    print("ok: %d USDT hits (%d sites) carry exactly the driver's span ids"
          % (len(got), len(defined)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
