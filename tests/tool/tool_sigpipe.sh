#!/usr/bin/env bash
# The output's reader misbehaving, on a real two-CPU
# recording big enough that the decoders are still at work: `| head`
# (EPIPE) is a clear error, exit 2; a closed stdout is refused; a reader
# that never reads does not keep SIGINT from ending the run (exit 130,
# promptly, decoders reaped); a SIGKILLed run's decoders die with it and
# its link directories are removed by the next run, never a live run's.
# No run leaves a temporary directory.
# usage: tool_sigpipe.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work/tmp"
export HT_LTTNG_PROVIDER=$provider
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(nproc) -ge 2 ]] || fail "needs 2 CPUs for two decoders"
timeout 120 "$hoptrace" record -o "$work/big" --subbuf-size 4M \
  --filter '$ctx.procname == "trace_workload"' -- \
  bash -c "taskset -c 0 '$workload' --traces 8000 --fanout 3 &
           taskset -c 1 '$workload' --traces 8000 --fanout 3; wait" 2> "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log" || { cat "$work/record.log"; fail "discards"; }
export TMPDIR=$work/tmp
no_temp() { [[ -z $(ls -A "$work/tmp") ]] || fail "$1: left $(ls "$work/tmp")"; }
# running (a zombie left to init to reap does not count)
running() { [[ -e /proc/$1 ]] && [[ $(awk '{print $3}' /proc/"$1"/stat 2>/dev/null) != Z ]]; }
decoders_of() { cat /proc/"$1"/task/*/children 2>/dev/null || true; }
# waits until $1 has forked its two decoders; $decoders their pids
wait_decoders() {
  decoders=
  for _ in $(seq 3000); do
    decoders=$(decoders_of "$1")
    [[ $(wc -w <<< "$decoders") -ge 2 ]] && return 0
    sleep 0.01
  done
  fail "no decoder processes"
}

## | head: EPIPE, a clear error, exit 2, nothing left
for cmd in "export --format zipkin" "export --format chrome" "report" "view -o -"; do
  # shellcheck disable=SC2086
  set +o pipefail
  timeout 60 "$hoptrace" $cmd --decoders 2 "$work/big" 2> "$work/err" | head -c 1000 > /dev/null
  status=${PIPESTATUS[0]}
  set -o pipefail
  if [[ $cmd == report && $status == 0 ]]; then
    : # report writes at its end: all of it may fit in the pipe before head quits
  else
    [[ $status == 2 ]] || fail "$cmd | head: exit $status (141: killed by SIGPIPE)"
    grep -q "hoptrace: cannot write standard output: Broken pipe" "$work/err" ||
      fail "$cmd | head: $(cat "$work/err")"
  fi
  no_temp "$cmd | head"
done
echo "| head: exit 2, 'cannot write standard output: Broken pipe', no temporary directory"

## a closed stdout: refused, never written into a socket
status=0; "$hoptrace" export --format zipkin "$work/big" >&- 2> "$work/err" || status=$?
[[ $status == 2 ]] || fail "closed stdout: exit $status: $(cat "$work/err")"
grep -q "standard output is closed" "$work/err" || fail "closed stdout: $(cat "$work/err")"
"$hoptrace" export --format zipkin -q -o "$work/ok.json" "$work/big" >&- ||
  fail "closed stdout with -o FILE failed"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))' "$work/ok.json"
no_temp "closed stdout"
echo "closed stdout: refused (exit 2); -o FILE still works"

## a reader that never reads: SIGINT still ends the run, decoders reaped
mkfifo "$work/fifo"
sleep 300 < "$work/fifo" & sleeper=$!
"$hoptrace" export --format zipkin --decoders 2 "$work/big" > "$work/fifo" 2> "$work/err" & pid=$!
wait_decoders $pid
sleep 1 # the pipe fills, the writer blocks, the queue fills
kill -INT $pid
waited=0
while kill -0 $pid 2>/dev/null && (( waited < 50 )); do sleep 0.1; waited=$((waited + 1)); done
if kill -0 $pid 2>/dev/null; then
  kill -KILL $pid; kill $sleeper
  fail "a reader that never reads: SIGINT did not end the run in 5 s"
fi
status=0; wait $pid || status=$?
kill $sleeper; wait $sleeper 2>/dev/null || true
[[ $status == 130 ]] || fail "never-reading reader, SIGINT: exit $status: $(cat "$work/err")"
for d in $decoders; do [[ -e /proc/$d ]] && fail "decoder $d still there (a zombie?)"; done
no_temp "never-reading reader"
echo "never-reading reader: SIGINT -> exit 130 in $((waited * 100)) ms, decoders reaped"

## SIGKILL: the decoders die with the run; the next run removes what it left,
## not a live run's directory nor anything but links
"$hoptrace" export --format zipkin --decoders 2 -o "$work/killed.json" "$work/big" 2> /dev/null & pid=$!
wait_decoders $pid
kill -KILL $pid
wait $pid 2>/dev/null || true
for d in $decoders; do
  for _ in $(seq 20); do running "$d" || break; sleep 0.1; done
  running "$d" && fail "decoder $d outlived its SIGKILLed parent by 2 s"
done
left=$(ls "$work/tmp")
[[ -n $left ]] || fail "a SIGKILLed run left nothing: the cleanup below is not tested"
mkdir "$work/tmp/hoptrace-split.$$.livexx"      # a live pid (this shell)
mkdir "$work/tmp/hoptrace-split.999999999.filex" # a dead pid, but a real file inside
touch "$work/tmp/hoptrace-split.999999999.filex/data"
"$hoptrace" export --format zipkin --decoders 2 -q -o "$work/ok.json" "$work/big"
for l in $left; do [[ ! -e "$work/tmp/$l" ]] || fail "stale $l not removed"; done
[[ -d "$work/tmp/hoptrace-split.$$.livexx" ]] || fail "a live run's directory was removed"
[[ -f "$work/tmp/hoptrace-split.999999999.filex/data" ]] || fail "a file was removed"
rm -r "$work/tmp/hoptrace-split.$$.livexx" "$work/tmp/hoptrace-split.999999999.filex"
no_temp "after cleanup"
echo "SIGKILL: decoders died with the run; its directories removed by the next run, others kept"
## -o whose rename fails (the target became a non-empty directory
## meanwhile): rename's own errno, exit 2, the temporary file removed
mkdir "$work/out"
"$hoptrace" export --format zipkin --decoders 2 -o "$work/out/x.json" "$work/big" 2> "$work/err" & pid=$!
wait_decoders $pid
mkdir "$work/out/x.json" && touch "$work/out/x.json/keep"
status=0; wait $pid || status=$?
[[ $status == 2 ]] || fail "rename over a directory: exit $status: $(cat "$work/err")"
grep -q "cannot rename the output to $work/out/x.json: Is a directory" "$work/err" ||
  fail "rename: $(cat "$work/err")"
[[ $(ls -A "$work/out") == x.json && -f "$work/out/x.json/keep" ]] || fail "rename: left $(ls -A "$work/out")"
echo "rename failure: 'Is a directory', exit 2, no temporary file left"
rm -rf "$work/big"
echo "tool sigpipe test passed"
