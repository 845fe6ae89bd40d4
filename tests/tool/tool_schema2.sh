#!/usr/bin/env bash
# Traces of the previous schema still read: a committed schema 2 trace
# (data/schema2/: the traced messenger's `span` and `span_x` events, ok
# and failed calls) exports to exactly the span sides it holds, with
# their parents, kinds, services, names and statuses (expect.txt, read
# from the trace with babeltrace2 when it was recorded); and span_k's
# older layout (data/span_k_v2/).
# usage: tool_schema2.sh HOPTRACE WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 work=$2 src=$3
data=$src/data/schema2
rm -rf "$work" && mkdir -p "$work"
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
for f in zipkin otlp; do
  timeout 60 "${tool[@]}" export --format $f -o "$work/$f.json" "$data/trace" 2> "$work/$f.log"
  cat "$work/$f.log"
  grep -q " 0 malformed" "$work/$f.log"
done
python3 - "$data/expect.txt" "$work/zipkin.json" "$work/otlp.json" <<'PY'
import json, sys
expect = {}
for line in open(sys.argv[1]):
    trace, span, parent, kind, service, name, status = line.split()
    expect[(trace, span)] = (parent, kind, service, name, int(status))
# The status rule (tools/hoptrace/output/semconv.h): a client span that
# failed is ERROR; a server span only for its own fault, not for the
# caller's (the codes below: an invalid request, not found, exists, not
# permitted, the caller went away: its 2 HT_ECONNRESET server spans).
CALLER = {-1, -5, -6, -7, -8, -9, -10, -11, -12, -13, -20, -24, -25, -26, -30, -15, -27}
NAMES = {-14: "ETIMEDOUT", -15: "ECONNRESET"}
def is_error(kind, status):
    return status != 0 and not (kind == "server" and status in CALLER)
got = {}
for s in json.load(open(sys.argv[2])):
    tags = s.get("tags", {})
    status = int(tags.get("hoptrace.status", "0"))
    if is_error(s["kind"].lower(), status) != ("error" in tags):
        sys.exit("schema 2: span %s: status %d but error tag %r" % (s["id"], status, tags.get("error")))
    if tags.get("error.type") != (NAMES[status] if status else None):
        sys.exit("schema 2: span %s: error %r, error.type %r" % (s["id"], tags.get("error"),
                                                                  tags.get("error.type")))
    got[(s["traceId"].rjust(32, "0"), s["id"])] = (
        s.get("parentId", "0" * 16), s["kind"].lower(), s["localEndpoint"]["serviceName"],
        s["name"], status)
if got != expect:
    bad = sorted(set(got.items()) ^ set(expect.items()))[:4]
    sys.exit("schema 2: %d spans exported, %d expected; differ: %r" % (len(got), len(expect), bad))
errors = {(s["traceId"], s["spanId"])
          for rs in json.load(open(sys.argv[3]))["resourceSpans"]
          for ss in rs["scopeSpans"] for s in ss["spans"] if s["status"].get("code") == 2}
want = {k for k, v in expect.items() if is_error(v[1], v[4])}
if errors != want:
    sys.exit("schema 2: OTLP errors %d, expected %d" % (len(errors), len(want)))
print("schema 2: %d span sides, %d failed, as recorded (%d with a status)" % (
    len(got), len(want), sum(1 for v in expect.values() if v[4] != 0)))
PY
# span_k as schema 3 first wrote it (data/span_k_v2/: key and value
# fields of their own, not packed in rec) still reads, its key-value too
timeout 60 "${tool[@]}" export --format zipkin -o "$work/span_k_v2.json" \
  "$src/data/span_k_v2/trace" 2> "$work/span_k_v2.log"
cat "$work/span_k_v2.log"
grep -q " 0 malformed" "$work/span_k_v2.log"
python3 - "$work/span_k_v2.json" <<'PY'
import json, sys
spans = {s["name"]: s.get("tags", {}) for s in json.load(open(sys.argv[1]))}
assert sorted(spans) == ["checksum", "osd_write", "replica_write", "req"], sorted(spans)
assert spans["osd_write"].get("bytes") == "-4096", spans["osd_write"]
print("span_k's older layout: osd_write's bytes = -4096, as recorded")
PY
echo "tool schema 2 test passed"
