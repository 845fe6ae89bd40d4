"""Checks what the test receiver got: the Node.js client's spans (its own
OTLP/HTTP exporter) and the cluster's (hoptrace export --follow --to), against the
client's log of its requests and the probes' log.

For every sampled request: one trace whose only root is the Node.js client
span, the gateway's server span (the span its traceresponse names) its
child, the gateway's OSD request below that and the OSDs' spans below it.
For every unsampled one: no span of its trace at all. Every cluster span
belongs to one of those traces or to a probe's new root.

Spans of processes other than the Node.js client and this test's (PIDS:
one pid a line) are set aside: under valgrind the session keeps every
"memcheck-amd64-" process of the host.

usage: check.py RECEIVED.jsonl PROBES.jsonl PIDS REQUESTS.jsonl..."""
import collections
import json
import sys

received = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
probes = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
pids = set(open(sys.argv[3]).read().split())
reqs = [json.loads(l) for p in sys.argv[4:] for l in open(p) if l.strip()]
ours = lambda s: s["resource"].get("service.name") == "node-client" or \
    s["resource"].get("process.pid") in pids
spans = [s for s in received if ours(s)]
by_trace = collections.defaultdict(list)
for s in spans:
    by_trace[s["traceId"]].append(s)
ids = collections.Counter((s["traceId"], s["spanId"]) for s in spans)
dups = [k for k, n in ids.items() if n > 1]
assert not dups, "spans received twice: %s" % dups[:3]
service = lambda s: s["resource"].get("service.name", "")
OP = {"PUT": "osd_write", "GET": "osd_read", "DELETE": "osd_delete"}
explained = set()
errors = []


def tree_below(trace, top):
    """The spans of trace under span `top` (top excluded); errors when a
    span's parent is not in the trace."""
    by_id = {s["spanId"]: s for s in trace}
    below = []
    for s in trace:
        p, seen = s, set()
        while p["parentSpanId"] and p["spanId"] not in seen:
            seen.add(p["spanId"])
            if p["parentSpanId"] not in by_id:
                errors.append("trace %s: span %s (%s) has a parent not received"
                              % (s["traceId"], s["spanId"], s["name"]))
                break
            p = by_id[p["parentSpanId"]]
            if p["spanId"] == top["spanId"]:
                below.append(s)
                break
    return below


def check_cluster(what, trace, gw, method):
    below = tree_below(trace, gw)
    names = {s["name"] for s in below}
    osds = [s for s in below if service(s).startswith("osd.")]
    want_osds = 1 if method == "GET" else 3  # a primary, and two replicas
    if OP[method] not in names or len(osds) < want_osds:
        errors.append("%s: below the gateway span %s, want %s and >= %d OSD spans"
                      % (what, sorted(names), OP[method], want_osds))
    if len(below) + 1 + (gw["parentSpanId"] != "") != len(trace):
        errors.append("%s: %d spans in its trace are not under the gateway span"
                      % (what, len(trace) - len(below) - 1))


sampled = [r for r in reqs if r["sampled"]]
stored = {}
for r in reqs:
    what = "request %s (%s %s, %s)" % (r["key"], r["method"], r["path"], r["propagator"])
    # per object: PUT 200, GET 200 (what was put), DELETE 204, GET 404
    if r["method"] == "PUT":
        stored[r["path"]] = r["sent"]
    want = {"PUT": 200, "DELETE": 204}.get(r["method"], 200 if r["path"] in stored else 404)
    if r["status"] != want or (want == 200 and r["method"] == "GET" and r["body"] != stored[r["path"]]):
        errors.append("%s: HTTP %d, want %d" % (what, r["status"], want))
    if r["method"] == "DELETE":
        stored.pop(r["path"], None)
    trace = by_trace.get(r["traceId"], [])
    explained.add(r["traceId"])
    if not r["sampled"]:
        if r["recorded"] or trace or not r["traceresponse"].endswith("-00"):
            errors.append("%s: unsampled, yet %d spans received (traceresponse %s)"
                          % (what, len(trace), r["traceresponse"]))
        continue
    client = [s for s in trace if s["spanId"] == r["spanId"]]
    tr = r["traceresponse"].split("-")
    gw = [s for s in trace if len(tr) == 4 and s["spanId"] == tr[2]]
    if len(client) != 1 or client[0]["kind"] != 3 or service(client[0]) != "node-client" \
            or client[0]["parentSpanId"] != "":
        errors.append("%s: its Node.js client span is not received as one root CLIENT span" % what)
        continue
    if tr[1] != r["traceId"] or len(gw) != 1:
        errors.append("%s: traceresponse %s names no received span of trace %s"
                      % (what, r["traceresponse"], r["traceId"]))
        continue
    g = gw[0]
    if g["parentSpanId"] != r["spanId"] or g["kind"] != 2 or g["name"] != r["method"] \
            or service(g) != "gateway.0":
        errors.append("%s: gateway span %s/%s kind %d parent %s, want SERVER child of %s"
                      % (what, service(g), g["name"], g["kind"], g["parentSpanId"], r["spanId"]))
    roots = [s for s in trace if s["parentSpanId"] == ""]
    if len(roots) != 1:
        errors.append("%s: %d roots in its trace, want 1 (the client span)" % (what, len(roots)))
    check_cluster(what, trace, g, r["method"])

for p in probes:
    if not p["traceresponse"]:  # closed unanswered: its span continues what it sent
        sent = p["sent"].split("-")
        trace = by_trace.get(sent[1], [])
        explained.add(sent[1])
        # the caller's fault (a body over the limit): by the semantic
        # conventions a server span's status stays UNSET; error.type says why
        if len(trace) != 1 or trace[0]["parentSpanId"] != sent[2] or \
                not trace[0]["attributes"].get("error.type"):
            errors.append("probe %s: want one gateway span with an error.type, child of %s, got "
                          "%d spans" % (p["name"], p["sent"], len(trace)))
        continue
    tr = p["traceresponse"].split("-")
    what = "probe %s" % p["name"]
    trace = by_trace.get(tr[1] if len(tr) == 4 else "", [])
    explained.add(tr[1] if len(tr) == 4 else "")
    gw = [s for s in trace if s["spanId"] == tr[2]]
    if len(gw) != 1 or gw[0]["parentSpanId"] != "" or (p["sent"] and tr[1] in p["sent"].lower()) \
            or gw[0]["attributes"].get("http.response.status_code") != str(p["status"]):
        errors.append("%s: want a new recorded root named by traceresponse %s, status %d"
                      % (what, p["traceresponse"], p["status"]))
    elif p["osds"]:
        check_cluster(what, trace, gw[0], "GET")
    elif len(trace) != 1:
        errors.append("%s: answered at the gateway, yet %d spans in its trace" % (what, len(trace)))

stray = [s for s in spans if s["traceId"] not in explained]
if stray:
    errors.append("%d spans of no request's trace, e.g. %s %s" % (len(stray), service(stray[0]),
                                                                  stray[0]["name"]))
if errors:
    print("\n".join(errors[:20]), file=sys.stderr)
    sys.exit(1)
cluster = sum(1 for s in spans if service(s) != "node-client")
print("gateway_otel: %d requests (%d sampled, %d unsampled), %d probes: %d spans received "
      "(%d from the Node.js SDK, %d from hoptrace export --follow --to, %d of other processes set "
      "aside), every sampled request one trace client -> gateway -> OSDs, nothing of the "
      "unsampled ones" % (len(reqs), len(sampled), len(reqs) - len(sampled), len(probes),
                          len(spans), len(spans) - cluster, cluster, len(received) - len(spans)))
