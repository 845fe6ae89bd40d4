#!/usr/bin/env python3
"""The report's numbers against what trace_workload issued (tool_report.sh).

usage: check_report.py REPORT ZIPKIN OTLP EXPECT FACTS RATIO FORCED JSON
       check_report.py --rate REPORT EXPECT FORCED

FACTS (trace_workload --facts): "issued N", "error TRACE", "timeout TRACE".
The workload issued N traces; FORCED of them were forced (p = 1), the
rest sampled at RATIO. Checks:
- the report's traces recorded = the traces the workload expects;
- its estimated issued = FORCED + (recorded - FORCED) / RATIO exactly,
  and within 4 standard deviations of the binomial estimate of N:
  |estimate - N| <= 4 * sqrt((N - FORCED) * (1 - RATIO) / RATIO);
- the time spread: its slices hold every trace recorded and the estimate;
- the probability table, the per-hop calls sampled and estimated, the
  per-operation rows (osd_read: FORCED
  traces, flagged <100; osd_write: not flagged) and per-server rows;
- errors and timeouts per hop (only the hops that had any) and per
  operation = the facts; said on a hop's calls line only when it had any,
  never "errors: 0"; the "no errors" line once when none had;
- operations named by their root span alone (client service a column),
  the Per operation rows in the per-hop blocks' order of operations;
- the per-hop blocks by operation, each operation's hops by their share
  of its end-to-end time (largest first), the operation with the most
  end-to-end time first; JSON (report --format json) in the same order;
- every root span of the Zipkin and OTLP files, and no other span, carries
  hoptrace.sampling.probability, "1" on FORCED of them, RATIO on the rest.
With --rate (a rate-limited sampler, whose roots record no p; FORCED
forced, p = 1): the estimate is "at least" the recorded, never counted as
p = 1 for the rate-limited ones, which read "unknown" wherever they are
alone (osd_write's rows); no hop failed: no errors or timeouts column
in the roll-ups, "no errors" said once.
"""
import json
import math
import re
import sys


def fail(msg):
    sys.exit("check_report: " + msg)


def row(text, section, label):
    """The fields after `label` on its line inside `section`."""
    start = text.find("\n" + section)
    if start < 0:
        fail("no section %r" % section)
    end = text.find("\n\n", start + 1)
    for line in text[start:end if end > 0 else None].splitlines():
        if line.strip().startswith(label + " "):
            return line.strip()[len(label):].split()
    fail("section %r has no row %r" % (section, label))


def op_row(text, name):
    """A Per operation row's fields after its client column, which is the
    workload's client: the operation is named by its root span alone."""
    fields = row(text, "Per operation", name)
    if fields[0] != "client":
        fail("operation %s: client %r" % (name, fields[0]))
    return fields[1:]


def table_names(text, section):
    """The row names of a roll-up table, in order."""
    start = text.find("\n" + section)
    end = text.find("\n\n", start + 1)
    lines = text[start:end].splitlines()  # "", its legend, its header, its rows
    return [l.split()[0] for l in lines[3:]]


def absent_row(text, section, label):
    """True when `section` has no row `label` (False when it has)."""
    start = text.find("\n" + section)
    if start < 0:
        fail("no section %r" % section)
    end = text.find("\n\n", start + 1)
    return not any(line.strip().startswith(label + " ")
                   for line in text[start:end if end > 0 else None].splitlines())


def hop_errors(text, section, label):
    """[calls, errors, timeouts] of `label` summed over its rows in `section`."""
    start = text.find("\n" + section)
    end = text.find("\n\n", start + 1)
    sums = None
    for line in text[start:end if end > 0 else None].splitlines():
        if line.strip().startswith(label + " "):
            f = [int(x) for x in line.strip()[len(label):].split()[:3]]
            sums = f if sums is None else [a + b for a, b in zip(sums, f)]
    if sums is None:
        fail("section %r has no row %r" % (section, label))
    return sums


def spread(text):
    """The time spread's slices: [from, traces, share, est. issued, ratio]."""
    start = text.find("recorded/est.\n")
    if start < 0:
        fail("no time spread")
    rows = []
    for line in text[start:].splitlines()[1:]:
        f = line.split()
        if len(f) != 5 or not f[0].startswith("+"):
            break
        rows.append(f)
    if not 1 <= len(rows) <= 10 or float(rows[0][0]) != 0:
        fail("time spread: %r" % rows)
    return rows


def hop_label(text, hop):
    """The first five fields of the calls line under a per-hop row group's
    label (calls: N sampled, est. E), checked for its share after them."""
    at = text.find("\n%s\n  calls: " % hop)
    if at < 0:
        fail("no per-hop rows for %r" % hop)
    calls = text[at + 1:].split("\n", 2)[1]
    if not re.search(r"; \d+\.\d % of the operation's end-to-end time", calls):
        fail("no share on %r" % calls)
    return calls.split(";")[0].split()


def per_hop(text):
    """The per-hop blocks in order: [(operation, hop, share %, errors, timeouts)]."""
    start = text.find("\nPer hop ")
    end = text.find("\n\n", start + 1)
    if start < 0:
        fail("no Per hop section")
    blocks, op, lines = [], None, text[start:end].splitlines()
    for i, line in enumerate(lines):
        if line.startswith("operation "):
            op = line[len("operation "):].split(":")[0]
        m = re.match(r"  calls: \d+ sampled, est\. \S+; (\d+\.\d) % of the operation's"
                     r" end-to-end time(; errors: (\d+))?(; timeouts: (\d+))?$", line)
        if line.startswith("  calls:") and m is None:
            fail("calls line %r" % line)
        if m:
            if op is None:
                fail("hop %r before any operation" % lines[i - 1])
            blocks.append((op, lines[i - 1], float(m.group(1)), int(m.group(3) or 0),
                           int(m.group(5) or 0)))
    return blocks


def check_order(text, report_json):
    """Per hop: by operation, then share, largest first; the JSON alike."""
    blocks = per_hop(text)
    ops = [b[0] for b in blocks]
    if ops != sorted(ops, key=ops.index) or len(set(ops)) < 2:
        fail("per-hop blocks not grouped by operation: %r" % ops)
    for op in set(ops):
        shares = [b[2] for b in blocks if b[0] == op]
        if shares != sorted(shares, reverse=True):
            fail("operation %s: hops not by share: %r" % (op, shares))
    if re.search(r"errors: 0\b|timeouts: 0\b", text):
        fail("an 'errors: 0' or 'timeouts: 0' in the report")
    ops = [o for o in dict.fromkeys(ops)]
    if table_names(text, "Per operation") != ops:
        fail("Per operation rows %r, per-hop blocks %r" % (table_names(text, "Per operation"), ops))
    doc = json.load(open(report_json))
    e2e = [o["e2e_ns"] for o in doc["hops"]]
    if e2e != sorted(e2e, reverse=True):
        fail("json operations not by end-to-end time: %r" % e2e)
    order = [(o["operation"], h["hop"]) for o in doc["hops"] for h in o["hops"]
             if h["phases"]]
    if order != [b[:2] for b in blocks]:
        fail("json order %r, text %r" % (order, [b[:2] for b in blocks]))
    for o in doc["hops"]:
        for h in o["hops"]:
            if h.get("errors", 1) == 0 or h.get("timeouts", 1) == 0:
                fail("json hop with a zero error count: %r" % h)
    return blocks


def check_rate(report, expect, forced):
    text = open(report).read()
    recorded = len({l.split()[0] for l in open(expect) if l.strip()})
    limited = recorded - forced
    if limited < 1:
        fail("the rate sampler recorded no trace")
    want = ("traces recorded: %d; estimated issued: at least %d (%d from the %d traces of known"
            " p, " % (recorded, recorded, forced, forced))
    if want not in text or "+ %d traces of unknown p, counted once each)" % limited not in text:
        fail("rate-limited estimate: want %r in\n%s" % (want, text[:900]))
    if row(text, "Built from", "unknown")[:2] != [str(limited), "-"]:
        fail("unknown p row: %r" % row(text, "Built from", "unknown"))
    rows = spread(text)
    if sum(int(r[1]) for r in rows) != recorded:
        fail("time spread holds %d traces, %d recorded" % (sum(int(r[1]) for r in rows), recorded))
    if op_row(text, "osd_write")[:3] != [str(limited), "unknown", "unknown"]:
        fail("rate-limited operation: %r" % op_row(text, "osd_write"))
    if op_row(text, "osd_read")[:2] != [str(forced), str(forced)]:
        fail("forced operation: %r" % op_row(text, "osd_read"))
    heads = [l.split() for l in text.splitlines()
             if l.split()[:3] == ["operation", "client", "sampled"]
             or l.split()[:2] == ["server", "sampled"]]
    if len(heads) != 2 or any("errors" in h or "timeouts" in h for h in heads):
        fail("roll-ups of a run without errors: %r" % heads)
    if text.count("Errors and timeouts per hop: no errors (") != 1 or \
            re.search(r"errors: 0\b|timeouts: 0\b", text):
        fail("no errors not said once, or said per hop")
    if hop_label(text, "client -> osd.0 osd_write") != ["calls:", str(limited), "sampled,",
                                                         "est.", "unknown"]:
        fail("rate-limited hop: %r" % hop_label(text, "client -> osd.0 osd_write"))
    est = row(text, "Per server", "osd.0")[1]
    if est != ">=%d" % recorded:
        fail("osd.0 estimate %r, want >=%d" % (est, recorded))
    print("check_report --rate: %d recorded (%d forced, %d of unknown p): at least %d, unknown"
          " where alone ok" % (recorded, forced, limited, recorded))


def main():
    if sys.argv[1] == "--rate":
        return check_rate(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    report, zipkin, otlp, expect, facts, ratio, forced, report_json = sys.argv[1:9]
    ratio, forced = float(ratio), int(forced)
    text = open(report).read()
    lines = [l.split() for l in open(expect) if l.strip()]
    traces = {l[0] for l in lines}
    issued, errors, timeouts = 0, set(), set()
    for f in (l.split() for l in open(facts)):
        if f[0] == "issued":
            issued = int(f[1])
        elif f[0] == "error":
            errors.add(f[1])
        elif f[0] == "timeout":
            timeouts.add(f[1])
    if "hoptrace report: %d traces, %d spans" % (len(traces), len(lines)) not in text:
        fail("header wrong:\n" + text[:200])
    m = re.search(r"traces recorded: (\d+); estimated issued: (\d+) ", text)
    if m is None:
        fail("no 'traces recorded ... estimated issued' line")
    recorded, estimate = int(m.group(1)), int(m.group(2))
    sampled = recorded - forced
    want = forced + sampled / ratio
    tolerance = 4 * math.sqrt((issued - forced) * (1 - ratio) / ratio)
    print("issued %d, recorded %d, estimated %d (want %.0f), tolerance +-%.0f"
          % (issued, recorded, estimate, want, tolerance))
    if recorded != len(traces):
        fail("traces recorded %d, the workload recorded %d" % (recorded, len(traces)))
    if abs(estimate - want) > 0.5 or abs(estimate - issued) > tolerance:
        fail("estimated issued %d: want %.0f, and %d +- %.0f" % (estimate, want, issued, tolerance))
    for need in ("time window: ", "clock correction applied", "started ", "request net+queue "):
        if need not in text:
            fail("report lacks %r" % need)

    rows = spread(text)
    if sum(int(r[1]) for r in rows) != recorded or \
            abs(sum(int(r[3]) for r in rows) - estimate) > len(rows) / 2:
        fail("time spread %r: want %d traces, %d issued" % (rows, recorded, estimate))

    # sampling probabilities: p, traces, estimated issued
    if row(text, "Built from", "1")[:2] != [str(forced), str(forced)]:
        fail("p = 1 row: %r" % row(text, "Built from", "1"))
    if row(text, "Built from", "%g" % ratio)[:2] != [str(sampled), "%.0f" % (sampled / ratio)]:
        fail("p = %g row: %r" % (ratio, row(text, "Built from", "%g" % ratio)))

    # per operation: sampled est. est./s errors timeouts p50 p99 max [<100]
    read = op_row(text, "osd_read")
    write = op_row(text, "osd_write")
    if read[:2] != [str(forced), str(forced)] or read[-1] != "<100":
        fail("osd_read row (forced, small): %r" % read)
    if write[:2] != [str(sampled), "%.0f" % (sampled / ratio)] or write[-1] == "<100":
        fail("osd_write row: %r" % write)
    if int(read[3]) + int(write[3]) != len(errors - timeouts) or \
            int(read[4]) + int(write[4]) != len(timeouts):
        fail("per operation errors/timeouts %r %r, facts %d errors (%d without timeout), %d timeouts"
             % (read, write, len(errors), len(errors - timeouts), len(timeouts)))
    for server in ("osd.0", "osd.1", "osd.2"):
        row(text, "Per server", server)
    if int(row(text, "Per server", "osd.1")[3]) != len(errors):
        fail("osd.1 errors %r != %d" % (row(text, "Per server", "osd.1"), len(errors)))

    # per hop: calls errors timeouts, a row per operation the hop served
    section = "Errors and timeouts per hop"
    if hop_errors(text, section, "osd.0 -> osd.1 replica_write")[1:] != [len(errors), 0]:
        fail("replica errors: %r, want %d" % (
            hop_errors(text, section, "osd.0 -> osd.1 replica_write"), len(errors)))
    if hop_errors(text, section, "osd.0 -> ? osd_replicate") != [len(timeouts), 0, len(timeouts)]:
        fail("timeouts: %r, want %d" % (hop_errors(text, section, "osd.0 -> ? osd_replicate"),
                                        len(timeouts)))
    blocks = check_order(text, report_json)
    said = [sum(b[3] for b in blocks if b[1] == "osd.0 -> osd.1 replica_write"),
            sum(b[3] + b[4] for b in blocks if b[1] != "osd.0 -> osd.1 replica_write")]
    if said != [len(errors), 0]:
        fail("errors on the per-hop calls lines: %r, want [%d, 0]" % (said, len(errors)))
    # only the hops that failed are listed: the client's had none
    if not absent_row(text, section, "client -> osd.0 osd_write"):
        fail("client hop listed among the hops with errors")
    hop_lines = text.split("\nclient -> osd.0 osd_read\n", 1)[1].splitlines()[1:5]
    if not all(l.endswith("<100") for l in hop_lines):
        fail("small hop not flagged: %r" % hop_lines)
    flagged = text.split("\nclient -> osd.0 osd_write\n", 1)[1].splitlines()[1:5]
    if any(l.endswith("<100") for l in flagged):
        fail("big hop flagged: %r" % flagged)
    for hop, n, est in (("client -> osd.0 osd_read", forced, forced),
                        ("client -> osd.0 osd_write", sampled, sampled / ratio)):
        if hop_label(text, hop) != ["calls:", str(n), "sampled,", "est.", "%.0f" % est]:
            fail("%s: %r, want %d sampled, est. %.0f" % (hop, hop_label(text, hop), n, est))

    # the probability on every root span, and only there
    key = "hoptrace.sampling.probability"
    zp = [s["tags"].get(key) for s in json.load(open(zipkin)) if "parentId" not in s]
    zc = [s for s in json.load(open(zipkin)) if "parentId" in s and key in s["tags"]]
    ot = []
    for rs in json.load(open(otlp))["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                attrs = {a["key"]: a["value"].get("stringValue") for a in s.get("attributes", [])}
                if s.get("parentSpanId"):
                    zc += [s] if key in attrs else []
                else:
                    ot.append(attrs.get(key))
    for name, got in (("zipkin", zp), ("otlp", ot)):
        if sorted(got) != sorted(["1"] * forced + ["%g" % ratio] * sampled):
            fail("%s root probabilities: %d roots, %r..." % (name, len(got), sorted(set(map(str, got)))))
    if zc:
        fail("%d non-root spans carry %s" % (len(zc), key))
    print("check_report: estimate, probabilities, roll-ups, errors (%d), timeouts (%d),"
          " small groups, zipkin and otlp probabilities ok" % (len(errors), len(timeouts)))


if __name__ == "__main__":
    main()
