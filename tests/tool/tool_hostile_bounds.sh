#!/usr/bin/env bash
# The tool bounded by default against a hostile traced process
# (hostile_events: its own provider `hoptrace` writing raw events): its
# peak RSS stays within the default limit with a margin, what it dropped
# is counted, the run exits 3 when the output is not whole (0 when it
# is), every output valid.
#   desc_flood: 160,000 desc events of 1000-byte names for one span
#   traces:     1e6 single-span traces as fast as it can (report only)
#   strings:    100 spans, each with a 1 MiB name and a 1 MiB tag
# usage: tool_hostile_bounds.sh HOPTRACE WORKDIR HOSTILE ATTACK
set -euo pipefail
hoptrace=$1 work=$2 hostile=$3 attack=$4
rm -rf "$work" && mkdir -p "$work"
case $attack in
  desc_flood) args=(--desc-flood 160000 --bytes 1000) max_rss_mib=140 want_rc=3
    outputs=(report zipkin) record=() ;;
  strings) # each 2 MiB trace written once the consumer has caught up
    # (its ring: 8 sub-buffers of 4 MiB), as the exact counts need them all
    args=(--huge 100 --bytes 1048576 --drain "$work/trace" --ring $((32 << 20)))
    max_rss_mib=100 want_rc=3 outputs=(view zipkin) record=(--subbuf-size 4M --num-subbuf 8) ;;
  traces) args=(--traces 1000000) max_rss_mib=300 want_rc=0 outputs=(report)
    record=(--subbuf-size 8M --num-subbuf 8) ;;
  *) echo "unknown attack $attack" >&2; exit 2 ;;
esac
timeout 240 "$hoptrace" record -o "$work/trace" "${record[@]}" -- "$hostile" "${args[@]}" \
  2> "$work/record.log"
cat "$work/record.log"
# (LTTng may discard some under the flood: the attack need not be whole,
# but for strings, whose counts are exact)
if [[ $attack == strings ]] && ! grep -q " 0 discarded by LTTng" "$work/record.log"; then
  echo "strings: LTTng discarded events: exact counts cannot be checked" >&2; exit 1
fi

# the tool's peak RSS (getrusage of the child), its exit status
run() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
print("rc %d maxrss_kib %d" % (rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
PY
}
asan=0
ldd "$hoptrace" | grep -q libasan && asan=1
for what in "${outputs[@]}"; do
  if [[ $what == report ]]; then
    cmd=("$hoptrace" report -o "$work/report.txt" "$work/trace")
  elif [[ $what == view ]]; then
    cmd=("$hoptrace" view -o "$work/waterfall.html" "$work/trace")
  else
    cmd=("$hoptrace" export --format zipkin -o "$work/zipkin.json" "$work/trace")
  fi
  run timeout 240 "${cmd[@]}" > "$work/$what.rss" 2> "$work/$what.log"
  cat "$work/$what.log" "$work/$what.rss"
  read -r _ rc _ kib < "$work/$what.rss"
  [[ $rc == "$want_rc" ]] || { echo "$what: exit $rc, not $want_rc" >&2; exit 1; }
  if ((asan)); then
    echo "$what: peak RSS $((kib / 1024)) MiB (not checked: ASan's shadow memory)"
  elif ((kib > max_rss_mib * 1024)); then
    echo "$what: peak RSS $((kib / 1024)) MiB, over $max_rss_mib MiB" >&2; exit 1
  fi
done
[[ ! -e $work/zipkin.json ]] || python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/zipkin.json"
case $attack in
  desc_flood)
    grep -Eq "hoptrace: [1-9][0-9]* name table entries \(desc/peer/process\) not kept" \
      "$work/zipkin.log"
    grep -Eq "name table entries not kept: +[1-9]" "$work/report.txt" ;;
  traces) # every trace complete: written early, whole, none marked
    grep -Eq "hoptrace: [1-9][0-9]* traces written before their grace ended \(0 of them" \
      "$work/report.log"
    grep -Eq "traces written before their grace: [1-9]" "$work/report.txt"
    grep -q "1000000 traces (0 incomplete" "$work/report.log" ;;
  strings) # every string cut to 64 KiB, each trace's root says so
    grep -q "hoptrace: 200 strings cut to 65536 bytes" "$work/view.log"
    size=$(stat -c %s "$work/waterfall.html")
    ((size < 40 << 20)) || { echo "waterfall.html: $size bytes" >&2; exit 1; }
    python3 - "$work/zipkin.json" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
assert len(spans) == 100, len(spans)
for s in spans:
    assert len(s["name"]) == 65536 and len(s["tags"]["huge"]) == 65536, s["id"]
    assert s["tags"]["hoptrace.limit.strings_cut"] == "2", s["tags"].keys()
print("100 spans, names and tags cut to 64 KiB, each root tagged")
PY
    # the page's own limit: the traces past it left out, counted
    code=0
    "$hoptrace" view --max-page-mib 1 -o "$work/small.html" "$work/trace" 2> "$work/small.log" ||
      code=$?
    cat "$work/small.log"
    [[ $code == 3 ]] || { echo "view --max-page-mib 1: exit $code, want 3" >&2; exit 1; }
    grep -Eq "hoptrace: [1-9][0-9]* traces left out of the waterfall page" "$work/small.log"
    # the aggregate critical path names the traces' operations (64 KiB
    # each here): it counts in the page's size too, left out, said so
    grep -q "hoptrace: the aggregate critical path ([0-9]* bytes) left out of the waterfall page" \
      "$work/small.log"
    grep -q '^A{"operations":\[\],"left_out_bytes":[1-9]' "$work/small.html"
    (( $(stat -c %s "$work/small.html") < 3 << 20 )) ;;
esac
echo "ok: $attack bounded"
