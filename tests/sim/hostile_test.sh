#!/usr/bin/env bash
# Hostile peers against a live OSD: a 3-OSD traced cluster with
# one legitimate sim-client (read-your-writes verification) while
# sim-hostile attacks osd.0 on other connections: random bytes, truncated
# and oversized frames, slowloris, malformed envelopes and trace contexts,
# DEBUG floods, connection storms beyond the listener limit. Bounded: the
# cluster and every process have deadlines; `timeout` guards the rest.
#
# usage: hostile_test.sh BINDIR HOSTILE PROVIDER WORKDIR [SECONDS]
#   BINDIR has sim-osd and sim-client; SECONDS is the client's run (30).
# Env: HT_HOSTILE_SEED (default: random, printed), HT_HOSTILE_CONNS (48),
#      HT_HOSTILE_ONLY (one attack kind, e.g. debug-flood),
#      HT_HOSTILE_STORM (300), HT_HOSTILE_RSS_CAP_MIB (256),
#      HT_HOSTILE_RSS_MARGIN_MIB (32).
#
# Passes when: sim-hostile's checks hold (OSD answers a legitimate request
# at the end, is alive, RSS bounded, remote DEBUG rate-limited, slowloris
# connections closed by the OSD's frame timeout, never sent a malformed
# frame), the client has 0 verification failures, 0 hung and
# 0 failed operations (the hostile traffic is on other connections), and
# every OSD exits 0 on SIGTERM.
set -euo pipefail
bin=$1 hostile=$2 provider=$3 work=$4 secs=${5:-30}
src=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$src/examples/client-osd-sim/cluster.sh
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
# the OSDs trust remote DEBUG flags, at most 20 a second: the flood must
# be cut down to that
debug_rate=20
export HT_TRUST_REMOTE_DEBUG=1 HT_REMOTE_DEBUG_RATE=$debug_rate
limit=256 # accepted connections per OSD listener (the storm goes beyond)
frame_ms=2000 # an OSD closes a connection whose frame is not whole by then

# HT_TEST_WRAPPER="valgrind ..." (scripts/valgrind.sh) runs sim-hostile,
# and through cluster.sh every OSD and the client, under it; HT_TEST_SLOW=1
# then gives requests generous timeouts, uses fewer hostile connections,
# and allows for valgrind's own memory (its RSS is the OSD's plus shadow).
wrap=() slow=() conns=48 storm=300 cap=256 margin=32
[[ -n ${HT_TEST_WRAPPER:-} ]] && read -ra wrap <<< "$HT_TEST_WRAPPER"
# Under ASan (scripts/test.sh --sanitize) the RSS is ASan's too: shadow
# memory and the quarantine of freed blocks (kept small here).
if [[ $(ldd "$bin/sim-osd" 2>/dev/null) == *libasan* ]]; then # (no pipe: grep -q + pipefail races)
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=32"
  cap=768 margin=64
fi
if [[ -n ${HT_TEST_SLOW:-} ]]; then
  slow=(--client-arg --timeout-ms --client-arg 20000 --osd-arg --replica-timeout-ms
        --osd-arg 10000)
  conns=16 storm=100 cap=1024 margin=64 limit=64
fi

timeout -s KILL $((secs + 120)) bash "$cluster" --bin "$bin" --work "$work/c" \
  --messenger traced --osds 3 --clients 1 --duration "$secs" --inflight 8 --ctl \
  --osd-arg --max-connections --osd-arg "$limit" --osd-arg --frame-timeout-ms \
  --osd-arg "$frame_ms" "${slow[@]}" 2> "$work/cluster.log" &
cluster_pid=$!

for ((t = 0; t < 900; t++)); do
  [[ -f $work/c/ready.2 && -f $work/c/ready.1 && -f $work/c/ready.0 ]] && break
  kill -0 "$cluster_pid" 2>/dev/null || break
  sleep 0.1
done
pid=$(sed -n 's/^osd\.0: serving on .*pid \([0-9]*\))$/\1/p' "$work/c/logs/osd.0.log" | head -1)
url=$(awk '$1 == "osd" && $2 == 0 { print $3 }' "$work/c/cluster.map")
if [[ -z $pid || -z $url ]]; then
  wait "$cluster_pid" || true
  cat "$work/cluster.log" >&2
  echo "hostile: the cluster did not start" >&2
  exit 1
fi
sleep 1 # the client connects first: its connections are not in the storms

seed=${HT_HOSTILE_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
hrc=0
timeout -s KILL $((secs + 60)) "${wrap[@]}" "$hostile" --url "$url" \
  --duration $((secs - 5)) --seed "$seed" \
  --conns "${HT_HOSTILE_CONNS:-$conns}" --storm "${HT_HOSTILE_STORM:-$storm}" --storm-every 5 \
  --pid "$pid" --rss-cap-mib "${HT_HOSTILE_RSS_CAP_MIB:-$cap}" \
  --rss-margin-mib "${HT_HOSTILE_RSS_MARGIN_MIB:-$margin}" \
  --control "$work/c/ctl/osd.0.sock" --debug-rate "$debug_rate" --frame-timeout-ms "$frame_ms" \
  ${HT_HOSTILE_ONLY:+--only "$HT_HOSTILE_ONLY"} > "$work/hostile.txt" || hrc=$?
crc=0
wait "$cluster_pid" || crc=$?
cat "$work/hostile.txt"
cat "$work/cluster.log"
echo "osd.0 log lines about closed connections: $(grep -c "closing connection" "$work/c/logs/osd.0.log" || true)"

field() { # the client's SIM-CLIENT field NAME
  sed -n 's/^SIM-CLIENT .* '"$1"'=\([0-9.]*\).*/\1/p' "$work/c/clients.txt" | head -1
}
ok=1
[[ $hrc == 0 ]] || { echo "hostile: sim-hostile failed (exit $hrc, seed $seed)" >&2; ok=0; }
[[ $crc == 0 ]] || { echo "hostile: the cluster failed (exit $crc): a client or an OSD" >&2; ok=0; }
verified=$(field verified) vf=$(field verify_failures) failed=$(field failed) hung=$(field hung)
echo "legitimate client: ${verified:-?} reads verified, ${vf:-?} verification failures," \
     "${failed:-?} failed, ${hung:-?} hung"
[[ ${verified:-0} -gt 100 && ${vf:-1} == 0 && ${hung:-1} == 0 && ${failed:-1} == 0 ]] || {
  echo "hostile: the legitimate client suffered (seed $seed)" >&2; ok=0; }
[[ $ok == 1 ]] || exit 1
echo "hostile: passed (seed $seed)"
