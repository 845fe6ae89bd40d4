#!/usr/bin/env bash
# A peer's invalid UTF-8 pushed as OTLP protobuf, Zipkin and OTLP/JSON:
# the receiver gets valid UTF-8, each invalid byte as U+FFFD (protobufjs
# would decode raw bytes leniently, to fewer of them), and the push's
# summary counts the replacements, as many as the file export of the same
# format (the OTLP file for protobuf) counts for the same trace.
# usage: ship_utf8.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
trap 'echo "ship_utf8: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
source "$src/setup.sh"
ship_setup "$hoptrace" "$provider" "$work" "$src"

# the operation (span names and a tag): two invalid bytes, a cut
# sequence, and a valid é that must arrive as is; 10 traces of 6 spans
ship_record "$workload" --traces 10 --fanout 2 --op $'\xff\xfeop\xe2\x82 caf\xc3\xa9'

pid=
trap '[[ -n $pid ]] && kill $pid' EXIT
count() { grep -o '[0-9]* invalid UTF-8 sequences in the trace.s strings written as U+FFFD' "$1" |
  cut -d' ' -f1; }
for fmt in otlp zipkin otlp-json; do
  rm -f "$work/port"
  node "$work/receiver/receiver.js" --port-file "$work/port" --out "$work/$fmt.jsonl" \
    2> "$work/$fmt.receiver.log" &
  pid=$!
  for _ in $(seq 300); do [[ -s $work/port ]] && break; sleep 0.1; done
  [[ -s $work/port ]] || { cat "$work/$fmt.receiver.log" >&2; exit 1; }
  timeout 120 "${tool[@]}" export --to "http://127.0.0.1:$(cat "$work/port")" --to-format "$fmt" \
    "$work/trace" 2> "$work/$fmt.push.log"
  kill "$pid"; wait "$pid" || true; pid=
  grep -q ": 60 spans read, 60 sent, 60 accepted, 0 rejected, 0 dropped" "$work/$fmt.push.log" ||
    { cat "$work/$fmt.push.log" >&2; exit 1; }
  file_fmt=${fmt%-json}
  "$hoptrace" export --format "$file_fmt" -o "$work/file.$file_fmt" "$work/trace" 2> "$work/$fmt.file.log"
  pushed=$(count "$work/$fmt.push.log") written=$(count "$work/$fmt.file.log")
  [[ -n $pushed && $pushed -gt 0 && $pushed == "$written" ]] ||
    { echo "$fmt: push counts '$pushed', the file '$written'" >&2; cat "$work/$fmt.push.log" >&2; exit 1; }
  python3 - "$work/$fmt.jsonl" <<'PY'
import json, sys
spans = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]  # strict UTF-8
names = [s["name"] for s in spans if "op" in s["name"]]
assert names and all(n == "\ufffd\ufffdop\ufffd\ufffd caf\u00e9" for n in names), names[:2]
PY
  echo "$fmt: 60 spans accepted, $pushed invalid UTF-8 sequences replaced and counted (the file: $written)"
done
echo "ship utf8 test passed"
