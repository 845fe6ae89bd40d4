#!/usr/bin/env bash
# Runs side by side on one machine never see each other: two
# demos (run-sim.sh, what `scripts/demo.sh` runs), two `--hosts 3` demos
# (run-hosts.sh) started a few seconds apart, and the soak, all at once.
# Each must pass, and each trace must hold only the processes its own run
# started: every vpid its process and desc events name is one of the pids
# the run's programs logged ("... (pid N)" in their logs).
# usage: side_by_side.sh BUILD WORKDIR SRCDIR
# Exit 77 when namespaces cannot be made here; with HT_NO_SKIP=1 (CI) that
# is a failure instead.
set -euo pipefail
build=$1 work=$2 src=$3
sim=$src/examples/client-osd-sim
rm -rf "$work" && mkdir -p "$work"

source "$src/scripts/hosts.sh"
if ! ht_hosts_supported; then
  [[ -n ${HT_NO_SKIP:-} ]] && { echo "side_by_side: no namespaces here, and HT_NO_SKIP=1" >&2; exit 1; }
  exit 77
fi

pids=() names=()
start() { # start NAME CMD...: in the background, output in WORK/NAME.log
  local name=$1
  shift
  timeout -s INT 400 "$@" > "$work/$name.log" 2>&1 &
  pids+=($!) names+=("$name")
}
light=(--clients 2 --rate 100)
start sim-a bash "$sim/run-sim.sh" --build "$build" --out "$work/sim-a" --duration 10 "${light[@]}"
start hosts-a bash "$sim/run-hosts.sh" --build "$build" --out "$work/hosts-a" --hosts 3 --osds 4 \
  --duration 12 "${light[@]}"
start soak bash "$src/scripts/soak.sh" --build "$build" --out "$work/soak" --duration 30 \
  --clients 2 --rate 50
sleep 4
start sim-b bash "$sim/run-sim.sh" --build "$build" --out "$work/sim-b" --duration 10 "${light[@]}"
start hosts-b bash "$sim/run-hosts.sh" --build "$build" --out "$work/hosts-b" --hosts 3 --osds 4 \
  --duration 12 "${light[@]}"

failed=0
for i in "${!pids[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  echo "${names[$i]}: exit $rc"
  if [[ $rc != 0 ]]; then
    failed=1
    tail -n 40 "$work/${names[$i]}.log"
  fi
done

own() { # own NAME TRACE LOGDIR...: the trace's vpids against the run's pids
  local name=$1 trace=$2 v n=0 bad=0
  shift 2
  cat "$@" 2>/dev/null | sed -n 's/.*(.*pid \([0-9]*\))$/\1/p' | sort -u > "$work/$name.pids"
  # called from '||': set -e is off here, every step checked by hand
  babeltrace2 "$trace" 2>/dev/null | { grep -E 'hoptrace:(process|desc):' || true; } |
    sed -n 's/.*vpid = \([0-9]*\).*/\1/p' | sort -u > "$work/$name.vpids" ||
    { echo "$name: babeltrace2 could not read $trace" >&2; return 1; }
  while read -r v; do
    n=$((n + 1))
    grep -qx "$v" "$work/$name.pids" || { echo "$name: pid $v in its trace is not its own" >&2; bad=1; }
  done < "$work/$name.vpids"
  echo "$name: $n processes in its trace, $(wc -l < "$work/$name.pids") logged by the run"
  [[ $n -gt 0 && $bad == 0 ]]
}
own sim-a "$work/sim-a/trace" "$work"/sim-a/cluster/logs/*.log || failed=1
own sim-b "$work/sim-b/trace" "$work"/sim-b/cluster/logs/*.log || failed=1
own hosts-a "$work/hosts-a/relay" "$work"/hosts-a/cluster/logs/*.log || failed=1
own hosts-b "$work/hosts-b/relay" "$work"/hosts-b/cluster/logs/*.log || failed=1
own soak "$work/soak/trace" "$work"/soak/cluster/logs/*.log || failed=1
grep "^SOAK " "$work/soak.log" || true
[[ $failed == 0 ]] && echo "side by side: every run passed, every trace its own"
exit $failed
