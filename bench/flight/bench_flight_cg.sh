#!/usr/bin/env bash
# Instructions per traced messenger hop in flight mode, beside plain and
# normal recording, under callgrind (exact counts, not timings): the
# traced messenger's request and reply with one handler integer
# key-value (bench_recording traced_kv, one request at a time over
# loopback), only the measured loop of CG_HOPS hops counted. Rows:
#   plain         the plain messenger, no tracing (subtracted below);
#   rec-100%      traced, sampling 100 %, in a session to disk as
#                 `hoptrace record` sets up its spans' channel;
#   rec-1%        traced, head sampling 1 %, the same session;
#   flight-1%     traced, HT_FLIGHT=1 and head sampling 1 %: every request
#                 recorded into a snapshot session's overwrite ring (as
#                 `hoptrace record --flight` sets it up: 8 sub-buffers of
#                 1 MiB a CPU), nothing written, no trigger;
#   flight-idle   the same process, HT_FLIGHT=1, no session;
#   memory-1%     traced, HT_FLIGHT=memory and head sampling 1 %: every
#                 request recorded into the process's own rings
#                 (shim/recording/flight_ring.c), the same snapshot
#                 session beside it for the sampled 1 %, no trigger.
# Each session tracks only the benchmark's process. Starts a session
# daemon of its own in a world of its own, stops only that one. Writes
# bench/results/flight-cg.txt.
#   [KEEP_CG=DIR] bench/flight/bench_flight_cg.sh [BUILD_DIR] [CG_HOPS]
# KEEP_CG: an existing directory where each row's callgrind profile is
# kept (ROW.cg), for callgrind_annotate.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
cg_hops=${2:-20000} warm=1000
bin="$build/bench/recording/bench_recording"
source "$root/scripts/lttng-env.sh"
ht_private_world "$0" "$@"
out=$(mktemp -d /tmp/ht-bench-flight-cg-XXXXXX)
session=""
trap 'rm -rf "$out"; ht_sessiond_release' EXIT # its sessions go with the daemon
ht_sessiond_ensure

# measure ROW none|disk|snapshot [ENV...]: "ROW INSTR-PER-HOP EVENTS-ON-DISK"
measure() {
  local row=$1 kind=$2 n=0
  shift 2
  local cmd=(env "$@" LTTNG_UST_REGISTER_TIMEOUT=30000
             HT_LTTNG_PROVIDER="$build/libhoptrace-tp.so.0"
             valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/cg"
             "$bin" "${row%%-*}" "$warm" "$cg_hops")
  [[ $row == plain ]] || cmd[${#cmd[@]} - 3]=traced_kv
  if [[ $kind != none ]]; then
    session="ht-bench-fcg-$$-$row"
    local mode=() chan=(--subbuf-size=2M --num-subbuf=8)
    [[ $kind == snapshot ]] && mode=(--snapshot) chan=(--subbuf-size=1M --num-subbuf=8 --overwrite)
    lttng create "$session" "${mode[@]}" --output="$out/trace-$row" >/dev/null
    lttng enable-channel -u -s "$session" --buffers-uid "${chan[@]}" hoptrace >/dev/null
    lttng enable-event -u -s "$session" -c hoptrace 'hoptrace:*' >/dev/null
    timeout 900 bash -c 'lttng track -u -s "$1" --vpid=$$ >/dev/null &&
        lttng start "$1" >/dev/null && shift && exec "$@"' _ "$session" "${cmd[@]}" \
      >"$out/run" 2>"$out/run.err" || { cat "$out/run.err" >&2; exit 1; }
    [[ $kind == snapshot ]] && lttng snapshot record -s "$session" >/dev/null
    lttng stop "$session" >/dev/null
    n=$(timeout 600 babeltrace2 "$out/trace-$row" 2>/dev/null | grep -c ' hoptrace:' || true)
    lttng destroy "$session" >/dev/null
    session=""
  else
    timeout 900 "${cmd[@]}" >"$out/run" 2>"$out/run.err" || { cat "$out/run.err" >&2; exit 1; }
  fi
  grep -qx "provider loaded" "$out/run" || { echo "the provider did not load" >&2; exit 1; }
  awk -v n="$cg_hops" -v row="$row" -v ev="$n" '/^totals:/ { printf "%s %.1f %s\n", row, $2 / n, ev }' \
    "$out/cg" | tee -a "$out/figures" >&2
  [[ -z ${KEEP_CG:-} ]] || cp "$out/cg" "$KEEP_CG/$row.cg"
}

measure plain none
measure rec-100% disk
measure rec-1% disk HT_BENCH_RATIO=0.01
measure flight-1% snapshot HT_FLIGHT=1 HT_BENCH_RATIO=0.01
measure flight-idle none HT_FLIGHT=1 HT_BENCH_RATIO=0.01
measure memory-1% snapshot HT_FLIGHT=memory HT_BENCH_RATIO=0.01

res="$root/bench/results/flight-cg.txt"
{
  echo "# hoptrace benchmark: flight mode, instructions per traced messenger hop (callgrind)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  commit: $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
  echo "# machine: $(uname -srm), $(nproc) cpus"
  echo "# command: bench/flight/bench_flight_cg.sh BUILD_DIR $cg_hops"
  echo "# hop: bench_recording traced_kv (request and reply over loopback TCP, one at a time, the server's handler adds one integer key-value); user-space instructions of the measured loop of $cg_hops hops (after $warm warm-up), valgrind --tool=callgrind --instr-atstart=no"
  echo "# sessions: one user-space channel, per-user buffers, hoptrace:*, only this process tracked; disk: 8 x 2M sub-buffers a CPU; snapshot: --snapshot, --overwrite, 8 x 1M (record --flight's default ring), one snapshot taken after the loop to count what the ring held"
  echo "# events: the hoptrace events in the trace (disk) or in the snapshot (snapshot: what the ring still held; it overwrites)"
  echo "# $(lttng --version | head -1), $(valgrind --version)"
  echo
  awk '{ v[$1] = $2; e[$1] = $3; r[NR] = $1 }
       END {
         printf "%-14s %10s %12s %10s\n", "row", "instr/hop", "- plain", "events"
         for (i = 1; i <= NR; i++)
           printf "%-14s %10.1f %12s %10s\n", r[i], v[r[i]],
                  r[i] == "plain" ? "-" : sprintf("%+.1f", v[r[i]] - v["plain"]),
                  e[r[i]] == 0 && r[i] ~ /plain|idle/ ? "-" : e[r[i]]
         printf "\nflight-1%% over rec-100%%: %+.1f instructions a hop; over rec-1%%: %+.1f\n",
                v["flight-1%"] - v["rec-100%"], v["flight-1%"] - v["rec-1%"]
         printf "memory-1%% over rec-1%%: %+.1f; under flight-1%%: %+.1f\n",
                v["memory-1%"] - v["rec-1%"], v["memory-1%"] - v["flight-1%"]
       }' "$out/figures"
} >"$res"
cat "$res"
