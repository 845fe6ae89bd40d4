#!/usr/bin/env bash
# Cost of one RPC hop recorded, like for like with Blkin: runs
# bench_recording's hops in real LTTng sessions set up as `hoptrace
# record` sets up its spans' channel (one user-space channel, no
# contexts), and writes bench/results/recording.txt. Rows:
#   hop        the two-sided hop through the span API: client span, cs,
#              the request's envelope encoded and decoded, server span
#              (child of the client's, its context from the envelope), sr,
#              one integer key-value, ss, cr, both finished;
#   codec      that envelope's encode and decode alone (the share of the
#              hop Blkin's has no equivalent of);
#   traced_kv  the traced messenger's hop, the handler adding one
#              integer key-value; traced without it; plain (no tracing),
#              which the table subtracts, and plain_kv, the plain
#              messenger running traced_kv's handler (its key-value
#              records nothing there), which traced_kv's rows subtract:
#              the same application code on both sides;
#   blkin      the same two-sided hop through Blkin's API (5 events),
#              when BLKIN_SRC names a Blkin source (bench/blkin/build.sh);
#              else the table quotes DESIGN.md's figures (measured elsewhere).
# Each row recorded ("rec": a session enables the events) and, for the
# hops, "idle": the provider loaded, sampled, no session recording.
# Figures per hop:
#   - events and bytes: one native run of HOPS hops per session, the
#     provider's events counted with babeltrace2, bytes = the stream
#     files (metadata and index/ excluded) / hops;
#   - instructions: CG_HOPS hops under callgrind, only the measured loop
#     (--instr-atstart=no and the program's CALLGRIND_START/STOP toggles);
#   - clock reads: calls to clock_gettime in that same loop, from
#     callgrind's call counts (exact; lttng-ust and hoptrace both read
#     the clock through it).
# Each session tracks only the benchmark's process. Starts lttng-sessiond
# if absent and stops only the one it started; destroys its sessions and
# removes their traces. Rows ending ".so" ran over libhoptrace.so (what
# applications link), the others over libhoptrace.a.
#   [BLKIN_SRC=DIR] [KEEP_CG=DIR] bench/recording/run.sh [BUILD_DIR] [HOPS] [CG_HOPS]
# KEEP_CG: an existing directory where each row's callgrind profile is
# kept (ROW.MODE.cg), to see where a row's instructions go.
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
session="" n_sessions=0 others=0 provider=hoptrace blkin_bin=""
cleanup() {
  [[ -z "$session" ]] || timeout 30 lttng destroy "$session" >/dev/null 2>&1 || true
  rm -rf "$out"
  ht_sessiond_release
}
trap cleanup EXIT
ht_sessiond_ensure

# session_new EVENTS: a created, not yet started session ($session, trace
# in $trace) recording EVENTS (hoptrace:* or zipkin:*) on one channel.
session_new() {
  n_sessions=$((n_sessions + 1))
  session="ht-bench-rec-$$-$n_sessions" trace="$out/trace-$n_sessions"
  lttng create "$session" --output="$trace" >/dev/null
  lttng enable-channel -u -s "$session" --subbuf-size=$subbuf --num-subbuf=$nsubbuf \
    hoptrace >/dev/null
  lttng enable-event -u -s "$session" -c hoptrace "$1" >/dev/null
}

session_end() {
  lttng destroy "$session" >/dev/null
  session=""
  rm -rf "$trace"
}

# run_cmd CMD...: CMD with the provider reachable, output in $out/run.
# Registration may wait 30 s, not 3, so that even under valgrind the
# process records (or knows it need not) from its first hop.
run_cmd() {
  LTTNG_UST_REGISTER_TIMEOUT=30000 HT_LTTNG_PROVIDER="$build/libhoptrace-tp.so.0" \
    timeout 900 "$@" >"$out/run" 2>"$out/run.err" || { cat "$out/run.err" >&2; exit 1; }
  grep -qx "provider loaded" "$out/run" || {
    echo "run.sh: the provider did not load: nothing could be recorded" >&2
    exit 1
  }
}

# in_session CMD...: CMD as the only process the session records, then
# stops it (stop waits until the buffers are on disk).
in_session() {
  # another active session recording these events would record this
  # process too and add to its instructions: say so in the results
  local active
  active=$(lttng list 2>/dev/null | grep -c '\[active\]' || true)
  ((active <= others)) || others=$active
  run_cmd bash -c 'lttng track -u -s "$1" --vpid=$$ >/dev/null &&
      lttng start "$1" >/dev/null && shift && exec "$@"' _ "$session" "$@"
  lttng stop "$session" >/dev/null
}

# trace_figures: "EVENTS BYTES DISCARDED LOST" of $trace (LTTng's
# discarded events and lost packets as babeltrace2 reports them; a count
# it cannot give, "a number of", counts as 1).
trace_figures() {
  local events bytes
  events=$(timeout 600 babeltrace2 "$trace" 2>"$out/bt.err" |
    awk -v p="$provider:" 'index($4, p) == 1 { n++ } END { print n + 0 }')
  bytes=$(find "$trace" -type f ! -name metadata ! -path '*/index/*' -printf '%s\n' |
    awk '{ s += $1 } END { print s + 0 }')
  awk -v e="$events" -v b="$bytes" '
    /discarded [0-9]+ event/ { for (i = 1; i < NF; i++) if ($i == "discarded") d += $(i + 1) }
    /discarded [0-9]+ packet/ { for (i = 1; i < NF; i++) if ($i == "discarded") l += $(i + 1) }
    /discarded a number of event/ { d++ }
    /discarded a number of packet/ { l++ }
    END { print e, b, d + 0, l + 0 }' "$out/bt.err"
}

# cg_figures N: "INSTR CLOCKS" per hop of the callgrind profile $out/cg
# over N hops. Clock reads: calls to clock_gettime (whatever the name
# glibc's symbol has under valgrind) from any function that is not
# itself one of them (its vDSO half is not a second read). Who reads
# it, "caller xREADS" a hop, goes to $out/callers: where to look first
# when the count is over its goal.
cg_figures() {
  awk -v n="$1" -v callers="$out/callers" '
    function name(s,   id) {
      if (s !~ /^\(/) return s
      id = s; sub(/\).*/, ")", id); sub(/^\([0-9]+\) ?/, "", s)
      if (s != "") names[id] = s
      return names[id]
    }
    /^fn=/ { fn = name(substr($0, 4)) }
    /^cfn=/ { cfn = name(substr($0, 5)) }
    /^calls=/ { split(substr($0, 7), a, " ")
      calls[fn, cfn] += a[1]
      if (cfn ~ /clock_gettime/ && fn !~ /clock_gettime/) { c += a[1]; by[fn] += a[1] } }
    /^totals:/ { t = $2 }
    END {
      printf "%.1f %.2f\n", t / n, c / n
      # a caller named by its address is a PLT stub: name who calls it
      for (f in by)
        if (f ~ /^0x/) {
          for (k in calls) {
            split(k, e, SUBSEP)
            if (e[2] == f) by[e[1]] += calls[k]
          }
          delete by[f]
        }
      line = ""
      for (f in by)
        if (by[f] / n >= 0.005)
          line = line sprintf("%s%s x%.2f", line == "" ? "" : ", ", f, by[f] / n)
      print (line == "" ? "none" : line) > callers
    }' "$out/cg"
}

# measure ROW MODE [BIN SUFFIX]: appends "ROW(SUFFIX) MODE INSTR CLOCKS
# EVENTS BYTES DISCARDED LOST" to $out/figures. MODE rec: in sessions
# recording the events (a native one for events and bytes, unless ROW is
# plain or codec, which record nothing; a callgrind one); idle: no
# session, the provider loaded.
measure() {
  local row=$1 mode=$2 bin=${3:-$bin} sfx=${4:-} n e=-1 b=-1 d=0 l=0 cg_e cg_d cg_l
  local cmd=("$bin" "$row") events="hoptrace:*"
  provider=hoptrace
  if [[ $row == blkin ]]; then
    cmd=("$blkin_bin") events="zipkin:*" provider=zipkin
  fi
  cg=(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/cg")
  if [[ $mode == idle ]]; then
    run_cmd "${cg[@]}" "${cmd[@]}" "$warm" "$cg_hops"
    n=$(awk '/^hops/ { print $2 }' "$out/run")
  else
    if [[ $row != plain* && $row != codec ]]; then
      session_new "$events"
      in_session "${cmd[@]}" "$warm" "$hops"
      n=$(awk '/^hops/ { print $2 }' "$out/run")
      trace_figures >"$out/tf"
      read -r e b d l <"$out/tf"
      e=$(awk -v x="$e" -v n="$n" 'BEGIN { printf "%.4f", x / n }')
      b=$(awk -v x="$b" -v n="$n" 'BEGIN { printf "%.2f", x / n }')
      session_end
    fi
    session_new "$events"
    in_session "${cg[@]}" "${cmd[@]}" "$warm" "$cg_hops"
    n=$(awk '/^hops/ { print $2 }' "$out/run")
    trace_figures >"$out/tf"
    read -r cg_e cg_b cg_d cg_l <"$out/tf"
    session_end
    if [[ $row != plain* && $row != codec ]] && ((d + l > 0 && cg_d + cg_l == 0)); then
      # the native run outran the consumer daemon (a burst at full speed
      # on a busy machine); the slower callgrind run's session kept all
      echo "# $row$sfx: the native session discarded $d events and lost $l packets: events and bytes from the callgrind session ($n hops)" \
        >>"$out/figures"
      e=$(awk -v x="$cg_e" -v n="$n" 'BEGIN { printf "%.4f", x / n }')
      b=$(awk -v x="$cg_b" -v n="$n" 'BEGIN { printf "%.2f", x / n }')
      d=0 l=0
    # what the callgrind run recorded must match the native run, or its
    # instructions are not those of the same recording
    elif [[ $row != plain* && $row != codec ]] && awk -v x="$cg_e" -v n="$n" -v e="$e" \
      'BEGIN { exit !((x / n - e) ^ 2 > 1e-4) }'; then
      echo "# WARNING: $row$sfx: $cg_e events in $n hops under callgrind, $e a hop natively" \
        >>"$out/figures"
    fi
    d=$((d + cg_d)) l=$((l + cg_l))
  fi
  echo "$row$sfx $mode $(cg_figures "$cg_hops") $e $b $d $l" | tee -a "$out/figures" >&2
  # profiles kept for callgrind_annotate when asked
  [[ -z ${KEEP_CG:-} ]] || cp "$out/cg" "$KEEP_CG/$row$sfx.$mode.cg"
  [[ $row == codec || -n $sfx ]] ||
    echo "$row $mode $(cat "$out/callers")" >>"$out/clock-callers"
}

blkin_note="# Blkin: quoted from DESIGN.md (measured with callgrind on another machine; set BLKIN_SRC to measure it here)"
# check_hop: the span hop recorded as the row says, read back by the
# tool: per hop a client span (child of the root) and a server span
# whose parent is that client span, carrying the key-value.
check_hop() {
  session_new "hoptrace:*"
  in_session "$bin" hop 0 10
  "$build/tools/hoptrace/hoptrace" export --format zipkin -o "$out/hop.json" "$trace" \
    2>"$out/export.err" || { cat "$out/export.err" >&2; exit 1; }
  session_end
  python3 - "$out/hop.json" <<'PY' || exit 1
import json, sys
spans = json.load(open(sys.argv[1]))
clients = {s["id"] for s in spans if s.get("kind") == "CLIENT"}
servers = [s for s in spans if s.get("kind") == "SERVER"]
# names and services from the interned infos (ht_span_info_intern)
names = {(s.get("kind"), s.get("name"), s.get("localEndpoint", {}).get("serviceName"))
         for s in spans if s.get("kind") in ("CLIENT", "SERVER")}
ok = (len(clients) == 10 and len(servers) == 10 and
      all(s.get("parentId") in clients and s.get("tags", {}).get("bytes") == "4096"
          for s in servers) and
      names == {("CLIENT", "osd_write", "client.4"), ("SERVER", "osd_write", "osd.3")})
if not ok:
    sys.exit(f"run.sh: the span hop is not a client span and its server child with a key-value, named as its infos say: {sorted(names)}")
PY
}
check_hop

# a Blkin that does not build leaves the quoted figures, said so
if [[ -n ${BLKIN_SRC:-} ]] && ! built=$("$root/bench/blkin/build.sh" "$BLKIN_SRC" "$out/blkin"); then
  echo "run.sh: Blkin could not be built from $BLKIN_SRC: its figures are quoted" >&2
  blkin_note="# Blkin: quoted from DESIGN.md (measured with callgrind on another machine; BLKIN_SRC=$BLKIN_SRC did not build)"
elif [[ -n ${BLKIN_SRC:-} ]]; then
  read -r blkin_commit blkin_bin <<<"$built"
  echo "blkin-commit $blkin_commit" >>"$out/figures"
  blkin_note="# Blkin: measured here, ceph/blkin $blkin_commit built by bench/blkin/build.sh from $BLKIN_SRC (-O2 -g, its probes linked in), the same hop: cs, sr, one integer key-value, ss, cr, ids packed and unpacked between the sides"
  measure blkin rec
  measure blkin idle
fi
measure hop rec
measure hop idle
measure codec idle
measure traced_kv rec
measure traced_kv idle
measure traced rec
measure plain rec
measure plain_kv rec
for row in hop codec traced_kv plain plain_kv; do
  mode=rec
  [[ $row != codec ]] || mode=idle
  measure "$row" "$mode" "$bin_so" .so
done
measure hop idle "$bin_so" .so
measure traced_kv idle "$bin_so" .so

{
  echo "# hop: the two-sided hop through the span API: client span (child of one sampled root), cs, the request's envelope encoded with its context and decoded, server span from the decoded context, sr, one integer key-value, ss, cr, both finished; each side's names interned once at setup (ht_span_info_intern), as Blkin's hop passes a name pointer and an endpoint object made once"
  echo "# codec: that envelope's encode and decode alone; the no-session row's own share is the hop minus it"
  echo "# messenger: one request and its reply over loopback TCP, sampling 100 %, one request at a time; traced_kv: the server's handler adds one integer key-value (ht_request_kv_int); rows above plain subtract the plain messenger's instructions and clock reads, running the same handler (a kv row's baseline, plain_kv, runs the kv handler: ht_request_kv_int records nothing on a plain request)"
  echo "# recorded: a session enables the events; no session: the provider loaded (a session daemon running), no session enabling them"
  echo "# instructions: user space, valgrind --tool=callgrind, only the measured loop of $cg_hops hops (after $warm warm-up)"
  echo "# clocks: calls to clock_gettime in that loop, per hop (callgrind's call counts: exact)"
  echo "# events, bytes: one session per row, $hops hops (+$warm warm-up), the provider's events (babeltrace2), stream files without metadata and index/"
  echo "# sessions: one user-space channel, per-user buffers, $nsubbuf x $subbuf sub-buffers a CPU, no contexts (hoptrace:* or zipkin:*); only this process tracked"
  echo "# other LTTng sessions active meanwhile: $others"
  echo "$blkin_note"
  sed 's/^/# clock reads a hop by caller, /' "$out/clock-callers"
  echo "# $(lttng --version | head -1), lttng-ust $(dpkg-query -W -f='${Version}' liblttng-ust1 2>/dev/null || echo '?'), $(valgrind --version)"
} >>"$out/figures"
"$bin" report "$out/figures"
