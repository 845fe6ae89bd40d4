#!/usr/bin/env bash
# `hoptrace record -o DIR` never overwrites a recorded trace by accident:
# a second recording into the same directory is refused (exit 2, the
# trace untouched) unless --force; a file as DIR is refused too.
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
echo "tool record test passed"
