#!/usr/bin/env bash
# Cost of recording one RPC hop, beside Blkin's figures: runs
# bench_recording's hops (span API, traced and plain messenger) in real
# LTTng sessions set up as `hoptrace record` sets them up, with and
# with vpid and vtid contexts added (which it added before the events
# carried their process and thread), and writes bench/results/recording.txt:
#   - events and bytes per hop: one native run of HOPS hops per session,
#     hoptrace:* events counted with babeltrace2 (by provider prefix, so a
#     new event schema needs no change here), bytes = the stream files
#     (metadata and index/ excluded) / hops;
#   - instructions per hop: a run of CG_HOPS hops under callgrind in a
#     session of the same configuration, counting only the measured loop
#     (--instr-atstart=no and the program's CALLGRIND_START/STOP
#     toggles, so start-up and warm-up are left out).
# Each run has a session of its own that tracks only the benchmark's
# process (its pid tracked before the session starts): other programs
# recording on this host add neither events nor bytes. Starts
# lttng-sessiond if absent and stops only the one it started; destroys
# its sessions and removes their traces.
# Each row is measured over libhoptrace.a (bench_recording) and, with no
# contexts, over libhoptrace.so (bench_recording_shared, rows "ROW.so"):
# applications link the shared library.
#   bench/recording/run.sh [BUILD_DIR] [HOPS] [CG_HOPS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
hops=${2:-100000} cg_hops=${3:-20000} warm=1000
bin="$build/bench/recording/bench_recording"
bin_so="$build/bench/recording/bench_recording_shared"
# `hoptrace record`'s channel (tools/hoptrace/cli/record.c): user space,
# per-user buffers, 8 sub-buffers of 2 MiB a CPU, no contexts.
subbuf=2M nsubbuf=8
source "$root/scripts/lttng-env.sh"
ht_private_world "$0" "$@" # a daemon of its own, in a world of its own
out=$(mktemp -d /tmp/ht-bench-rec-XXXXXX)
session="" n_sessions=0 others=0
cleanup() {
  [[ -z "$session" ]] || timeout 30 lttng destroy "$session" >/dev/null 2>&1 || true
  rm -rf "$out"
  ht_sessiond_release
}
trap cleanup EXIT
ht_sessiond_ensure

# session_new CTX: a created, not yet started session ($session, trace in
# $trace), with vpid and vtid contexts on every event when CTX is 1 (what
# `hoptrace record` added before the events carried them; CTX 0 is what it
# sets up now).
session_new() {
  n_sessions=$((n_sessions + 1))
  session="ht-bench-rec-$$-$n_sessions" trace="$out/trace-$n_sessions"
  lttng create "$session" --output="$trace" >/dev/null
  lttng enable-channel -u -s "$session" --subbuf-size=$subbuf --num-subbuf=$nsubbuf \
    hoptrace >/dev/null
  if (($1)); then
    lttng add-context -u -s "$session" -c hoptrace -t vpid -t vtid >/dev/null
  fi
  lttng enable-event -u -s "$session" -c hoptrace 'hoptrace:*' >/dev/null
}

session_end() {
  lttng destroy "$session" >/dev/null
  session=""
  rm -rf "$trace"
}

# in_session CMD...: CMD as the only process the session records, then
# stops it (stop waits until the buffers are on disk). Output in $out/run.
# Registration may wait 30 s, not 3, so that even under valgrind the
# process records from its first hop.
in_session() {
  # another active session recording hoptrace:* would record this
  # process too and add to its instructions: say so in the results
  local active
  active=$(lttng list 2>/dev/null | grep -c '\[active\]' || true)
  ((active <= others)) || others=$active
  LTTNG_UST_REGISTER_TIMEOUT=30000 HT_LTTNG_PROVIDER="$build/libhoptrace-tp.so.0" \
    timeout 900 bash -c 'lttng track -u -s "$1" --vpid=$$ >/dev/null &&
      lttng start "$1" >/dev/null && shift && exec "$@"' _ "$session" "$@" \
    >"$out/run" 2>"$out/run.err" || { cat "$out/run.err" >&2; exit 1; }
  lttng stop "$session" >/dev/null
  grep -qx "provider loaded" "$out/run" || {
    echo "run.sh: the hoptrace provider did not load: nothing was recorded" >&2
    exit 1
  }
}

# trace_figures: "EVENTS BYTES DISCARDED LOST" of $trace (LTTng's
# discarded events and lost packets as babeltrace2 reports them; a count
# it cannot give, "a number of", counts as 1).
trace_figures() {
  local events bytes
  events=$(timeout 600 babeltrace2 "$trace" 2>"$out/bt.err" |
    awk '$4 ~ /^hoptrace:/ { n++ } END { print n + 0 }')
  bytes=$(find "$trace" -type f ! -name metadata ! -path '*/index/*' -printf '%s\n' |
    awk '{ s += $1 } END { print s + 0 }')
  awk -v e="$events" -v b="$bytes" '
    /discarded [0-9]+ event/ { for (i = 1; i < NF; i++) if ($i == "discarded") d += $(i + 1) }
    /discarded [0-9]+ packet/ { for (i = 1; i < NF; i++) if ($i == "discarded") l += $(i + 1) }
    /discarded a number of event/ { d++ }
    /discarded a number of packet/ { l++ }
    END { print e, b, d + 0, l + 0 }' "$out/bt.err"
}

# measure ROW CTX [BIN SUFFIX]: appends "ROW(SUFFIX) CTX INSTR EVENTS
# BYTES DISCARDED LOST" to $out/figures (plain: instructions only).
measure() {
  local row=$1 ctx=$2 bin=${3:-$bin} sfx=${4:-} n e b d l cg_e cg_d cg_l instr
  e=-1 b=-1 d=0 l=0
  if [[ $row != plain ]]; then
    session_new "$ctx"
    in_session "$bin" "$row" "$warm" "$hops"
    n=$(awk '/^hops/ { print $2 }' "$out/run")
    trace_figures >"$out/tf"
    read -r e b d l <"$out/tf"
    e=$(awk -v x="$e" -v n="$n" 'BEGIN { printf "%.4f", x / n }')
    b=$(awk -v x="$b" -v n="$n" 'BEGIN { printf "%.2f", x / n }')
    session_end
  fi
  session_new "$ctx"
  in_session valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$out/cg" "$bin" "$row" "$warm" "$cg_hops"
  instr=$(awk -v n="$cg_hops" '/^totals:/ { printf "%.1f", $2 / n }' "$out/cg")
  n=$(awk '/^hops/ { print $2 }' "$out/run")
  trace_figures >"$out/tf"
  read -r cg_e _ cg_d cg_l <"$out/tf"
  session_end
  # what the callgrind run recorded must match the native run, or its
  # instructions are not those of the same recording
  if [[ $row != plain ]] && awk -v x="$cg_e" -v n="$n" -v e="$e" \
    'BEGIN { exit !((x / n - e) ^ 2 > 1e-4) }'; then
    echo "# WARNING: $row$sfx ctx=$ctx: $cg_e events in $n hops under callgrind, $e a hop natively" \
      >>"$out/figures"
  fi
  echo "$row$sfx $ctx $instr $e $b $((d + cg_d)) $((l + cg_l))" | tee -a "$out/figures" >&2
}

for ctx in 0 1; do
  for row in span traced; do
    measure "$row" "$ctx"
  done
done
measure traced_kv 0
measure plain 0
for row in span traced traced_kv plain; do
  measure "$row" 0 "$bin_so" .so
done

{
  echo "# one hop, span API: a child span of one sampled root: cs, sr, one integer key-value, ss, cr, finish"
  echo "# one hop, messenger: one request and its reply over loopback TCP (client and server spans, both sides), sampling 100 %, one request at a time"
  echo "# traced_kv: the same hop, the server's handler adding one integer key-value to its span (ht_request_kv_int)"
  echo "# instructions: user space, valgrind --tool=callgrind, only the measured loop of $cg_hops hops (after $warm warm-up), while a session records"
  echo "# (under valgrind each event's clock_gettime and sched_getcpu are system calls, ~10 and ~30 user-space instructions; natively the vDSO and rseq answer them in user space)"
  echo "# events, bytes: one session per row, $hops hops (+$warm warm-up); hoptrace:* events (babeltrace2), stream files without metadata and index/"
  echo "# sessions: as \`hoptrace record\`: user-space channel, per-user buffers, $nsubbuf x $subbuf sub-buffers a CPU, hoptrace:*; only this process tracked"
  echo "# other LTTng sessions active meanwhile: $others"
  echo "# Blkin: quoted (measured elsewhere with callgrind, not on this machine)"
  echo "# $(lttng --version | head -1), lttng-ust $(dpkg-query -W -f='${Version}' liblttng-ust1 2>/dev/null || echo '?'), $(valgrind --version)"
} >>"$out/figures"
"$bin" report "$out/figures"
