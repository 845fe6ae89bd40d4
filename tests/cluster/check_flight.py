#!/usr/bin/env python3
"""check_flight.py OUT RATE: the flight recorder across simulated hosts held
against the simulator's own log of what went wrong (OUT/truth.txt, written
by the clients and OSDs: sim_truth.h), not against anything the tool says.

  - every trace the log names (a slow or failed op or attempt, a failed
    replica send, a write slowed on purpose) is among the captured traces
    the tool exported (OUT/zipkin.json, captured only);
  - at least 99 % of them complete on every host: no span marked
    hoptrace.incomplete, and every client span that was answered (no
    error) has its server span;
  - each host's recorder counts add up (triggers_fired = snapshots +
    coalesced + dropped), none dropped, and its snapshots started at most
    RATE a second;
  - the live follower of the relay's snapshots (OUT/zipkin-follow.json,
    `export --follow` during the run) wrote the same spans as the export
    read after the run: each captured trace once, none of its spans lost
    for having been in an earlier snapshot only.
"""
import collections
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import snapshot_rate  # noqa: E402

out, rate = sys.argv[1], float(sys.argv[2])
fail = []

truth = [line.split() for line in open(os.path.join(out, "truth.txt")) if line.strip()]
kinds = collections.Counter(t[0] for t in truth)
named = {}
for kind, trace, who, _ in truth:
    if trace != "-":
        named.setdefault(trace.lower(), set()).add(f"{kind}@{who}")
unnamed = sum(1 for t in truth if t[1] == "-")
print(f"truth: {len(truth)} lines {dict(kinds)}; {len(named)} traces named, {unnamed} without a trace id")
if not named:
    fail.append("the simulator logged nothing that went wrong: the run proves nothing")

spans = json.load(open(os.path.join(out, "zipkin.json")))
traces = collections.defaultdict(list)
for s in spans:
    traces[s["traceId"].lower().rjust(32, "0")].append(s)


def incomplete(ss):
    """Why the trace is not whole on every host, or None."""
    for s in ss:
        if "hoptrace.incomplete" in s.get("tags", {}):
            return "marked: " + s["tags"]["hoptrace.incomplete"]
    servers = {s.get("parentId") for s in ss if s.get("kind") == "SERVER"}
    for s in ss:
        tags = s.get("tags", {})
        if s.get("kind") == "CLIENT" and "error" not in tags and s["id"] not in servers:
            return f"{s.get('localEndpoint', {}).get('serviceName')} called {s.get('name')}: no server span"
    return None


captured = [t for t in named if t in traces]
complete = [t for t in captured if incomplete(traces[t]) is None]
print(f"captured {len(captured)} of {len(named)}; complete on every host {len(complete)} of {len(captured)}"
      f" ({100.0 * len(complete) / max(1, len(named)):.2f} % of the named)")
missing = [t for t in named if t not in traces]
for t in missing[:10]:
    print(f"  not captured: {t} ({', '.join(sorted(named[t]))})")
for t in [t for t in captured if t not in complete][:10]:
    print(f"  partial: {t} ({', '.join(sorted(named[t]))}): {incomplete(traces[t])}")
if missing:
    fail.append(f"{len(missing)} traces the simulator logged were not captured")
if len(complete) < 0.99 * len(named):
    fail.append(f"only {len(complete)} of {len(named)} complete on every host (< 99 %)")
why = collections.Counter()
for t in captured:
    for s in traces[t]:
        r = s.get("tags", {}).get("hoptrace.capture.reason")
        if r:
            why[r] += 1
print(f"captured traces by reason: {dict(why)}")

hosts = sorted(glob.glob(os.path.join(out, "flight", "h*", "capture.json")))
if not hosts:
    fail.append("no host's capture.json")
for path in hosts:
    c = json.load(open(path))
    host = os.path.basename(os.path.dirname(path))
    fired, snaps, coal, drop = c["triggers_fired"], c["snapshots"], c["coalesced"], c["dropped"]
    print(f"{host}: {fired} triggers, {snaps} snapshots, {coal} coalesced, {c['rate_limited']} rate-limited,"
          f" {drop} dropped, p99 {c['trigger_to_snapshot_ms']['p99']} ms")
    if fired != snaps + coal + drop:
        fail.append(f"{host}: triggers_fired {fired} != snapshots {snaps} + coalesced {coal} + dropped {drop}")
    if drop or c.get("snapshot_failures", 0):
        fail.append(f"{host}: {drop} triggers dropped, {c.get('snapshot_failures', 0)} snapshots failed")
    listed = c.get("snapshot_list", [])
    if len(listed) != snaps:
        fail.append(f"{host}: {len(listed)} snapshots listed, {snaps} counted")
    why = snapshot_rate.too_close(listed, rate)
    if why:
        fail.append(f"{host}: {why}")

def span_key(s):
    return (s["traceId"].lower().rjust(32, "0"), s["id"], s.get("kind", ""),
            s.get("localEndpoint", {}).get("serviceName", ""))


follow_path = os.path.join(out, "zipkin-follow.json")
if not os.path.exists(follow_path):
    fail.append("no zipkin-follow.json: the follower wrote nothing")
else:
    followed = collections.Counter(map(span_key, json.load(open(follow_path))))
    after = collections.Counter(map(span_key, spans))
    twice = [k for k, n in followed.items() if n > 1]
    lost, extra = after - followed, (followed - after)
    print(f"follow: {sum(followed.values())} spans live, {len(spans)} after the run;"
          f" {sum(lost.values())} lost live, {sum(extra.values())} only live, {len(twice)} written twice")
    for k in list(lost)[:5]:
        print(f"  lost live: trace {k[0]} span {k[1]} {k[2]} of {k[3]}")
    if lost or extra or twice:
        fail.append(f"the live follower and the export after the run differ ({sum(lost.values())} spans lost live,"
                    f" {sum(extra.values())} only live, {len(twice)} twice)")

if fail:
    print("check_flight: FAIL: " + "; ".join(fail))
    sys.exit(1)
print("check_flight: ok")
