#!/usr/bin/env bash
# `hoptrace record` holds only its own processes and says when a daemon
# it uses vanishes:
#  - two recordings at once, beside the suite's session daemon, and again
#    in a mount namespace where none runs (root): each exits 0 and its
#    trace holds only the pids its own command started (the vpids of the
#    trace's process and desc events against the pids the commands logged);
#  - the session daemon of a recording SIGKILLed mid-run: record exits 3
#    within 2 s naming the daemon, and what was recorded before is read
#    back and exported; with --keep-going the command runs on to its end.
# usage: tool_record_world.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider

# busy NAME SECONDS: a command that runs the workload for SECONDS, each
# process logging its pid into WORK/NAME.pids
busy() {
  echo "end=\$((\$(date +%s) + $2)); while [ \$(date +%s) -lt \$end ]; do
    sh -c 'echo \$\$ >> \"$work/$1.pids\"; exec \"$workload\" --traces 200 --fanout 2' > /dev/null
  done"
}
vpids() { # the vpids a trace's process and desc events name; 1 when unreadable
  babeltrace2 "$1" 2>/dev/null | { grep -E 'hoptrace:(process|desc):' || true; } |
    sed -n 's/.*vpid = \([0-9]*\).*/\1/p' | sort -u
}
only_own() { # only_own NAME TRACE: every vpid of TRACE is one of NAME's
  local v n=0 bad=0 list
  # checked here: a 'for' over $(...) ignores the substitution's status
  list=$(vpids "$2") || { echo "$1: babeltrace2 could not read $2" >&2; return 1; }
  for v in $list; do
    n=$((n + 1))
    grep -qx "$v" "$work/$1.pids" || { echo "$1: pid $v is not one of its own" >&2; bad=1; }
  done
  echo "$1: $n processes in its trace, $(sort -u "$work/$1.pids" | wc -l) started"
  [[ $n -gt 0 && $bad == 0 ]]
}
two_at_once() { # two_at_once TAG [wrapper...]
  local tag=$1 a b ra=0 rb=0
  shift
  "$@" timeout 120 "$hoptrace" record -o "$work/$tag-a" -- sh -c "$(busy "$tag-a" 4)" \
    2> "$work/$tag-a.log" &
  a=$!
  sleep 1
  "$@" timeout 120 "$hoptrace" record -o "$work/$tag-b" -- sh -c "$(busy "$tag-b" 4)" \
    2> "$work/$tag-b.log" &
  b=$!
  wait "$a" || ra=$?
  wait "$b" || rb=$?
  cat "$work/$tag-a.log" "$work/$tag-b.log"
  [[ $ra == 0 && $rb == 0 ]] || { echo "$tag: exits $ra and $rb, want 0 and 0" >&2; exit 1; }
  only_own "$tag-a" "$work/$tag-a"
  only_own "$tag-b" "$work/$tag-b"
}

two_at_once shared
echo "two recordings at once beside the suite's daemon: each its own"
if [[ $(id -u) == 0 ]]; then
  # nothing answers in there: each record starts (and stops) its own
  empty=(unshare --mount --propagation private sh -c 'mount -t tmpfs none /var/run/lttng &&
    mount -t tmpfs none /dev/shm && exec env LTTNG_HOME=/var/run/lttng "$@"' empty)
  two_at_once empty "${empty[@]}"
  echo "two recordings at once with no daemon running: each its own"
fi

# --- the daemon killed mid-run
killed() { # killed TAG [--keep-going]: prints the seconds from the kill to record's exit
  local tag=$1 rec sd t0 rc=0
  shift
  "$hoptrace" record -o "$work/$tag" "$@" -- sh -c "$(busy "$tag" 8); touch '$work/$tag.ended'" \
    2> "$work/$tag.log" &
  rec=$!
  for ((t = 0; t < 200; t++)); do
    sd=$(sed -n 's/^hoptrace: started lttng-sessiond (pid \([0-9]*\))$/\1/p' "$work/$tag.log" 2> /dev/null || true)
    [[ -n $sd && -s $work/$tag.pids ]] && break
    sleep 0.1
  done
  [[ -n $sd ]] || { cat "$work/$tag.log"; echo "$tag: no daemon started" >&2; exit 1; }
  sleep 2
  t0=$(date +%s%N)
  kill -KILL "$sd"
  wait "$rec" || rc=$?
  echo "$(( ($(date +%s%N) - t0) / 1000000 )) $rc $sd"
}
read -r ms rc sd < <(killed killed)
cat "$work/killed.log"
echo "daemon killed: record exit $rc after $ms ms"
[[ $rc == 3 ]] || { echo "want exit 3" >&2; exit 1; }
(( ms <= 2000 )) || { echo "record took $ms ms to end after its daemon died" >&2; exit 1; }
grep -q "lttng-sessiond (pid $sd, started for this recording) was killed by SIGKILL" \
  "$work/killed.log" || { echo "the daemon's death not reported" >&2; exit 1; }
[[ ! -e $work/killed.ended ]] || { echo "the command ran on to its end" >&2; exit 1; }
"$hoptrace" export --format zipkin -o "$work/killed.json" "$work/killed" 2> "$work/export.log" || true
spans=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$work/killed.json")
echo "exported from before the kill: $spans spans"
[[ $spans -gt 100 ]]
only_own killed "$work/killed"

read -r ms rc sd < <(killed kept --keep-going)
cat "$work/kept.log"
[[ $rc == 3 && -e $work/kept.ended ]] ||
  { echo "--keep-going: exit $rc, the command $( [[ -e $work/kept.ended ]] || echo not) ended" >&2; exit 1; }
grep -q "runs on, unrecorded" "$work/kept.log"
echo "tool record world test passed"
