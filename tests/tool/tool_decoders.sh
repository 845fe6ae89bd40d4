#!/usr/bin/env bash
# Parallel decoding on a real recorded session: two workloads pinned to
# CPUs 0 and 1 fill two stream files; every output of `--decoders 2`
# (one decoder process per stream file) must hold the same spans as the
# in-process graph (`--decoders 1`) and match what the workloads say they
# recorded; the temporary link directories are gone afterwards. A killed
# decoder fails the run; SIGTERM ends it and its decoders (exit 143); neither
# leaves an output file.
# usage: tool_decoders.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
rm -rf "$work" && mkdir -p "$work/tmp"
export HT_LTTNG_PROVIDER=$provider
if [[ $(nproc) -lt 2 ]]; then
  echo "one CPU: a trace has one stream file, nothing to decode in parallel" >&2
  exit 77
fi
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }

timeout 120 "$hoptrace" record -o "$work/trace" --filter '$ctx.procname == "trace_workload"' -- \
  bash -c "taskset -c 0 '$workload' --traces 300 --fanout 2 --expect '$work/expect0.txt' &
           taskset -c 1 '$workload' --traces 300 --fanout 3 --expect '$work/expect1.txt'
           wait" 2> "$work/record.log"
cat "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log"
cat "$work/expect0.txt" "$work/expect1.txt" > "$work/expect.txt"
streams=$(find "$work/trace" -type f -size +0 -name 'hoptrace_*' ! -name '*.idx' | wc -l)
echo "stream files with data: $streams"
[[ $streams -ge 2 ]]

export TMPDIR=$work/tmp
for d in 1 2; do
  for f in zipkin otlp chrome; do
    timeout 120 "${tool[@]}" export --decoders $d --format $f -o "$work/$f-$d.json" "$work/trace" \
      2> "$work/export-$f-$d.log"
  done
  timeout 120 "${tool[@]}" report --decoders $d -o "$work/report-$d.txt" "$work/trace" 2> /dev/null
  python3 "$src/check_outputs.py" "$work/expect.txt" "$work/zipkin-$d.json" \
    "$work/otlp-$d.json" "$work/chrome-$d.json" "$work/report-$d.txt"
done
grep -h "events," "$work/export-zipkin-1.log" "$work/export-zipkin-2.log"
# the same summary line (counts) both ways
[[ $(grep "events," "$work/export-zipkin-1.log") == $(grep "events," "$work/export-zipkin-2.log") ]]
python3 "$src/same_zipkin.py" "$work/zipkin-1.json" "$work/zipkin-2.json" $((300 * 4 + 300 * 5))
if [[ -n $(ls -A "$work/tmp") ]]; then
  echo "temporary directories left behind: $(ls "$work/tmp")" >&2
  exit 1
fi
# a bad --decoders value is refused
if "$hoptrace" export --decoders 0 --format zipkin "$work/trace" 2>/dev/null; then exit 1; fi

# Failures, on a trace big enough (well over 8 MiB of decoded events a
# decoder, schema 2 events being small) that the decoders are still at work
# while the reading process is stopped: each decoder fills its 8 blocks
# and waits. A decoder killed then ends the run with an error (no hang);
# SIGTERM to the reading process ends the decoders and leaves nothing.
timeout 120 "$hoptrace" record -o "$work/big" --subbuf-size 4M \
  --filter '$ctx.procname == "trace_workload"' -- \
  bash -c "taskset -c 0 '$workload' --traces 8000 --fanout 3 &
           taskset -c 1 '$workload' --traces 8000 --fanout 3; wait" 2> "$work/record-big.log"
cat "$work/record-big.log"
# A damaged stream: the same error both ways, naming the user's trace
# directory below the input (not a decoder's link directory), and a
# non-zero exit. The damage is a packet header (magic number) in the middle
# of a stream file, which no CTF reader can take for data: bytes overwritten
# inside events can decode as events whose time goes back, which
# babeltrace2's muxer refuses and hoptrace reads (bt_merge.h), so they
# compare nothing.
cp -r "$work/big" "$work/damaged"
damaged=$(find "$work/damaged" -type f -size +0 -name 'hoptrace_[0-9]*' ! -name '*.idx' | head -n1)
python3 - "$damaged" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
magic = bytes.fromhex("c11ffcc1")  # CTF packet magic 0xc1fc1fc1, little-endian
second = 4 << 20  # packets fill whole sub-buffers (--subbuf-size 4M)
if data[second:second + 4] != magic:
    sys.exit(f"{path}: no second packet at {second}, nothing to damage mid-stream")
data[second:second + 4] = b"\xff" * 4
open(path, "wb").write(data)
PY
if babeltrace2 -o dummy "$work/damaged" 2>/dev/null; then
  echo "babeltrace2 reads the damaged copy without an error" >&2; exit 1
fi
for d in 1 2; do
  if "${tool[@]}" export --decoders $d --format zipkin -o /dev/null "$work/damaged" \
    2> "$work/damaged-$d.log"; then
    echo "export of a damaged trace succeeded (--decoders $d)" >&2; exit 1
  fi
  grep "hoptrace: reading $work/damaged/[^ ]*/64-bit failed: Invalid CTF magic" "$work/damaged-$d.log"
done

start_stopped() { # the export, stopped once its two decoders run
  "${tool[@]}" export --decoders 2 --format zipkin -o "$work/partial.json" "$work/big" \
    2> "$work/fail.log" &
  pid=$!
  decoders=
  for _ in $(seq 3000); do
    decoders=$(cat /proc/$pid/task/*/children 2>/dev/null || true)
    [[ $(wc -w <<< "$decoders") -ge 2 ]] && break
    sleep 0.01
  done
  [[ $(wc -w <<< "$decoders") -ge 2 ]] || { echo "no decoder processes" >&2; exit 1; }
  kill -STOP $pid
  sleep 0.5
}
start_stopped
kill -KILL ${decoders%% *}
kill -CONT $pid
if timeout 120 tail --pid=$pid -f /dev/null && wait $pid; then
  echo "export succeeded although a decoder was killed" >&2; exit 1
fi
cat "$work/fail.log"
# how it died, not only that it did
grep -Eq "decoder process [0-9]+ (ended without finishing: )?killed by signal 9 " "$work/fail.log"
# a failed run leaves no output file (-o is written to a temporary file
# renamed only on success)
[[ ! -e "$work/partial.json" ]] || { echo "a failed export left partial.json" >&2; exit 1; }

start_stopped
kill -TERM $pid
kill -CONT $pid
timeout 120 tail --pid=$pid -f /dev/null
status=0; wait $pid || status=$?
for d in $decoders; do
  if kill -0 $d 2>/dev/null; then echo "decoder $d still running" >&2; exit 1; fi
done
# interrupted: exit 128 + SIGTERM, and no output that looks complete
[[ $status == 143 ]] || { echo "export after SIGTERM: exit $status, not 143" >&2; exit 1; }
[[ ! -e "$work/partial.json" ]] || { echo "an interrupted export left partial.json" >&2; exit 1; }
if [[ -n $(ls -A "$work/tmp") ]]; then
  echo "temporary directories left behind: $(ls "$work/tmp")" >&2
  exit 1
fi
echo "tool decoders test passed"
