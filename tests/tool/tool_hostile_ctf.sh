#!/usr/bin/env bash
# A trace file with hostile hoptrace events LTTng never writes
# (hostile_ctf.py, no LTTng session needed) reads to its end: each is
# dropped as malformed, counted, and its trace marked incomplete; the
# sane spans around it are exported; exit 0, no crash and no
# libbabeltrace2 abort. One stream file and two, with one decoder (one
# graph; two streams: the merging sink) and two (decoder processes).
# Cases:
#   kvs-not-array: a schema 1 kvs's types/ints are variants: read as
#     arrays, they crashed the tool (SIGSEGV)
#   time-past-int64: events' time (schema 2 and 1) past int64 ns: the error
#     libbabeltrace2 left on the thread aborted the next graph run (and
#     with two decoders, a decoder "ended without finishing"), and the
#     event was placed at time 0
# usage: tool_hostile_ctf.sh HOPTRACE WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 work=$2 src=$3
rm -rf "$work" && mkdir -p "$work/tmp"
export TMPDIR=$work/tmp
fail() { echo "FAIL: $*" >&2; exit 1; }
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
for case in kvs-not-array:1 time-past-int64:2; do
  bad=${case#*:} case=${case%:*} # the events dropped, one trace each
  for streams in 1 2; do
    trace=$work/$case-$streams
    python3 "$src/hostile_ctf.py" $case $streams "$trace"
    want="0000000000000001"
    [[ $streams == 2 ]] && want="0000000000000001 0000000000000004"
    for d in 1 2; do
      run="$case, $streams stream(s), --decoders $d"
      status=0
      timeout 60 "${tool[@]}" export --decoders $d --format zipkin -o "$work/out.json" "$trace" \
        2> "$work/err" || status=$?
      [[ $status == 0 ]] || fail "$run: exit $status: $(cat "$work/err")"
      grep -q " $bad malformed$" "$work/err" || fail "$run: not counted: $(cat "$work/err")"
      grep -q "^hoptrace: $bad traces lost $bad events dropped as malformed: marked incomplete$" \
        "$work/err" || fail "$run: its trace not marked: $(cat "$work/err")"
      got=$(python3 -c 'import json,sys; print(*sorted(s["traceId"] for s in json.load(open(sys.argv[1]))))' \
              "$work/out.json")
      [[ $got == "$want" ]] || fail "$run: exported traces '$got', expected '$want'"
    done
  done
  echo "$case: dropped as malformed, its trace marked, the other spans exported"
done
[[ -z $(ls -A "$work/tmp") ]] || fail "temporary directories left: $(ls "$work/tmp")"
echo "tool hostile ctf test passed"
