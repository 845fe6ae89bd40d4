#!/usr/bin/env bash
# Names in crafted traces (no LTTng session needed):
# - a desc written again with other text while a span side of it waits
#   for its peer (names_redef_trace.py): the side keeps the name of its
#   time (old_op), the side after it gets the new one, and the
#   redefinition is counted in the summary and the report;
# - a host longer than --max-string (the schema 2 trace's "vm", cut to
#   1 byte): its tables are found under the cut host, no side unnamed.
# usage: tool_names_crafted.sh HOPTRACE WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 work=$2 src=$3
rm -rf "$work" && mkdir -p "$work"
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }

python3 "$src/names_redef_trace.py" "$work/redef"
timeout 60 "${tool[@]}" export --format zipkin -o "$work/redef.json" "$work/redef" \
  2> "$work/redef.log"
cat "$work/redef.log"
grep -q "hoptrace: 1 name table entries (process/desc/peer) written again" "$work/redef.log"
! grep -q "unnamed" "$work/redef.log"
timeout 60 "${tool[@]}" report -o "$work/redef.txt" "$work/redef" 2> /dev/null
grep -q "name entries written again:       1 " "$work/redef.txt"
python3 - "$work/redef.json" <<'PY'
import json, sys
names = {s["traceId"][-2:]: s["name"] for s in json.load(open(sys.argv[1]))}
assert names == {"09": "old_op", "0a": "new_op"}, names
print("trace 9 named old_op (its time's), trace 10 new_op")
PY

rc=0 # 3: strings cut, the output not whole
timeout 60 "${tool[@]}" export --format zipkin --max-string 1 -o "$work/cut.json" \
  "$src/data/schema2/trace" 2> "$work/cut.log" || rc=$?
cat "$work/cut.log"
((rc == 3))
! grep -q "unnamed" "$work/cut.log"
python3 - "$work/cut.json" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
assert len(spans) == 172 and all(len(s["name"]) == 1 for s in spans), spans[:2]
print("%d spans named, each name cut to 1 byte" % len(spans))
PY
