#!/usr/bin/env python3
"""Every call leaves a span, checked on a simulator run where
an OSD crashed mid-run and the clients fail over (--failover), from the
hoptrace tool's Zipkin export of the real LTTng trace:

 - every failed replica send of a sampled write, as the surviving OSDs
   counted it themselves ("N replica sends failed (M of sampled writes)"),
   is an ERROR replica span of that OSD: exactly M of them;
 - every sampled write's primary span has one replica span per replica it
   planned (tag sim.replicas), and one acknowledged with fewer
   (sim.replicas_acked) has an ERROR replica span: 0 sampled writes with
   fewer replica spans than planned, 0 degraded with no error span;
 - failed over calls: a client call span (INTERNAL) with one CLIENT child
   per attempt, the failed ones ERROR with the peer tried (remote
   endpoint), the answered one last with its SERVER span; at least one,
   and as many as the clients counted (failed_over=);
 - the handler's key-values (sim.*) on its own span, byte-exact in Zipkin's
   tags and OTLP's attributes alike.

usage: check_failed_calls.py ZIPKIN LOGDIR CLIENTS_TXT OTLP"""
import collections
import glob
import json
import re
import sys


def fail(msg):
    print("check_failed_calls: FAIL: " + msg)
    sys.exit(1)


def main():
    zipkin, logdir, clients_txt = sys.argv[1:4]  # (and OTLP: sys.argv[4])
    spans = json.load(open(zipkin))
    sampled_failed = {}
    for path in glob.glob(logdir + "/osd.*.log"):
        name = path.rsplit("/", 1)[1][:-4]
        for line in open(path):
            m = re.search(r"stopped: .* (\d+) replica sends failed \((\d+) of sampled writes\)", line)
            if m:
                sampled_failed[name] = int(m.group(2))
    if not sampled_failed:
        fail("no OSD stopped cleanly (no counts)")
    by_id = {s["id"]: s for s in spans}
    children = collections.defaultdict(list)
    for s in spans:
        if "parentId" in s:
            children[s["parentId"]].append(s)
    service = lambda s: s.get("localEndpoint", {}).get("serviceName", "")
    err = lambda s: "error" in s.get("tags", {})

    # 1. the OSDs' own counts against the ERROR replica spans they recorded
    error_spans = collections.Counter(
        service(s) for s in spans
        if s.get("kind") == "CLIENT" and s["name"] in ("replica_write", "replica_delete")
        and err(s))
    for osd, n in sorted(sampled_failed.items()):
        print("%s: %d failed replica sends of sampled writes, %d ERROR replica spans"
              % (osd, n, error_spans[osd]))
        if error_spans[osd] != n:
            fail("%s counted %d failed replica sends of sampled writes, its trace holds %d "
                 "ERROR replica spans" % (osd, n, error_spans[osd]))
    if sum(sampled_failed.values()) == 0:
        fail("no replica send failed: the crash was not seen")

    # 2. every primary span: its planned replicas, and an error when degraded
    planned_short = degraded_silent = degraded = writes = 0
    for s in spans:
        if s.get("kind") != "SERVER" or s["name"] not in ("osd_write", "osd_delete"):
            continue
        if service(s) not in sampled_failed:
            continue  # the crashed OSD's: cut short
        tags = s.get("tags", {})
        if "sim.replicas" not in tags or "sim.replicas_acked" not in tags:
            continue  # refused (not in the set): no replicas planned
        writes += 1
        want, acked = int(tags["sim.replicas"]), int(tags["sim.replicas_acked"])
        reps = [c for c in children[s["id"]] if c["name"] in ("replica_write", "replica_delete")]
        if len(reps) < want:
            planned_short += 1
        if acked < want:
            degraded += 1
            if not any(err(c) for c in reps):
                degraded_silent += 1
    print("sampled writes %d, degraded %d, with fewer replica spans than planned %d, "
          "degraded without an error span %d" % (writes, degraded, planned_short, degraded_silent))
    if writes == 0:
        fail("no sampled write with its replica tags")
    if planned_short or degraded_silent:
        fail("writes whose failed replicas are invisible")

    # 3. failed over calls: attempts under one call span
    counted = 0
    for line in open(clients_txt):
        m = re.search(r"failed_over=(\d+)", line)
        counted += int(m.group(1)) if m else 0
    shown = 0
    for s in spans:
        if s.get("kind", "INTERNAL") != "INTERNAL" or not service(s).startswith("client."):
            continue
        attempts = sorted((c for c in children[s["id"]] if c.get("kind") == "CLIENT"),
                          key=lambda c: c["timestamp"])
        if len(attempts) < 2 or err(s):
            continue
        *failed, last = attempts
        for a in failed:
            if not err(a) or "remoteEndpoint" not in a:
                fail("a failed attempt without its error or its peer: %s" % json.dumps(a))
        if err(last) or not any(c.get("kind") == "SERVER" for c in children[last["id"]]):
            fail("the answered attempt has no server span: %s" % json.dumps(last))
        shown += 1
    print("calls answered after failing over: %d counted by the clients, %d traced"
          % (counted, shown))
    if counted == 0:
        fail("no call failed over")
    if shown != counted:
        fail("%d calls failed over, %d traced as attempts under one call" % (counted, shown))
    # 4. the handler's key-values, the same bytes in both exports
    otlp = {}
    for rs in json.load(open(sys.argv[4]))["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                otlp[sp["spanId"]] = {a["key"]: a["value"] for a in sp.get("attributes", [])}
    checked = 0
    for s in spans:
        tags = s.get("tags", {})
        if "sim.object" not in tags or s.get("kind") != "SERVER":
            continue
        if not re.fullmatch(r"c\d+\.obj\.\d+", tags["sim.object"]) or \
                not re.fullmatch(r"1\.[0-9a-f]+", tags["sim.pg"]):
            fail("a primary's key-values are not what it wrote: %s" % tags)
        attrs = otlp.get(s["id"])
        if attrs is None:
            fail("span %s is not in the OTLP export" % s["id"])
        for k in ("sim.object", "sim.pg"):
            if attrs.get(k) != {"stringValue": tags[k]}:
                fail("%s: Zipkin %r, OTLP %r" % (k, tags[k], attrs.get(k)))
        for k in ("sim.size", "sim.replicas", "sim.replicas_acked"):
            if k in tags and attrs.get(k) != {"intValue": tags[k]}:
                fail("%s: Zipkin %r, OTLP %r" % (k, tags[k], attrs.get(k)))
        checked += 1
    print("handler key-values on %d primary spans, the same in Zipkin and OTLP" % checked)
    if checked == 0:
        fail("no primary span with its key-values")
    print("check_failed_calls: OK")


main()
