#!/usr/bin/env bash
# Overlapping flight-recorder snapshots written by hand
# (snapshot_copies.py): each event read once however the copies come.
#   same-time 5000: 5000 span sides at one time in both snapshots (more
#     than the 4096 a time once remembered): 5000 spans, 5000 copies
#     skipped, exit 0; with --max-open-spans 1000 the events forgotten
#     are counted and the run exits 3 (not whole), never silently
#   back: the stream's time goes back (2000 then 1000 ns), so a copy
#     comes after the other snapshot's later event: 2 spans, 2 copies
#   renamed: 100 sides, the snapshot directories renamed: read twice
#     (flagged, with a hint), each once with --snapshots
# usage: tool_snapshot_copies.sh HOPTRACE WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 work=$2 src=$3
rm -rf "$work" && mkdir -p "$work"
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }

# export NAME WANT_RC [OPTION...]: the snapshots in $work/NAME
export_spans() {
  local name=$1 want_rc=$2 rc=0
  shift 2
  timeout 120 "${tool[@]}" export --all --format zipkin "$@" -o "$work/$name.json" \
    "$work/$name" 2> "$work/$name.log" || rc=$?
  cat "$work/$name.log"
  [[ $rc == "$want_rc" ]] || { echo "$name: exit $rc, want $want_rc" >&2; exit 1; }
}
# spans NAME N COPIES: N spans exported, each id once; COPIES skipped
spans() {
  python3 - "$work/$1.json" "$2" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
ids = {s['id'] for s in spans}
want = int(sys.argv[2])
if len(spans) != want or len(ids) != want:
    sys.exit('%s: %d spans, %d ids, want %d' % (sys.argv[1], len(spans), len(ids), want))
PY
  grep -q "snapshots: $3 copies of events" "$work/$1.log" ||
    { echo "$1: not $3 copies skipped" >&2; exit 1; }
  if grep -q "share their span id" "$work/$1.log"; then
    echo "$1: a span read twice" >&2; exit 1
  fi
}

python3 "$src/snapshot_copies.py" "$work/same" same-time 5000
export_spans same 0
spans same 5000 5000
export_spans same 3 --max-open-spans 1000
grep -q "forgotten past 1000 remembered (--max-open-spans)" "$work/same.log"

python3 "$src/snapshot_copies.py" "$work/back" back
export_spans back 0
spans back 2 2

# the same snapshots copied under other names: read twice (each span
# flagged, the hint given), once with --snapshots
python3 "$src/snapshot_copies.py" "$work/renamed" same-time 100
for d in "$work"/renamed/snapshot-*; do mv "$d" "$work/renamed/copy-${d##*-}"; done
export_spans renamed 0
grep -q "share their span id.*--snapshots" "$work/renamed.log" ||
  { echo "renamed: no hint of --snapshots" >&2; exit 1; }
export_spans renamed 0 --snapshots
spans renamed 100 100
echo "tool_snapshot_copies: ok"
