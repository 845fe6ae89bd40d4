#!/usr/bin/env bash
# Trace discovery under careless input: symbolic links
# below an input are not followed (a link out of the tree, or a loop of
# links, cost neither a foreign trace nor an endless walk), the depth is
# bounded (a trace 8 levels below the input is found, 9 levels not), and
# SIGINT ends a run during discovery promptly with exit 130.
# usage: tool_discovery.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
fail() { echo "FAIL: $*" >&2; exit 1; }
timeout 120 "$hoptrace" record -o "$work/rec" --filter '$ctx.procname == "trace_workload"' -- \
  "$workload" --traces 10 --fanout 1 2> "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log" || { cat "$work/record.log"; fail "discards"; }
trace=$(find "$work/rec" -name metadata -printf '%h\n')
[[ $(wc -l <<< "$trace") == 1 ]] || fail "expected one trace directory: $trace"

# run CMD... for at most $1 seconds; $status its exit (124: it had to be killed)
bounded() {
  local limit=$1; shift
  "$@" > "$work/out" 2> "$work/err" & local pid=$!
  local waited=0
  while kill -0 $pid 2>/dev/null && (( waited < limit * 10 )); do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 $pid 2>/dev/null; then kill -KILL $pid; wait $pid 2>/dev/null || true; status=124; return; fi
  status=0; wait $pid || status=$?
}

## links out of the tree and loops of links are not followed
mkdir "$work/loop"
for l in a b c d e f g h; do ln -s . "$work/loop/$l"; done
ln -s "$work/rec" "$work/loop/elsewhere" # a trace outside the input
bounded 20 "$hoptrace" report "$work/loop"
[[ $status != 124 ]] || fail "report of a loop of links did not end in 20 s"
[[ $status == 1 ]] || fail "report of a loop of links: exit $status: $(cat "$work/err")"
grep -q "$work/loop: no CTF trace (no metadata file) found" "$work/err" || fail "$(cat "$work/err")"
grep -q "^hoptrace report: 0 traces" "$work/out" && fail "a failed report printed a finished document"
echo "links: the trace behind a link and the loop were not followed (exit 1 at once)"
# the input itself may be a link
ln -s "$work/rec" "$work/input-link"
# (into a file: `| grep -q` quits at the match and under pipefail the
# report's next write fails with a broken pipe, as it should)
"$hoptrace" report -q -o "$work/link-report.txt" "$work/input-link" &&
  grep -q "^hoptrace report: 10 traces" "$work/link-report.txt" || fail "an input that is a link"

## depth: 8 levels below the input found, 9 not
for levels in 8 9; do
  deep="$work/deep$levels"
  path=$deep
  for ((i = 0; i < levels - 1; i++)); do path+="/d$i"; done
  mkdir -p "$path"
  cp -r "$trace" "$path/" # the trace directory itself is the last level
  found=$(find "$deep" -name metadata -printf '%d\n')
  [[ $found == $((levels + 1)) ]] || fail "built the tree wrong: metadata at depth $found"
  status=0; "$hoptrace" report -q "$deep" > "$work/out" 2> "$work/err" || status=$?
  if (( levels == 8 )); then
    [[ $status == 0 ]] && grep -q "^hoptrace report: 10 traces" "$work/out" || fail "depth 8: $status $(cat "$work/err")"
  else
    [[ $status == 1 ]] && grep -q "no CTF trace" "$work/err" || fail "depth 9 read: $status $(cat "$work/err")"
  fi
done
echo "depth: a trace 8 levels below the input is found, 9 levels not"

## SIGINT during discovery: a tree of links that today's walk follows
## (8 links at each of 8 levels: 16 million directories) ends at once
mkdir "$work/wide"
for l in a b c d e f g h; do ln -s .. "$work/wide/$l"; done
mkdir "$work/wide/sub" && for l in a b c d e f g h; do ln -s .. "$work/wide/sub/$l"; done
"$hoptrace" report "$work/wide" > "$work/out" 2> "$work/err" & pid=$!
sleep 0.3
kill -INT $pid 2>/dev/null || true
waited=0
while kill -0 $pid 2>/dev/null && (( waited < 20 )); do sleep 0.1; waited=$((waited + 1)); done
if kill -0 $pid 2>/dev/null; then kill -KILL $pid; fail "SIGINT during discovery: still running 2 s later"; fi
status=0; wait $pid || status=$?
[[ $status == 130 || $status == 1 ]] || fail "SIGINT during discovery: exit $status: $(cat "$work/err")"
echo "SIGINT: exit $status within $((waited * 100)) ms"
echo "tool discovery test passed"
