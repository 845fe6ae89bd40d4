#!/usr/bin/env python3
"""Checks the hoptrace tool's clock alignment on a simulated cluster
(tests/cluster/cluster_align.sh) against the ground truth of the skews
the hosts were given (run-hosts.sh's hosts.txt), and against a control
run without skew.

usage:
  check_cluster.py align SKEWED_OUT CONTROL_OUT   outputs of `hoptrace` in each
  check_cluster.py noalign REPORT                 a report made with --align off
  check_cluster.py killed OUT HOST                a run whose HOST lost its daemon
  check_cluster.py live OUT                       a run followed live (zipkin-live.json)
"""
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tool"))
import chrome_parsed  # noqa: E402

# a pair's offset interval, at most: the 100 us; its width is the
# fastest RPCs' round trip, which a sanitizer build (2-3x slower) widens
# (CI's ASan stage: one span's bound +-50,020 ns)
BOUND_WIDTH_NS = 200_000 if os.environ.get("HT_SANITIZE") else 100_000
DRIFT_PPM = 10.0           # drift recovered within
# the yardstick; a sanitizer build runs 2-3x slower and its two
# runs differ more (the drift host's clock plugin costs more there too)
P50_REL, P50_ABS_NS = (0.20 if os.environ.get("HT_SANITIZE") else 0.10), 20_000
# a median from n RPCs is itself uncertain: the two runs' medians are
# compared beyond their distribution-free 99 % intervals (order statistics
# n/2 -+ 2.576 sqrt(n)/2): a pair with 100 RPCs under CI load moves tens of us
MEDIAN_Z = 2.576
ROUNDING_NS = 1_000        # Zipkin's and the waterfall's microseconds
EXACT_P50_NS = 10_000      # aligned p50 vs the same RPCs on true time


def fail(msg):
    print("check_cluster: FAIL: " + msg)
    sys.exit(1)


def note(msg):
    print("check_cluster: " + msg)


def load_truth(path):
    """hosts.txt: per host its skew; theta_h(t) = (off_h - D) + ppm_h*1e-6*(t - D - anchor_h),
    the host's clock minus true time at true time t (ns since the epoch)."""
    hosts = {}
    d = None
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "D":
            d = int(f[1])
        elif f[0] == "host":
            kv = dict(x.split("=", 1) for x in f[2:])
            hosts[f[1]] = kv
    if d is None:
        fail("%s: no D line" % path)
    truth = {}
    for name, kv in hosts.items():
        off, ppm, anchor = int(kv["metadata_offset_ns"]), float(kv["ppm"]), int(kv["anchor_ns"])
        truth[name] = (lambda off, ppm, anchor: lambda t: (off - d) + ppm * 1e-6 * (t - d - anchor))(
            off, ppm, anchor)
    return truth


def parse_clock_table(path):
    """The clock table (clock_sync_print) as printed in the report."""
    pairs, hosts = [], {}
    for line in open(path):
        f = line.split()
        if line.startswith("pair ") and len(f) > 4 and f[3].isdigit():
            pairs.append(f)
        elif line.startswith("host ") and len(f) > 2:
            hosts[f[1]] = f
    return pairs, hosts


def zipkin_spans(path):
    spans = json.load(open(path))
    if not isinstance(spans, list):
        fail("zipkin: not a list")
    return spans


def otlp_spans(path):
    doc = json.load(open(path))
    out = []
    for rs in doc["resourceSpans"]:
        attrs = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
        host = attrs.get("host.name", {}).get("stringValue", "")
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                s["_host"] = host
                s["_attrs"] = {a["key"]: a["value"] for a in s.get("attributes", [])}
                out.append(s)
    return out


def check_nesting(label, spans, slack_ns):
    """No server span starts before its client parent or ends after it."""
    by_id = {(s["trace"], s["id"]): s for s in spans}
    pairs = bad = 0
    for s in spans:
        p = by_id.get((s["trace"], s["parent"]))
        if s["kind"] != "SERVER" or p is None or p["kind"] != "CLIENT":
            continue
        pairs += 1
        if s["start"] + slack_ns < p["start"] or s["end"] > p["end"] + slack_ns:
            bad += 1
            if bad <= 3:
                note("%s: server span %s [%d, %d] outside its client %s [%d, %d]" % (
                    label, s["id"], s["start"], s["end"], p["id"], p["start"], p["end"]))
    if pairs == 0:
        fail("%s: no client/server span pair" % label)
    if bad:
        fail("%s: %d of %d server spans outside their client parent" % (label, bad, pairs))
    note("%s: %d client/server pairs, every server span inside its client" % (label, pairs))


def norm_zipkin(spans):
    return [{"trace": s["traceId"], "id": s["id"], "parent": s.get("parentId"),
             "kind": s.get("kind", ""), "start": s["timestamp"] * 1000,
             "end": (s["timestamp"] + s.get("duration", 0)) * 1000} for s in spans]


def norm_otlp(spans):
    kinds = {2: "SERVER", 3: "CLIENT"}
    return [{"trace": s["traceId"], "id": s["spanId"], "parent": s.get("parentSpanId"),
             "kind": kinds.get(s["kind"], ""), "start": int(s["startTimeUnixNano"]),
             "end": int(s["endTimeUnixNano"])} for s in spans]


def norm_chrome(path, kinds):
    """kinds: span id -> kind (Chrome's events carry none). Read as a JSON
    reader holds it (doubles): exact, annotations inside their slice, no
    partly overlapping slices (chrome_parsed.py), or a failure."""
    origin, _, instants = chrome_parsed.check(path, fail)
    note("chrome: %d instants inside their slice after json.load" % instants)
    doc = json.load(open(path))
    out = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        a = e["args"]
        start = origin + round(e["ts"] * 1000)
        out.append({"trace": a["trace_id"], "id": a["span_id"], "parent": a["parent_span_id"],
                    "kind": kinds.get(a["span_id"], ""), "start": start,
                    "end": start + round(e["dur"] * 1000)})
    return out


def norm_html(path):
    """The page's data block (out_html.c): a "T" line a trace, its header
    and, after a tab, its spans (parent: an index, -1, or a missing id)."""
    text = open(path).read()
    out = []
    kinds = {2: "SERVER", 1: "CLIENT"}
    for m in re.finditer(r"^T(\[.*?\])\t(\[.*\])$", text, re.M):
        head, spans = json.loads(m.group(1)), json.loads(m.group(2))
        for s in spans:
            p = s[1]
            parent = spans[p][0] if isinstance(p, int) and p >= 0 else p if isinstance(p, str) else ""
            out.append({"trace": head[0], "id": s[0], "parent": parent, "kind": kinds.get(s[4], ""),
                        "start": s[6], "end": s[6] + s[7] if s[7] >= 0 else -1})
    if not out:
        fail("waterfall: no trace found in %s" % path)
    return out


def request_samples_by_pair(spans, truth=None):
    """sr - cs of every cross-host RPC per (client host, server host), from
    OTLP events (pairs with fewer than 20 left out); with truth, each time
    first put on true time (raw, unaligned input)."""
    by_id = {(s["traceId"], s["spanId"]): s for s in spans}
    samples = {}
    for s in spans:
        p = by_id.get((s["traceId"], s.get("parentSpanId")))
        if s["kind"] != 2 or p is None or p["kind"] != 3 or p["_host"] == s["_host"]:
            continue
        ev = lambda x, n: next((int(e["timeUnixNano"]) for e in x.get("events", [])
                                if e["name"] == n), None)
        cs, sr = ev(p, "cs"), ev(s, "sr")
        if cs is not None and sr is not None and truth is not None:
            cs -= truth[p["_host"]](cs)
            sr -= truth[s["_host"]](sr)
        if cs is not None and sr is not None:
            samples.setdefault((p["_host"], s["_host"]), []).append(sr - cs)
    return {k: v for k, v in samples.items() if len(v) >= 20}


def request_p50_by_pair(spans, truth=None):
    return {k: statistics.median(v) for k, v in request_samples_by_pair(spans, truth).items()}


def request_p50_spread_by_pair(spans):
    """(p50, half the width of its 99 % interval) of sr - cs per host pair."""
    out = {}
    for pair, v in request_samples_by_pair(spans).items():
        v.sort()
        n = len(v)
        k = max(0, int(n / 2 - MEDIAN_Z * math.sqrt(n) / 2))
        out[pair] = (statistics.median(v), (v[n - 1 - k] - v[k]) / 2)
    return out


def reference_host(report_path):
    for line in open(report_path):
        f = line.split()
        if len(f) > 2 and f[0] == "host" and f[2] == "reference":
            return f[1]
    fail("%s: no reference host in the clock table" % report_path)


def check_bounds(label, spans, truth, ref, slack_ns, max_width_ns=BOUND_WIDTH_NS):
    """spans: (id, host, shown start ns, shift ns, bound ns). The true
    correction (reference clock minus the host's, at that moment) lies
    within the span's bound of its shift, and the bound is narrow."""
    worst, widest = 0.0, 0
    for sid, host, start, shift, bound in spans:
        widest = max(widest, 2 * bound)
        if host not in truth:
            fail("%s: span of unknown host %r" % (label, host))
        raw = start - shift
        t = raw - truth[host](raw)  # true time, to well under a microsecond
        expected = truth[ref](t) - truth[host](t)
        err = abs(shift - expected)
        worst = max(worst, err / max(bound, 1))
        if err > bound + slack_ns:
            fail("%s: span %s on %s: shift %d ns, true %d ns, bound %d ns" % (
                label, sid, host, shift, expected, bound))
        if max_width_ns is not None and 2 * bound > max_width_ns:
            fail("%s: span %s on %s: bound +-%d ns wider than %d ns" % (
                label, sid, host, bound, max_width_ns))
    if not spans:
        fail("%s: no span" % label)
    note("%s: %d spans, every correction within its bound of the truth (worst %.2f of its "
         "bound), widest bound %.1f us, reference %s" % (label, len(spans), worst, widest / 1000,
                                                         ref))


def otlp_shifts(otlp):
    out = []
    for s in otlp:
        a = s["_attrs"]
        if "hoptrace.clock.shift_ns" not in a:
            fail("otlp: span without hoptrace.clock.shift_ns: %s" % s["spanId"])
        out.append((s["spanId"], s["_host"], int(s["startTimeUnixNano"]),
                    int(a["hoptrace.clock.shift_ns"]["intValue"]),
                    int(a["hoptrace.clock.bound_ns"]["intValue"])))
    return out


def zipkin_shifts(zipkin):
    out = []
    for s in zipkin:
        tags = s.get("tags", {})
        if "hoptrace.clock.shift_ns" not in tags:
            fail("zipkin: span without hoptrace.clock.shift_ns: %s" % s["id"])
        out.append((s["id"], tags["hoptrace.host"], s["timestamp"] * 1000,
                    int(tags["hoptrace.clock.shift_ns"]), int(tags["hoptrace.clock.bound_ns"])))
    return out


def check_align(skewed, control):
    truth = load_truth(skewed + "/hosts.txt")
    zipkin = zipkin_spans(skewed + "/zipkin.json")
    otlp = otlp_spans(skewed + "/otlp.json")
    ref = reference_host(skewed + "/report.txt")
    # 1. every span's correction within its bound of the truth
    check_bounds("otlp", otlp_shifts(otlp), truth, ref, 1)
    # 2. each pair's interval holds the true offset, at most 100 us wide; drift
    pairs, hosts = parse_clock_table(skewed + "/report.txt")
    names = sorted(truth)
    for f in pairs:
        a, b = f[1], f[2]
        line = " ".join(f)
        m = re.match(r"pair \S+ \S+ \d+ \d+ (\S+) \[(\S+) (\S+)\] (\S+) \[\S+ \S+\] \S+ \d+.*"
                     r"mid_ns=(\d+)", line)
        if m is None:
            fail("clock table: cannot read %r" % line)
        est, lo, hi, drift = (float(m.group(i)) for i in range(1, 5))
        mid = int(m.group(5))
        t = mid - truth[a](mid)
        true_us = (truth[b](t) - truth[a](t)) / 1000
        if not lo <= true_us <= hi:
            fail("pair %s %s: true offset %.3f us outside [%.3f, %.3f]" % (a, b, true_us, lo, hi))
        # a host's recovered offset comes through the tree's pairs: theirs
        # must be narrow; a pair off the tree (few RPCs) only holds the truth
        if "tree" in f and (hi - lo) * 1000 > BOUND_WIDTH_NS:
            fail("pair %s %s: interval %.1f us wide" % (a, b, hi - lo))
        true_ppm = (truth[b](t + 1e9) - truth[a](t + 1e9) - truth[b](t) + truth[a](t)) / 1e3
        if abs(drift - true_ppm) > DRIFT_PPM:
            fail("pair %s %s: drift %.1f ppm, true %.1f ppm" % (a, b, drift, true_ppm))
        note("pair %s %s%s: offset %.3f us in [%.3f, %.3f] (true %.3f, %.1f us wide), drift %.1f "
             "ppm (true %.1f)" % (a, b, " (tree)" if "tree" in f else "", est, lo, hi, true_us,
                                  hi - lo, drift, true_ppm))
    if len(pairs) < len(names) - 1:
        fail("clock table: %d pairs for %d hosts" % (len(pairs), len(names)))
    # 3. nesting in every output
    check_nesting("zipkin", norm_zipkin(zipkin), ROUNDING_NS)
    check_nesting("otlp", norm_otlp(otlp), 0)
    # Chrome's microseconds relative to its origin: exact ns once parsed
    kinds = {s["id"]: s["kind"] for s in norm_otlp(otlp)}
    check_nesting("chrome", norm_chrome(skewed + "/chrome-trace.json", kinds), 0)
    check_nesting("waterfall", norm_html(skewed + "/waterfall.html"), ROUNDING_NS)
    # 4. request net+queue per host pair: as on true time in the same run
    # (what the alignment alone can get wrong), and as in the control run
    # made at the same time without skew (the yardstick)
    got = request_p50_by_pair(otlp)
    exact = request_p50_by_pair(otlp_spans(skewed + "/otlp-raw.json"), truth)
    for pair, p50 in sorted(exact.items()):
        diff = abs(got.get(pair, float("inf")) - p50)
        note("%s -> %s request net+queue p50: %.1f us aligned, %.1f us on true time" % (
            pair[0], pair[1], got.get(pair, float("nan")) / 1000, p50 / 1000))
        if diff > EXACT_P50_NS:
            fail("host pair %s -> %s: aligned p50 %.1f us from the true one" % (
                pair[0], pair[1], diff / 1000))
    # two runs: the yardstick applies beyond what each median can tell
    got_spread = request_p50_spread_by_pair(otlp)
    want = request_p50_spread_by_pair(otlp_spans(control + "/otlp.json"))
    bad = []
    for pair, (p50, spread) in sorted(want.items()):
        if pair not in got_spread:
            fail("host pair %s -> %s: no RPC in the skewed run" % pair)
        g50, gspread = got_spread[pair]
        diff = abs(g50 - p50)
        allowed = max(P50_REL * p50, P50_ABS_NS) + spread + gspread
        note("%s -> %s request net+queue p50: %.1f us skewed+aligned (+-%.1f), %.1f us "
             "control (+-%.1f), allowed %.1f%s" % (
                 pair[0], pair[1], g50 / 1000, gspread / 1000, p50 / 1000, spread / 1000,
                 allowed / 1000, "" if diff <= allowed else "  <- too far"))
        if diff > allowed:
            bad.append("%s -> %s by %.1f us" % (pair[0], pair[1], diff / 1000))
    if bad:
        fail("request p50 differs from the control run: " + ", ".join(bad))
    # 5. every write spans hosts, and is complete or its loss is counted
    traces = {}
    for s in zipkin:
        traces.setdefault(s["traceId"], []).append(s)
    writes = incomplete = 0
    for spans in traces.values():
        root = [s for s in spans if "parentId" not in s]
        if len(root) != 1 or root[0]["name"] != "osd_write":
            continue
        writes += 1
        if len({s["tags"]["hoptrace.host"] for s in spans}) < 2:
            fail("write trace %s stays on one host" % spans[0]["traceId"])
        incomplete += any("hoptrace.incomplete" in s.get("tags", {}) for s in spans)
    report = open(skewed + "/report.txt").read()
    m = re.search(r"events discarded by LTTng:\s+(\d+) \((\d+) packets", report)
    lost = m is not None and (int(m.group(1)) > 0 or int(m.group(2)) > 0)
    if writes == 0:
        fail("no write trace")
    if incomplete and not lost:
        fail("%d of %d write traces incomplete with no loss counted" % (incomplete, writes))
    note("%d write traces across hosts, %d incomplete (loss counted: %s)" % (writes, incomplete, lost))


def check_live(out):
    truth = load_truth(out + "/hosts.txt")
    zipkin = zipkin_spans(out + "/zipkin-live.json")
    log = open(out + "/follow.log").read()
    m = re.search(r"^host (\S+) reference", log, re.M)
    if m is None:
        fail("follow.log: no clock table with a reference host")
    # live bounds are those of the moment a trace was written: early ones
    # come from a few seconds of RPCs and are wider; they must hold the truth
    check_bounds("live zipkin", zipkin_shifts(zipkin), truth, m.group(1), ROUNDING_NS, None)
    check_nesting("live zipkin", norm_zipkin(zipkin), ROUNDING_NS)
    writes = len({s["traceId"] for s in zipkin if s["name"] == "osd_write" and "parentId" not in s})
    offline = len({s["traceId"] for s in zipkin_spans(out + "/zipkin.json")
                   if s["name"] == "osd_write" and "parentId" not in s})
    note("live: %d write traces followed, %d in the relay's files" % (writes, offline))
    if writes < offline * 0.8:
        fail("live: only %d of %d write traces followed" % (writes, offline))


def check_noalign(report_path):
    text = open(report_path).read()
    m = re.search(r"(\d+) negative phases: these hosts' clocks disagree", text)
    if m is None or int(m.group(1)) == 0:
        fail("--align off: the report does not count negative phases")
    if "Clock alignment" in text:
        fail("--align off: the report shows a clock alignment")
    note("--align off: %s negative phases counted and said" % m.group(1))


def check_killed(out, host):
    report = open(out + "/report.txt").read()
    line = next((l for l in report.splitlines() if l.strip().startswith("host %s " % host)), None)
    if line is None:
        fail("report: no line for host %s" % host)
    m = re.search(r"(\d+) server spans missing", line)
    if m is None or int(m.group(1)) == 0:
        fail("report: no server span counted missing from host %s: %s" % (host, line))
    if "STALLED" not in line:
        fail("report: host %s not reported stalled: %s" % (host, line))
    # the other hosts keep going: traces on them after the kill
    zipkin = zipkin_spans(out + "/zipkin.json")
    last = {}
    for s in zipkin:
        h = s.get("tags", {}).get("hoptrace.host")
        last[h] = max(last.get(h, 0), s["timestamp"])
    others = [h for h in last if h != host]
    if host in last and others and min(last[h] for h in others) - last[host] < 2_000_000:
        fail("the other hosts' traces stopped with %s's" % host)
    marked = sum(1 for s in zipkin
                 if host in s.get("tags", {}).get("hoptrace.incomplete", ""))
    if marked == 0:
        fail("no trace marked as missing spans of %s" % host)
    note("host %s: %s; %d spans in traces marked for it; other hosts went on %.1f s longer" % (
        host, line.strip(), marked,
        (min(last[h] for h in others) - last.get(host, 0)) / 1e6))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "align":
        check_align(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "noalign":
        check_noalign(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "live":
        check_live(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "killed":
        check_killed(sys.argv[2], sys.argv[3])
    else:
        print(__doc__)
        sys.exit(2)
    print("check_cluster: PASS")
