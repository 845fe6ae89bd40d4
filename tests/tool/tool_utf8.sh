#!/usr/bin/env bash
# One hostile request must not poison the exports: a
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
# scripts/valgrind.sh runs every reading hoptrace under valgrind (record is not checked)
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
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
  "${tool[@]}" export --format $fmt -o "$work/out.$fmt" "$work/trace" 2> "$work/err.$fmt"
  strict_utf8 "$work/out.$fmt" || fail "$fmt: not valid UTF-8"
  python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$work/out.$fmt"
  grep -Eq "^hoptrace: [1-9][0-9]* invalid UTF-8 sequences in the trace's strings written as U\+FFFD$" \
    "$work/err.$fmt" || fail "$fmt: no count in the summary: $(cat "$work/err.$fmt")"
  echo "$fmt: strict UTF-8, $(grep -o '[0-9]* invalid' "$work/err.$fmt") counted"
done
"${tool[@]}" view -o "$work/page.html" "$work/trace" 2> "$work/err.html"
strict_utf8 "$work/page.html" || fail "view: not valid UTF-8"
grep -q "invalid UTF-8 sequences" "$work/err.html" || fail "view: no count: $(cat "$work/err.html")"
echo "view: strict UTF-8"

# report: the terminal sees escapes, never the peer's control bytes
"${tool[@]}" report "$work/trace" > "$work/report.txt" 2> "$work/err.report"
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
# a host name is a trace's string too: a second copy of the trace whose
# metadata names its host with an escape byte (same length: the metadata
# packets stay valid); report's tables and the stderr summary escape it
mkdir "$work/hosts" && cp -r "$work/trace" "$work/hosts/a" && cp -r "$work/trace" "$work/hosts/b"
python3 - "$(find "$work/hosts/b" -name metadata)" <<'PY'
import re, sys
p = sys.argv[1]
b = open(p, 'rb').read()
m = re.search(rb'hostname = "([^"]+)"', b)
evil = (b'\x1b[2J\x07' + b'h' * 64)[:len(m.group(1))]
open(p, 'wb').write(b[:m.start(1)] + evil + b[m.end(1):])
PY
"${tool[@]}" report "$work/hosts" > "$work/hosts.txt" 2> "$work/hosts.err"
grep -q "Per host" "$work/hosts.txt" || fail "two hosts expected: $(cat "$work/hosts.err")"
grep -q 'host \\x1b' "$work/hosts.txt" || fail "the host name is not shown escaped"
for f in "$work/hosts.txt" "$work/hosts.err"; do
  python3 -c 'import sys; t = open(sys.argv[1], "rb").read().decode("utf-8"); assert "\x1b" not in t and "\x07" not in t' "$f" ||
    fail "$f: a raw control byte of a host name"
done
echo "host names: escaped in report and on stderr"
echo "tool utf8 test passed"
