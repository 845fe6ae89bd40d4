#!/usr/bin/env bash
# Push benchmark: `hoptrace export --to` of a recorded trace to a receiver
# on loopback that discards (tests/ship/receiver/receiver.js --discard 1:
# each request read and answered 200, nothing decoded), so the figure is
# the tool's: reading, assembling, encoding, compressing, posting.
# Goal: >= 200,000 spans/s on 2 CPUs. Seconds: best of 3 runs
# (the machine is shared and noisy); peak memory: the maximum RSS of the
# hoptrace process (GNU time %M; its decoder processes not included).
# Prints a table and writes bench/results/ship.txt.
# usage: bench/ship/run.sh [BUILD_DIR]   (default build/)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
hoptrace=$build/tools/hoptrace/hoptrace
workload=$build/tests/tool/trace_workload
export HT_LTTNG_PROVIDER=$build/libhoptrace-tp.so
work=$(mktemp -d /tmp/hoptrace-bench-ship.XXXXXX)
rpid=
trap '[[ -n $rpid ]] && kill $rpid; rm -rf "$work"' EXIT
traces=${HT_BENCH_TRACES:-50000} # 8 spans a trace (fanout 3): 400,000 spans
results=$src/bench/results/ship.txt

cp "$src/tests/ship/receiver/package.json" "$src/tests/ship/receiver/package-lock.json" \
  "$src/tests/ship/receiver/"*.js "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
"$hoptrace" record -o "$work/trace" --subbuf-size 8M --num-subbuf 8 -- \
  "$workload" --traces "$traces" --fanout 3 2> "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log" ||
  { cat "$work/record.log" >&2; echo "the recording lost events" >&2; exit 1; }

node "$work/receiver.js" --port-file "$work/port" --out /dev/null --discard 1 &
rpid=$!
for _ in $(seq 300); do [[ -s $work/port ]] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$work/port")"

rows=()
run() { # label, export options... (opts_env: environment assignments)
  local label=$1 best="" mem=0 spans=0 qpeak=0 q; shift
  for _ in 1 2 3; do
    env $opts_env /usr/bin/time -f "%e %M" -o "$work/time" "$hoptrace" export --to "$url" \
      "$@" "$work/trace" 2> "$work/push.log"
    read -r secs kb < "$work/time"
    spans=$(sed -n 's/.*: \([0-9]*\) spans read, [0-9]* sent, \([0-9]*\) accepted.*/\2/p' \
      "$work/push.log")
    grep -q " 0 dropped" "$work/push.log" || { cat "$work/push.log" >&2; exit 1; }
    if [[ -z $best ]] || awk -v a="$secs" -v b="$best" 'BEGIN {exit !(a < b)}'; then best=$secs; fi
    (( kb > mem )) && mem=$kb
    q=$(sed -n 's/.*queue peak \([0-9]*\) bytes.*/\1/p' "$work/push.log")
    (( q > qpeak )) && qpeak=$q
  done
  rows+=("$(awk -v l="$label" -v n="$spans" -v s="$best" -v m="$mem" -v q="$qpeak" 'BEGIN {
    r = n / (s > 0 ? s : 0.01);
    printf "%-28s %9d %8.2f %12.0f %9.1f %9.1f  %s", l, n, s, r, m / 1024, q / 1048576,
           (r >= 200000 ? "met" : "NOT met") }')")
}
opts_env=OTEL_EXPORTER_OTLP_COMPRESSION=gzip run "otlp protobuf, gzip"
opts_env=OTEL_EXPORTER_OTLP_COMPRESSION=none run "otlp protobuf, no gzip"
opts_env=OTEL_EXPORTER_OTLP_COMPRESSION=gzip run "otlp, gzip, --queue-mib 4" --queue-mib 4
opts_env=OTEL_EXPORTER_OTLP_COMPRESSION=gzip run "zipkin json" --to-format zipkin

{
  echo "# hoptrace benchmark: ship (export --to a discarding receiver on loopback)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  commit: $(git -C "$src" describe --always --dirty)"
  echo "# machine: $(uname -sr), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "# $traces traces of 8 spans, best of 3 wall-clock runs on a shared, noisy machine;"
  echo "# the receiver (Node.js) shares the CPUs. Goal: >= 200,000 spans/s."
  echo
  echo "# peak MiB: the tool's maximum RSS; queue MiB: the queue's peak (encoded batches)"
  printf "%-28s %9s %8s %12s %9s %9s  %s\n" "push" "spans" "seconds" "spans/s" "peak MiB" \
    "queue MiB" "goal"
  printf "%s\n" "${rows[@]}"
} | tee "$results"
