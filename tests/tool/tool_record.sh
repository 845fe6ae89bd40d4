#!/usr/bin/env bash
# `hoptrace record -o DIR` never overwrites a recorded trace by accident:
# a second recording into the same directory is refused (exit 2, the
# trace untouched) unless --force; a file as DIR is refused too.
# record talks only to a session daemon that answers or that it started,
# and leaves none running (issue 17): run as another user (nobody, when
# root) with a LTTNG_HOME of its own, so the shared daemon is untouched,
#  - with a process named lttng-sessiond that does not listen (a renamed
#    sleep): record starts its own, records, and stops exactly it, also
#    when record itself gets SIGTERM while the command runs;
#  - with a real lttng-sessiond stopped by SIGSTOP: record fails (exit 2)
#    within its bounds, saying why, and starts nothing.
# usage: tool_record.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
record() { # record DIR [--force]: 5 traces of trace_workload into DIR
  local dir=$1; shift
  timeout 120 "$hoptrace" record -o "$dir" "$@" --filter '$ctx.procname == "trace_workload"' -- \
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
[[ $rc == 2 ]] && grep -q "not a directory" "$work/file.log"

record "$work/trace" --force 2> "$work/force.log"
[[ $(events "$work/trace") -gt 0 ]]
echo "recording into a used directory refused without --force"

# --- unreachable session daemons of the same user, in a home of our own
home=$(mktemp -d /tmp/ht-rec-home-XXXXXX)
as=()
if [[ $(id -u) == 0 ]]; then
  as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  chown nobody:nogroup "$home"
fi
uid=$("${as[@]}" id -u)
mine() { # pids of uid's processes named $1 whose LTTNG_HOME is ours
  local p
  for p in $(pgrep -u "$uid" -x "$1" || true); do
    # (no pipe into grep -q: under pipefail tr may die of SIGPIPE)
    grep -qx "LTTNG_HOME=$home" < <({ tr '\0' '\n' < "/proc/$p/environ"; } 2>/dev/null) && echo "$p"
  done
  return 0
}
started=()
cleanup() {
  local p
  for p in "${started[@]}" $(mine lttng-sessiond) $(mine lttng-consumerd); do
    kill -CONT "$p" 2>/dev/null || true; kill -TERM "$p" 2>/dev/null || true
  done
  sleep 0.5
  for p in "${started[@]}" $(mine lttng-sessiond) $(mine lttng-consumerd); do
    kill -KILL "$p" 2>/dev/null || true
  done
  rm -rf "$home"
}
trap cleanup EXIT
as_user() { "${as[@]}" env LTTNG_HOME="$home" HOME="$home" "$@"; }
mkdir -p "$home/bin"
ln -s "$(command -v sleep)" "$home/bin/lttng-sessiond"
[[ $(id -u) == 0 ]] && chown -R nobody:nogroup "$home"
"${as[@]}" env LTTNG_HOME="$home" "$home/bin/lttng-sessiond" 300 & # (no function: $! is it)
fake=$!
started+=("$fake")
for ((t = 0; t < 50; t++)); do
  [[ $(cat "/proc/$fake/comm" 2>/dev/null) == lttng-sessiond ]] && break
  sleep 0.1
done
[[ $(cat "/proc/$fake/comm") == lttng-sessiond ]] || { echo "the fake is not named lttng-sessiond" >&2; exit 1; }
rc=0
as_user timeout 120 "$hoptrace" record -o "$home/trace" \
  --filter '$ctx.procname == "trace_workload"' -- "$workload" --traces 5 --fanout 2 \
  2> "$work/fake.log" || rc=$?
cat "$work/fake.log"
[[ $rc == 0 ]] || { echo "record beside a fake lttng-sessiond: exit $rc" >&2; exit 1; }
[[ $(events "$home/trace") -gt 0 ]] || { echo "no events recorded" >&2; exit 1; }
ours=$(sed -n 's/^hoptrace: started lttng-sessiond (pid \([0-9]*\))$/\1/p' "$work/fake.log")
[[ -n $ours ]] && grep -q "^hoptrace: stopped lttng-sessiond (pid $ours)$" "$work/fake.log" ||
  { echo "record did not start and stop a session daemon of its own" >&2; exit 1; }
left=$(mine lttng-sessiond; mine lttng-consumerd)
[[ $left == "$fake" ]] || { echo "left running after record: $left (fake $fake)" >&2; exit 1; }
echo "a same-user lttng-sessiond that does not listen: record started its own and stopped it"
# SIGTERM to record while the command runs: the command gets it, and the
# daemon record started is stopped all the same
"${as[@]}" env LTTNG_HOME="$home" HOME="$home" "$hoptrace" record -o "$home/trace3" -- \
  sh -c "touch '$home/running'; exec sleep 60" 2> "$work/term.log" &
rec=$!
for ((t = 0; t < 300; t++)); do [[ -f $home/running ]] && break; sleep 0.1; done
[[ -f $home/running ]] || { cat "$work/term.log" >&2; echo "the recorded command did not start" >&2; exit 1; }
kill -TERM "$rec"
rc=0
wait "$rec" || rc=$?
cat "$work/term.log"
[[ $rc == 143 ]] || { echo "record after SIGTERM: exit $rc, want 143" >&2; exit 1; }
grep -q "^hoptrace: stopped lttng-sessiond" "$work/term.log" || { echo "its daemon not stopped" >&2; exit 1; }
left=$(mine lttng-sessiond; mine lttng-consumerd)
[[ $left == "$fake" ]] || { echo "left running after SIGTERM: $left (fake $fake)" >&2; exit 1; }
kill "$fake"; wait "$fake" 2>/dev/null || true
echo "SIGTERM to record: the command ended, the daemon record started stopped"

as_user lttng-sessiond --daemonize
stopped=$(mine lttng-sessiond)
[[ -n $stopped ]] || { echo "could not start a session daemon as uid $uid" >&2; exit 1; }
started+=($stopped)
kill -STOP $stopped
t0=$(date +%s) rc=0
as_user timeout 120 "$hoptrace" record -o "$home/trace2" -- "$workload" --traces 1 \
  2> "$work/stopped.log" || rc=$?
took=$(( $(date +%s) - t0 ))
cat "$work/stopped.log"
echo "record against a stopped lttng-sessiond: exit $rc after ${took} s"
[[ $rc == 2 ]] || { echo "want exit 2" >&2; exit 1; }
(( took < 60 )) || { echo "record took ${took} s" >&2; exit 1; }
grep -q "does not answer\|no session daemon answers" "$work/stopped.log" || { echo "no reason given" >&2; exit 1; }
left=$(mine lttng-sessiond; mine lttng-consumerd)
[[ $(echo $left) == "$(echo $stopped)" ]] || { echo "left running: $left (stopped one: $stopped)" >&2; exit 1; }
echo "tool record test passed"
