#!/usr/bin/env python3
"""The soak test's checks (scripts/soak.sh), one subcommand each. Every
subcommand prints `key=value` figures on its last line and exits 1 when
its check fails (with the reason on a line starting with FAIL).

  soak_check.py accounts CLIENTS_TXT MIN_OPS
      every client: issued = answered + failed, nothing answered twice or
      never, no verification failure, no hang; and at least MIN_OPS ops
      answered in all (the cluster kept working)
  soak_check.py rss RSS_TXT MARGIN_PCT MARGIN_KB
      samples "t name pid VmRSS RssAnon RssShmem" (KiB): for each process
      instance with at least 8 samples, the second half's maximum RssAnon
      (private memory, where a leak shows) must not exceed the first half's
      by more than MARGIN_PCT % + MARGIN_KB. VmRSS is reported, not judged:
      it counts the LTTng ring buffers (shared memory) as they get touched
  soak_check.py traces ZIPKIN PIDS KILLED_PIDS CLIENTS_TXT DISCARDED
      every answered client request (sampling 1.0) has a complete trace:
      client span, one primary server span, every replica/pull request the
      primary made that was answered has its server span; the shortfall is
      explained only by spans of the OSDs killed on purpose (a request in
      flight there when it died) or by LTTng's discarded events

Never: read the whole Zipkin file into memory (a 10-minute soak writes
hundreds of MB); the tool writes a trace's spans together, one a line."""
import collections
import json
import sys


def fail(msg):
    print("FAIL " + msg)


def client_rows(path):
    rows = []
    for line in open(path):
        if line.startswith("SIM-CLIENT"):
            f = line.split()
            d = dict(kv.split("=", 1) for kv in f[2:])
            d["name"] = f[1]
            rows.append(d)
    return rows


def accounts(path, min_ops):
    rows = client_rows(path)
    ok = not not rows
    if not rows:
        fail("no SIM-CLIENT summary line")
    tot = collections.Counter()
    for r in rows:
        i, a, f = int(r["issued"]), int(r["answered"]), int(r["failed"])
        print("%s: issued %d = answered %d + failed %d (timeouts %s, connection %s, OSD errors "
              "%s, no live OSD %s); answered twice %s, never %s; verified %s, verify failures %s"
              % (r["name"], i, a, f, r["timeouts"], r["conn_errors"], r["peer_errors"],
                 r["no_osd"], r["duplicates"], r["unsettled"], r["verified"],
                 r["verify_failures"]))
        if i != a + f or r["duplicates"] != "0" or r["unsettled"] != "0":
            fail("%s: requests not accounted for exactly once" % r["name"])
            ok = False
        if r["verify_failures"] != "0":
            fail("%s: read-your-writes violated" % r["name"])
            ok = False
        if r["hung"] != "0":
            fail("%s: hung (answers missing at the deadline)" % r["name"])
            ok = False
        for k in ("issued", "answered", "failed", "verified", "verify_failures", "duplicates",
                  "unsettled", "writes", "reads", "stats", "deletes"):
            tot[k] += int(r[k])
    if tot["answered"] < min_ops:
        fail("only %d ops answered, want at least %d" % (tot["answered"], min_ops))
        ok = False
    print(" ".join("%s=%d" % (k, tot[k]) for k in ("issued", "answered", "failed", "duplicates",
                                                   "unsettled", "verified", "verify_failures")))
    return ok


def rss(path, margin_pct, margin_kb):
    """Samples "t name pid vmrss_kb rssanon_kb rssshmem_kb"; RssAnon is judged."""
    inst = collections.defaultdict(list)
    for line in open(path):
        f = line.split()
        if len(f) == 6:
            inst[(f[1], f[2])].append((float(f[0]), int(f[3]), int(f[4]), int(f[5])))
    ok, checked = True, 0
    tot = collections.Counter()
    for (name, pid), s in sorted(inst.items(), key=lambda kv: (kv[0][0], kv[1][0][0])):
        if len(s) < 8:
            continue  # a short-lived instance (killed OSD): too few samples to judge
        s.sort()
        half = len(s) // 2
        a, b = s[:half], s[half:]
        first, second = max(x[2] for x in a), max(x[2] for x in b)
        vm1, vm2 = max(x[1] for x in a), max(x[1] for x in b)
        bound = first * (1 + margin_pct / 100.0) + margin_kb
        checked += 1
        tot.update(anon1=first, anon2=second, vm1=vm1, vm2=vm2)
        flag = ""
        if second > bound:
            flag = "  <- grew"
            fail("%s (pid %s): RssAnon max %d KiB in the second half > %d KiB (first half %d "
                 "KiB + %g%% + %d KiB)" % (name, pid, second, bound, first, margin_pct, margin_kb))
            ok = False
        print("rss %-9s pid %-7s %3d samples over %4.0f s: RssAnon max %7d -> %7d KiB "
              "(VmRSS %7d -> %7d, of it shared %7d) %s" % (
                  name, pid, len(s), s[-1][0] - s[0][0], first, second, vm1, vm2,
                  max(x[3] for x in s), flag))
    if checked == 0:
        fail("no process was sampled long enough")
        ok = False
    print("rss_checked=%d rss_anon_first_kb=%d rss_anon_second_kb=%d vmrss_first_kb=%d "
          "vmrss_second_kb=%d" % (checked, tot["anon1"], tot["anon2"], tot["vm1"], tot["vm2"]))
    return ok


def spans_by_trace(path, pids):
    """Yields the list of spans of each trace (the export writes them together)."""
    cur, spans = None, []
    with open(path) as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            s = json.loads(line)
            if s.get("tags", {}).get("hoptrace.pid") not in pids:
                continue
            if s["traceId"] != cur:
                if spans:
                    yield spans
                cur, spans = s["traceId"], []
            spans.append(s)
    if spans:
        yield spans


def kind(s):
    return s.get("kind", "INTERNAL")


def finished(s):
    return "duration" in s


def check_tree(root, children):
    """None when the answered request's trace is whole, else why not."""
    if not finished(root):
        return "client span unfinished"
    servers = [c for c in children[root["id"]] if kind(c) == "SERVER"]
    if len(servers) != 1:
        return "%d server spans under the client span" % len(servers)
    primary = servers[0]
    if not finished(primary):
        return "primary span unfinished"
    for rc in children[primary["id"]]:
        if kind(rc) != "CLIENT" or rc["name"] not in ("replica_write", "replica_delete",
                                                        "osd_pull"):
            return "unexpected child of the primary: %s %s" % (kind(rc), rc["name"])
        if not finished(rc):
            return "replica request span unfinished"
        rs = children[rc["id"]]
        if "error" not in rc.get("tags", {}) and (len(rs) != 1 or not finished(rs[0])):
            return "answered %s without exactly one finished server span" % rc["name"]
    return None


def traces(zipkin, pid_path, killed_path, clients_txt, discarded):
    pids = set(open(pid_path).read().split())
    killed = set(open(killed_path).read().split())
    rows = client_rows(clients_txt)
    answered = collections.Counter()
    for r in rows:
        answered["osd_write"] += int(r["writes"])
        answered["osd_read"] += int(r["reads"])
        answered["osd_stat"] += int(r["stats"])
        answered["osd_delete"] += int(r["deletes"])
    seen = collections.Counter()
    n = collections.Counter()
    reasons = collections.Counter()
    for ss in spans_by_trace(zipkin, pids):
        roots = [s for s in ss if "parentId" not in s]
        client_roots = [s for s in roots if kind(s) == "CLIENT" and
                        s["localEndpoint"]["serviceName"].startswith("client.")]
        if not client_roots:
            n["other"] += 1  # OSD-rooted (connection checks of a restarted OSD)
            continue
        root = client_roots[0]
        if "error" in root.get("tags", {}):
            n["failed"] += 1  # the client counted it failed; no answer to check
            continue
        seen[root["name"]] += 1
        children = collections.defaultdict(list)
        for s in ss:
            if "parentId" in s:
                children[s["parentId"]].append(s)
        why = check_tree(root, children) if len(roots) == 1 else "%d roots" % len(roots)
        incomplete = root.get("tags", {}).get("hoptrace.incomplete")
        if why is None and incomplete is None:
            n["complete"] += 1
            continue
        # a request in flight at an OSD when it was killed: its span there never ends
        by_kill = any(s["tags"].get("hoptrace.pid") in killed and not finished(s) for s in ss)
        lossy = incomplete is not None and "discarded" in incomplete
        if by_kill and not lossy:
            n["cut_by_kill"] += 1
        elif lossy:
            n["lost_discard"] += 1
        else:
            n["broken"] += 1
            reasons[why or incomplete] += 1
    missing = sum(max(0, answered[k] - seen[k]) for k in answered)
    extra = sum(max(0, seen[k] - answered[k]) for k in answered)
    ok = True
    for k in sorted(answered):
        print("traces %-10s answered %7d  traced %7d" % (k, answered[k], seen[k]))
    if n["broken"]:
        fail("%d answered requests with a broken trace, none explained by a kill or a discard: %s"
             % (n["broken"], dict(reasons.most_common(5))))
        ok = False
    if extra:
        fail("%d more answered requests traced than the clients counted" % extra)
        ok = False
    if discarded == 0 and (missing or n["lost_discard"]):
        fail("%d answered requests without a trace, %d marked lossy, and LTTng discarded nothing"
             % (missing, n["lost_discard"]))
        ok = False
    if discarded > 0 and missing > discarded:
        fail("%d answered requests without a trace: more than the %d events LTTng discarded"
             % (missing, discarded))
        ok = False
    print("traces_complete=%d traces_cut_by_kill=%d traces_lossy=%d traces_missing=%d "
          "discarded_events=%d traces_failed=%d traces_broken=%d" % (
              n["complete"], n["cut_by_kill"], n["lost_discard"], missing, discarded,
              n["failed"], n["broken"]))
    return ok


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "accounts":
        ok = accounts(a[0], int(a[1]))
    elif cmd == "rss":
        ok = rss(a[0], float(a[1]), int(a[2]))
    elif cmd == "traces":
        ok = traces(a[0], a[1], a[2], a[3], int(a[4]))
    else:
        print("usage: see the top of " + sys.argv[0])
        sys.exit(2)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
