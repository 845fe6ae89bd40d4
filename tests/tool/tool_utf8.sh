#!/usr/bin/env bash
# One hostile request must not poison the exports (issue 17, item 2): a
# real process records spans whose operation is invalid UTF-8 with
# terminal control bytes; every format's output must decode as strict
# UTF-8, the replacements be counted in the summary, and report's text
# carry no control byte.
# usage: tool_utf8.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
fail() { echo "FAIL: $*" >&2; exit 1; }
# invalid bytes, an escape sequence clearing the screen, a bell, a C1 CSI,
# a cut 3-byte sequence, and valid non-ASCII that must survive
op=$'\xff\xfe\x80op\x1b[2J\x07\xc2\x9b\xe2\x82 caf\xc3\xa9'
timeout 120 "$hoptrace" record -o "$work/trace" --filter '$ctx.procname == "trace_workload"' -- \
  "$workload" --traces 20 --fanout 2 --op "$op" 2> "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log" || { cat "$work/record.log"; fail "discards"; }

strict_utf8() { # FILE: decodes strictly, and holds U+FFFD and the valid café
  python3 - "$1" <<'PY'
import sys
text = open(sys.argv[1], 'rb').read().decode('utf-8')  # raises on any invalid byte
assert '\ufffd' in text, 'no replacement character'
assert 'caf\u00e9' in text, 'valid UTF-8 was altered'
assert '\x1b' not in text and '\x07' not in text and '\x9b' not in text, 'raw control'
PY
}
for fmt in zipkin otlp chrome; do
  "$hoptrace" export --format $fmt -o "$work/out.$fmt" "$work/trace" 2> "$work/err.$fmt"
  strict_utf8 "$work/out.$fmt" || fail "$fmt: not valid UTF-8"
  python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$work/out.$fmt"
  grep -Eq "^hoptrace: [1-9][0-9]* invalid UTF-8 sequences in the trace's strings written as U\+FFFD$" \
    "$work/err.$fmt" || fail "$fmt: no count in the summary: $(cat "$work/err.$fmt")"
  echo "$fmt: strict UTF-8, $(grep -o '[0-9]* invalid' "$work/err.$fmt") counted"
done
"$hoptrace" view -o "$work/page.html" "$work/trace" 2> "$work/err.html"
strict_utf8 "$work/page.html" || fail "view: not valid UTF-8"
grep -q "invalid UTF-8 sequences" "$work/err.html" || fail "view: no count: $(cat "$work/err.html")"
echo "view: strict UTF-8"

# report: the terminal sees escapes, never the peer's control bytes
"$hoptrace" report "$work/trace" > "$work/report.txt" 2> "$work/err.report"
python3 - "$work/report.txt" <<'PY'
import sys
text = open(sys.argv[1], 'rb').read().decode('utf-8')
bad = [hex(ord(c)) for c in text if (ord(c) < 0x20 and c != '\n') or 0x7f <= ord(c) <= 0x9f]
assert not bad, 'control characters in report: %s' % bad[:10]
assert '\\x1b[2J\\x07\\x9b' in text, 'the escapes are not shown'
assert '\ufffd\ufffd\ufffdop' in text and 'caf\u00e9' in text, text[:600]
PY
grep -q "invalid UTF-8 sequences" "$work/err.report" || fail "report: no count: $(cat "$work/err.report")"
echo "report: controls escaped, strict UTF-8"
echo "tool utf8 test passed"
