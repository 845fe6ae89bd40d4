#!/usr/bin/env bash
# Hostile peers against a live OSD (issue 9): a 3-OSD traced cluster with
# one legitimate sim-client (read-your-writes verification) while
# sim-hostile attacks osd.0 on other connections: random bytes, truncated
# and oversized frames, slowloris, malformed envelopes and trace contexts,
# DEBUG floods, connection storms beyond the listener limit. Bounded: the
# cluster and every process have deadlines; `timeout` guards the rest.
#
# usage: hostile_test.sh BINDIR HOSTILE PROVIDER WORKDIR [SECONDS]
#   BINDIR has sim-osd and sim-client; SECONDS is the client's run (30).
# Env: HT_HOSTILE_SEED (default: random, printed), HT_HOSTILE_CONNS (48),
#      HT_HOSTILE_STORM (300), HT_HOSTILE_RSS_CAP_MIB (256),
#      HT_HOSTILE_RSS_MARGIN_MIB (32).
#
# Passes when: sim-hostile's checks hold (OSD answers a legitimate request
# at the end, is alive, RSS bounded, remote DEBUG rate-limited, never sent
# a malformed frame), the client has 0 verification failures, 0 hung and
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

"$bin/sim-osd" --check-messenger --messenger traced 2>/dev/null || {
  echo "the traced messenger is not in this build: skipped" >&2; exit 77; }

wrap=()
[[ -n ${HT_TEST_WRAPPER:-} ]] && read -ra wrap <<< "$HT_TEST_WRAPPER"

timeout -s KILL $((secs + 120)) bash "$cluster" --bin "$bin" --work "$work/c" \
  --messenger traced --osds 3 --clients 1 --duration "$secs" --inflight 8 --ctl \
  --osd-arg --max-connections --osd-arg "$limit" 2> "$work/cluster.log" &
cluster_pid=$!

for ((t = 0; t < 300; t++)); do
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
  --conns "${HT_HOSTILE_CONNS:-48}" --storm "${HT_HOSTILE_STORM:-300}" --storm-every 5 \
  --pid "$pid" --rss-cap-mib "${HT_HOSTILE_RSS_CAP_MIB:-256}" \
  --rss-margin-mib "${HT_HOSTILE_RSS_MARGIN_MIB:-32}" \
  --control "$work/c/ctl/osd.0.sock" --debug-rate "$debug_rate" \
  > "$work/hostile.txt" || hrc=$?
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
