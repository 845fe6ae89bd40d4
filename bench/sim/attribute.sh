#!/usr/bin/env bash
# Where recording costs the cluster its instructions: runs the bench/sim
# workload (4 OSDs, 2 clients x 16 in flight) twice, plain and traced at
# 100 % inside a `hoptrace record` session, with every OSD and client
# under callgrind, and prints user-space instructions per cluster
# operation (all OSDs together, both clients together), the difference
# by shared object and the functions that differ most. Exact where wall
# time on a shared machine is not: a run's counts move only with what the
# workload did (reads and writes in other proportions), about 1 %.
# Start-up and shutdown are counted too, divided among the operations.
# With MODE flight the second run is flight mode instead (HT_FLIGHT=1
# under `hoptrace record --flight`, head sampling 1 %: every request
# recorded into the rings, nothing written, no trigger firing); with MODE
# memory, HT_FLIGHT=memory (the same, the sides and key-values in each
# process's own rings).
#   bench/sim/attribute.sh [BUILD_DIR] [SECONDS] [TOP] [traced|flight|memory]
#   (defaults: build, 15, 25, traced)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
secs=${2:-15} top=${3:-25} second=${4:-traced}
sim=$build/examples/client-osd-sim
export HT_LTTNG_PROVIDER=$build/libhoptrace-tp.so
out=$(mktemp -d /tmp/ht-sim-cg-XXXXXX)
trap 'rm -rf "$out"' EXIT
# Each program under callgrind, its profile named by process id.
for prog in osd client; do
  printf '#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file="$HT_CG_DIR/cg.%s.%%p" %q "$@"\n' \
    "$prog" "$sim/sim-$prog" >"$out/$prog.sh"
  chmod +x "$out/$prog.sh"
done
for mode in plain traced; do
  mkdir -p "$out/$mode"
  args=(--bin "$sim" --osd-exe "$out/osd.sh" --client-exe "$out/client.sh"
        --work "$out/$mode/w" --osds 4 --clients 2 --inflight 16 --duration "$secs")
  if [[ $mode == plain ]]; then
    HT_CG_DIR=$out/$mode bash "$src/examples/client-osd-sim/cluster.sh" "${args[@]}" \
      --messenger plain >"$out/$mode/log" 2>&1
  elif [[ $second == flight || $second == memory ]]; then
    flight=1
    [[ $second == memory ]] && flight=memory
    echo "in flight mode (HT_FLIGHT=$flight), head sampling 1 %" >"$out/$mode/label"
    HT_FLIGHT=$flight HT_CG_DIR=$out/$mode "$build/tools/hoptrace/hoptrace" record --flight \
      -o "$out/$mode/trace" -- \
      bash "$src/examples/client-osd-sim/cluster.sh" "${args[@]}" --messenger traced \
      --sample-ratio 0.01 >"$out/$mode/log" 2>&1
  else
    HT_CG_DIR=$out/$mode "$build/tools/hoptrace/hoptrace" record -o "$out/$mode/trace" -- \
      bash "$src/examples/client-osd-sim/cluster.sh" "${args[@]}" --messenger traced \
      --sample-ratio 1 >"$out/$mode/log" 2>&1
  fi
  grep -o '[0-9]* ops, [0-9]* failed' "$out/$mode/log" | cut -d' ' -f1 >"$out/$mode/ops" || {
    echo "attribute.sh: the $mode run failed:" >&2; cat "$out/$mode/log" >&2; exit 1; }
done
grep -h "hoptrace events" "$out/traced/log" || true
python3 "$src/bench/sim/cg_per_op.py" "$out" "$top"
