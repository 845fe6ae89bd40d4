#!/usr/bin/env bash
# `hoptrace record -o DIR` never overwrites a recorded trace by accident:
# a second recording into the same directory is refused (exit 2, the
# trace untouched) unless --force; a file as DIR is refused too.
# record starts a session daemon of its own and stops exactly it, also
# when record itself gets SIGTERM while the command runs. With --procname
# (the machine's daemon), a real lttng-sessiond stopped by SIGSTOP makes
# record fail (exit 2) within its bounds, saying why, starting nothing:
# run as another user (nobody, when root) with a LTTNG_HOME of its own.
# Two recordings at once and a daemon killed mid-run: tool_record_world.sh.
# usage: tool_record.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
record() { # record DIR [--force]: 5 traces of trace_workload into DIR
  local dir=$1; shift
  timeout 120 "$hoptrace" record -o "$dir" "$@" -- \
    "$workload" --traces 5 --fanout 2
}
events() { babeltrace2 "$1" 2>/dev/null | grep -c 'hoptrace:' || true; }

record "$work/trace" 2> "$work/first.log"
before=$(events "$work/trace")
sum_before=$(find "$work/trace" -type f -print0 | sort -z | xargs -0 md5sum)
echo "first recording: $before events"
[[ $before -gt 0 ]]

rc=0
record "$work/trace" 2> "$work/again.log" || rc=$?
cat "$work/again.log"
[[ $rc == 2 ]] || { echo "recording into a non-empty directory: exit $rc, want 2" >&2; exit 1; }
grep -q -- "--force" "$work/again.log"
sum_after=$(find "$work/trace" -type f -print0 | sort -z | xargs -0 md5sum)
[[ "$sum_before" == "$sum_after" ]] || { echo "the refused run changed the trace" >&2; exit 1; }

: > "$work/a-file"
rc=0
record "$work/a-file" 2> "$work/file.log" || rc=$?
cat "$work/file.log"
[[ $rc == 2 ]]
grep -q "not a directory" "$work/file.log"

record "$work/trace" --force 2> "$work/force.log"
[[ $(events "$work/trace") -gt 0 ]]
echo "recording into a used directory refused without --force"

# --- record's own daemon: started, stopped, gone (also after SIGTERM)
gone() { # gone PID: the process has exited (not merely stopped)
  [[ ! -d /proc/$1 ]] || [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) == Z ]]
}
ours=$(sed -n 's/^hoptrace: started lttng-sessiond (pid \([0-9]*\))$/\1/p' "$work/force.log")
[[ -n $ours ]] && grep -q "^hoptrace: stopped lttng-sessiond (pid $ours)$" "$work/force.log" ||
  { echo "record did not start and stop a session daemon of its own" >&2; exit 1; }
gone "$ours" || { echo "its lttng-sessiond $ours still runs" >&2; exit 1; }
"$hoptrace" record -o "$work/trace3" -- sh -c "touch '$work/running'; exec sleep 60" \
  2> "$work/term.log" &
rec=$!
for ((t = 0; t < 300; t++)); do [[ -f $work/running ]] && break; sleep 0.1; done
[[ -f $work/running ]] || { cat "$work/term.log" >&2; echo "the recorded command did not start" >&2; exit 1; }
kill -TERM "$rec"
rc=0
wait "$rec" || rc=$?
cat "$work/term.log"
[[ $rc == 143 ]] || { echo "record after SIGTERM: exit $rc, want 143" >&2; exit 1; }
ours=$(sed -n 's/^hoptrace: started lttng-sessiond (pid \([0-9]*\))$/\1/p' "$work/term.log")
grep -q "^hoptrace: stopped lttng-sessiond (pid $ours)" "$work/term.log" && gone "$ours" ||
  { echo "its daemon not stopped" >&2; exit 1; }
echo "SIGTERM to record: the command ended, the daemon record started stopped"

# --- --procname (the machine's daemon) against a stopped one, as another user
home=$(mktemp -d /tmp/ht-rec-home-XXXXXX)
as=()
if [[ $(id -u) == 0 ]]; then
  as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  chown nobody:nogroup "$home"
fi
sd=""
cleanup() {
  if [[ -n $sd ]]; then
    kill -CONT "$sd" 2>/dev/null || true; kill -TERM "$sd" 2>/dev/null || true
    wait "$sd" 2>/dev/null || true
  fi
  rm -rf "$home"
}
trap cleanup EXIT
as_user() { "${as[@]}" env LTTNG_HOME="$home" HOME="$home" "$@"; }
# (setpriv and env exec: $! is the daemon itself)
"${as[@]}" env LTTNG_HOME="$home" HOME="$home" lttng-sessiond > "$work/sd.log" 2>&1 &
sd=$!
for ((t = 0; t < 100; t++)); do as_user lttng --no-sessiond list > /dev/null 2>&1 && break; sleep 0.1; done
as_user lttng --no-sessiond list > /dev/null 2>&1 || { cat "$work/sd.log"; echo "no session daemon as uid $(as_user id -u)" >&2; exit 1; }
kill -STOP "$sd"
t0=$(date +%s) rc=0
as_user timeout 120 "$hoptrace" record --procname trace_workload -o "$home/trace2" -- \
  "$workload" --traces 1 2> "$work/stopped.log" || rc=$?
took=$(( $(date +%s) - t0 ))
cat "$work/stopped.log"
echo "record against a stopped lttng-sessiond: exit $rc after ${took} s"
# a daemon that takes the question and does not answer: said, exit 3
[[ $rc == 3 ]] || { echo "want exit 3" >&2; exit 1; }
(( took < 30 )) || { echo "record took ${took} s" >&2; exit 1; }
grep -q "did not answer within 10.0 s (at: lttng list)" "$work/stopped.log" ||
  { echo "no reason given" >&2; exit 1; }
if grep -q "^hoptrace: started lttng-sessiond" "$work/stopped.log"; then
  echo "record started a daemon beside the stopped one" >&2; exit 1
fi
echo "tool record test passed"
