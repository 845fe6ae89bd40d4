#!/usr/bin/env bash
# worker-reply recorded in a real LTTng session: every request is one
# trace, the worker's store.put span is a child of the handler's span,
# and the reply leaves from the worker thread (check_trace.py reads the
# babeltrace2 text). Starts lttng-sessiond only when absent and stops only
# what it started; destroys only its own, uniquely named session.
# usage: worker_reply_lttng.sh SRC PROG PROVIDER WORKDIR
set -euo pipefail
src=$1 prog=$2 provider=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$src/scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own

n=30
session="ht-worker-reply-$$-$RANDOM"
out="$work/$session"
created=
cleanup() {
  [[ -n $created ]] && timeout 30 lttng destroy "$session" >/dev/null 2>&1 || true
  ht_sessiond_release
}
trap cleanup EXIT
rm -rf "$work" && mkdir -p "$out"
ht_sessiond_ensure

timeout 30 lttng create "$session" --output="$out/trace" >/dev/null
created=1
timeout 30 lttng enable-event -u -s "$session" 'hoptrace:*' >/dev/null
# vpid picks this run's events out of the per-user buffers; vtid tells
# the loop thread from the workers
timeout 30 lttng add-context -u -s "$session" -t vpid -t vtid >/dev/null
timeout 30 lttng start "$session" >/dev/null
# HT_TEST_WRAPPER (scripts/valgrind.sh) runs the program under valgrind;
# the shell writes its pid, which exec hands to the program (the events'
# vpid), before timeout(1) could hide it behind its own
wrap=()
[[ -n ${HT_TEST_WRAPPER:-} ]] && read -ra wrap <<< "$HT_TEST_WRAPPER"
HT_LTTNG_PROVIDER=$provider timeout 120 bash -c 'echo $$ > "$0"; exec "${@}"' \
  "$out/pid" "${wrap[@]}" "$prog" "$n" > "$out/stdout" ||
  { echo "FAIL: worker-reply exited $?" >&2; cat "$out/stdout" >&2; exit 1; }
timeout 60 lttng stop "$session" >/dev/null
timeout 30 lttng destroy "$session" >/dev/null
created=
timeout 60 babeltrace2 "$out/trace" > "$out/events.txt"
python3 "$here/check_trace.py" "$out/events.txt" "$(cat "$out/pid")" "$n"
