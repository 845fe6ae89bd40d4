#!/usr/bin/env bash
# `hoptrace export --to`: a real LTTng session of trace_workload pushed to
# a Node.js receiver on loopback that decodes with OpenTelemetry's own
# protobuf definitions (receiver/, installed here with `npm ci` from the
# committed lock file). Every span the tool read must arrive exactly once,
# equal to `hoptrace export --format otlp` of the same input
# (compare_push.py): protobuf and gzip by default, OTLP/JSON through the
# OTEL_EXPORTER_OTLP_* environment, Zipkin; then the failures: a 400
# (batch dropped, the server's message shown, exit 2 unless
# --allow-drops), a partial success (rejected spans counted), nobody
# listening (every span dropped, counted), a dead collector given up on.
# usage: ship_push.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
trap 'echo "ship_push: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
source "$src/setup.sh"
ship_setup "$hoptrace" "$provider" "$work" "$src"

# 150 traces of 6 spans: 900 spans, two batches (512 + 388)
ship_record "$workload" --traces 150 --fanout 2 --expect "$work/expect.txt"
timeout 120 "${tool[@]}" export --format otlp -q -o "$work/file.json" "$work/trace"
spans=$(wc -l < "$work/expect.txt")
[[ $spans -eq 900 ]] || { echo "workload recorded $spans spans, want 900" >&2; exit 1; }

pid=
start_receiver() { # name, receiver arguments...
  local name=$1; shift
  rm -f "$work/$name.port"
  node "$work/receiver/receiver.js" --port-file "$work/$name.port" --out "$work/$name.jsonl" \
    "$@" 2> "$work/$name.receiver.log" &
  pid=$!
  for _ in $(seq 300); do [[ -s $work/$name.port ]] && break; sleep 0.1; done
  [[ -s $work/$name.port ]] || { cat "$work/$name.receiver.log" >&2; exit 1; }
  port=$(cat "$work/$name.port")
}
stop_receiver() { kill "$pid"; wait "$pid" || true; pid=; }
trap '[[ -n $pid ]] && kill $pid' EXIT

# summary: "N spans read, N sent, N accepted, N rejected, N dropped" (sent:
# a server answered)
expect_summary() { # log, read, accepted, rejected, dropped
  grep -q "pushed to .*: $2 spans read, $2 sent, $3 accepted, $4 rejected, $5 dropped" "$1" ||
    { echo "summary wrong, want $2 read, $3 accepted, $4 rejected, $5 dropped:" >&2; cat "$1" >&2;
      exit 1; }
}

# protobuf, gzip, an explicit URL without path (/v1/traces added)
start_receiver proto
OTEL_EXPORTER_OTLP_HEADERS='x-test=a%20b,other=1' \
  timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$port" "$work/trace" 2> "$work/proto.log"
stop_receiver
expect_summary "$work/proto.log" 900 900 0 0
grep -q ", 2 batches" "$work/proto.log"
python3 "$src/compare_push.py" "$work/file.json" "$work/proto.jsonl" protobuf
# the header from the environment, its value percent-decoded
[[ $(grep -c '"header":"a b"' "$work/proto.jsonl") -eq 900 ]]

# OTLP/JSON, uncompressed, the endpoint from the environment, a header
# from a file only its owner may read (a secret on no command line)
printf '# the receiver records x-test\nx-test=from%%20file\n\n' > "$work/headers"
chmod 644 "$work/headers"
if "$hoptrace" export --to env --headers-file "$work/headers" "$work/trace" 2> "$work/hf.log"; then
  echo "a headers file others may read was accepted" >&2; exit 1
fi
grep -q "readable by others" "$work/hf.log" || { cat "$work/hf.log" >&2; exit 1; }
chmod 600 "$work/headers"
start_receiver json
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$port/" OTEL_EXPORTER_OTLP_COMPRESSION=none \
  timeout 120 "${tool[@]}" export --to env --to-format otlp-json --headers-file "$work/headers" \
  "$work/trace" 2> "$work/json.log"
stop_receiver
expect_summary "$work/json.log" 900 900 0 0
python3 "$src/compare_push.py" "$work/file.json" "$work/json.jsonl" json
[[ $(grep -c '"header":"from file"' "$work/json.jsonl") -eq 900 ]]

# Zipkin v2: every span once
start_receiver zipkin
timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$port" --to-format zipkin "$work/trace" \
  2> "$work/zipkin.log"
stop_receiver
expect_summary "$work/zipkin.log" 900 900 0 0
[[ $(cut -d, -f2,3 "$work/zipkin.jsonl" | sort -u | wc -l) -eq 900 ]]
# each span as the Zipkin file has it: ids, parent, name, kind, times, service, tags
timeout 120 "$hoptrace" export --format zipkin -q -o "$work/zipkin-file.json" "$work/trace"
python3 - "$work/zipkin-file.json" "$work/zipkin.jsonl" <<'PY'
import json, sys
key = lambda s: (s["traceId"], s.get("id") or s.get("spanId"))
want = {key(s): s for s in json.load(open(sys.argv[1]))}
got = {key(s): s for s in map(json.loads, open(sys.argv[2]))}
assert want.keys() == got.keys(), "zipkin: %d spans pushed, %d in the file" % (len(got), len(want))
for k, w in want.items():
    g = got[k]
    for a, b in (("parentId", "parentSpanId"), ("name", "name"), ("kind", "kind"),
                 ("timestamp", "timestamp"), ("duration", "duration"), ("tags", "tags")):
        assert (w.get(a) or "") == (g.get(b) or ""), "zipkin %s: %s %r != %r" % (k, a, w.get(a), g.get(b))
    assert w["localEndpoint"]["serviceName"] == g["service"], k
print("zipkin: %d spans as the file has them" % len(got))
PY

# 400 on the first batch: dropped, the server's words shown, exit 2
start_receiver bad --fail-first 1:400
rc=0
timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$port" "$work/trace" 2> "$work/bad.log" ||
  rc=$?
stop_receiver
[[ $rc -eq 2 ]] || { echo "400: exit $rc, want 2" >&2; exit 1; }
expect_summary "$work/bad.log" 900 388 0 512
grep -q "batch of 512 spans dropped: HTTP 400: test receiver refuses this batch" "$work/bad.log"
grep -q "512 spans not delivered" "$work/bad.log"
[[ $(wc -l < "$work/bad.jsonl") -eq 388 ]]
start_receiver allow --fail-first 1:400
timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$port" --allow-drops -q "$work/trace" \
  2> "$work/allow.log"
stop_receiver
expect_summary "$work/allow.log" 900 388 0 512

# 503 twice: retried (back-off), then accepted: every span once, 2 retries
start_receiver busy --fail-first 2:503
timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$port" "$work/trace" 2> "$work/busy.log"
stop_receiver
expect_summary "$work/busy.log" 900 900 0 0
grep -q ", 2 batches, 2 retries," "$work/busy.log"
[[ $(grep -o '"spanId":"[0-9a-f]*"' "$work/busy.jsonl" | sort -u | wc -l) -eq 900 ]]
[[ $(wc -l < "$work/busy.jsonl") -eq 900 ]]

# partial success: 5 rejected per batch, counted
start_receiver partial --reject 5
rc=0
timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$port" "$work/trace" 2> "$work/partial.log" ||
  rc=$?
stop_receiver
[[ $rc -eq 2 ]]
expect_summary "$work/partial.log" 900 890 10 0
grep -q "partly rejected (5): test rejects" "$work/partial.log"

# nobody listening (the last receiver's port, now closed): retried for 2 s,
# each batch, then all dropped
rc=0
start=$(date +%s)
timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$port" --retry-for 2 "$work/trace" \
  2> "$work/down.log" || rc=$?
[[ $rc -eq 2 ]]
(( $(date +%s) - start <= 10 )) || { echo "a dead receiver held the export too long" >&2; exit 1; }
grep -q "900 spans read, 0 sent, 0 accepted, 0 rejected, 900 dropped (0 refused by HTTP status, 0 retryable status, 900 connection" "$work/down.log"
grep -q "batch of 512 spans dropped after [0-9]* attempts" "$work/down.log"

# nobody listening, with every batch's retries at their default (60 s,
# ~47 s a batch by attempts: 40,000 spans were an hour): the collector is
# taken for dead after --give-up-after 3 s without an accepted post, the
# rest is dropped unsent, counted, and the run exits 2 even with
# --allow-drops (a dead collector is no drop the user accepted)
rc=0
start=$(date +%s)
timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$port" --give-up-after 3 --allow-drops \
  "$work/trace" 2> "$work/dead.log" || rc=$?
[[ $rc -eq 2 ]] || { echo "a dead collector: exit $rc, want 2" >&2; cat "$work/dead.log" >&2; exit 1; }
(( $(date +%s) - start <= 12 )) || { echo "a dead collector held the export $(( $(date +%s) - start )) s" >&2; exit 1; }
grep -q "no batch accepted by http://127.0.0.1:$port/v1/traces for 3 s: the collector is taken for dead" "$work/dead.log"
grep -q "900 spans read, 0 sent, 0 accepted, 0 rejected, 900 dropped (.* 900 collector dead)" "$work/dead.log"
grep -q "900 spans not delivered" "$work/dead.log"
# the option's bounds
rc=0; "$hoptrace" export --to "http://127.0.0.1:$port" --give-up-after -1 "$work/trace" 2> "$work/bad.log" || rc=$?
[[ $rc -eq 2 ]]
grep -q "give-up-after wants a whole number from 0 to 86400" "$work/bad.log"

# the OTLP file without a spill directory: still every span, said so
TMPDIR=$work/no-such-dir "$hoptrace" export --format otlp -q -o "$work/nospill.json" "$work/trace" \
  2> "$work/nospill.log"
grep -q "no spill file" "$work/nospill.log"
python3 "$src/compare_push.py" "$work/file.json" "$work/nospill.json" file

# misuse: refused by name, nothing sent
for bad in "--to ftp://127.0.0.1/x" "--to http://127.0.0.1:1 --format otlp" \
            "--to http://127.0.0.1:1 --to-format yaml" "--to-format zipkin"; do
  # shellcheck disable=SC2086
  if "$hoptrace" export $bad "$work/trace" 2> "$work/misuse.log"; then
    echo "export $bad succeeded" >&2; exit 1
  fi
  grep -q -- "--to" "$work/misuse.log"
done
echo "ship push test passed"
