#!/usr/bin/env bash
# The tool under careless use: an
# interrupted run fails and leaves no complete-looking output; -o FILE is
# replaced only by a finished run; a bad input or an output inside the
# input costs no file; a full disk is reported as such; lax numbers and
# trace ids are refused.
# usage: tool_misuse.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4 src=$5
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
fail() { echo "FAIL: $*" >&2; exit 1; }
# the small committed trace for what needs no big input (copied: nothing
# may write into the source tree)
cp -r "$src/data/schema1/trace" "$work/small"

## 13: --trace-id, --grace, --timeout, --warmup
for id in -000000000000001 0x00000000000001 " 000000000000001" +000000000000001 \
          00000000000000000000000000000x01 0000000000000001x; do
  if "$hoptrace" export --format zipkin -q --trace-id "$id" "$work/small" > /dev/null 2> "$work/err"; then
    fail "--trace-id '$id' accepted"
  fi
  grep -q -- "--trace-id wants 16 or 32 hex digits" "$work/err" || fail "--trace-id '$id': $(cat "$work/err")"
done
"$hoptrace" export --format zipkin -q --trace-id 00000000000000AbcDef0000000000001 "$work/small" \
  > /dev/null 2>&1 && fail "33 digits accepted"
"$hoptrace" export --format zipkin -q --trace-id 0123456789abcdef0123456789ABCDEF "$work/small" > "$work/id.json"
[[ $(cat "$work/id.json") == "[]" ]] || fail "unknown trace id: $(head -c 200 "$work/id.json")"
for opt in --grace --timeout --warmup; do
  for v in nan NAN inf -inf -1 -0 1e999 86401 " 1" "" 1x 0x; do
    if "$hoptrace" export --format zipkin -q "$opt" "$v" "$work/small" > /dev/null 2> "$work/err"; then
      fail "$opt '$v' accepted"
    fi
    grep -q -- "$opt wants a number of seconds from 0 to 86400, not '$v'" "$work/err" ||
      fail "$opt '$v': $(cat "$work/err")"
  done
  "$hoptrace" export --format zipkin -q "$opt" 0.5 "$work/small" > /dev/null || fail "$opt 0.5 refused"
done
if "$hoptrace" view --format zipkin "$work/small" > /dev/null 2> "$work/err"; then fail "view --format accepted"; fi
grep -q "hoptrace view: --format is an option of export and report only" "$work/err" ||
  fail "view --format: $(cat "$work/err")"
if "$hoptrace" report --format zipkin "$work/small" > /dev/null 2> "$work/err"; then
  fail "report --format zipkin accepted"
fi
grep -q "hoptrace report: unknown format 'zipkin' (text, json)" "$work/err" ||
  fail "report --format zipkin: $(cat "$work/err")"
echo "13: lax trace ids and seconds refused, --format of report/view explained"

## 3: the input is checked before the output is touched
echo '{"keep": true}' > "$work/keep.json"
for cmd in "export --format zipkin" report view; do
  # shellcheck disable=SC2086
  if "$hoptrace" $cmd -o "$work/keep.json" "$work/no-such-dir" 2> "$work/err"; then
    fail "$cmd of a missing input succeeded"
  fi
  grep -q "no-such-dir: No such file or directory" "$work/err" || fail "$cmd: $(cat "$work/err")"
  [[ $(cat "$work/keep.json") == '{"keep": true}' ]] || fail "$cmd: a missing input truncated keep.json"
done
# an output inside an input trace directory: refused, naming both
streams=$(find "$work/small" -name metadata -printf '%h\n' | head -n1)
cp -r "$work/small" "$work/small.orig"
ln -s "$streams/metadata" "$work/link-to-metadata"
for out in "$work/small/out.json" "$streams/out.json" "$streams/metadata" "$work/small/ust/../x.json" \
           "$work/link-to-metadata"; do
  if "$hoptrace" export --format zipkin -o "$out" "$work/small" 2> "$work/err"; then
    fail "output $out inside the input accepted"
  fi
  grep -q "the output $out lies inside the input trace directory $work/small" "$work/err" ||
    fail "output $out: $(cat "$work/err")"
done
diff -r "$work/small" "$work/small.orig" || fail "the input trace changed"
echo "3: inputs checked first, outputs inside inputs refused"

## 11: a full disk reported as such; a non-regular -o written directly
for cmd in "export --format zipkin" "export --format otlp" report view; do
  # shellcheck disable=SC2086
  if "$hoptrace" $cmd -o /dev/full "$work/small" 2> "$work/err"; then
    fail "$cmd -o /dev/full succeeded"
  fi
  grep -q "cannot write /dev/full: No space left on device" "$work/err" || fail "$cmd: $(cat "$work/err")"
  # shellcheck disable=SC2086
  if "$hoptrace" $cmd -q -o - "$work/small" > /dev/full 2> "$work/err"; then
    fail "$cmd > /dev/full succeeded"
  fi
  grep -q "cannot write standard output: No space left on device" "$work/err" ||
    fail "$cmd > /dev/full: $(cat "$work/err")"
done
mkfifo "$work/fifo"
cat "$work/fifo" > "$work/from-fifo.json" &
"$hoptrace" export --format zipkin -q -o "$work/fifo" "$work/small"
wait $!
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))' "$work/from-fifo.json"
echo "11: ENOSPC reported, FIFO written directly"

## modes and atomic replacement
umask 027
"$hoptrace" export --format zipkin -q -o "$work/new.json" "$work/small"
[[ $(stat -c %a "$work/new.json") == 640 ]] || fail "new file mode $(stat -c %a "$work/new.json")"
echo old > "$work/mode.json" && chmod 604 "$work/mode.json"
"$hoptrace" export --format zipkin -q -o "$work/mode.json" "$work/small"
[[ $(stat -c %a "$work/mode.json") == 604 ]] || fail "replaced file mode $(stat -c %a "$work/mode.json")"
umask 022
# a symlinked output: its target is replaced, the link stays
echo old > "$work/link-target.json" && ln -s link-target.json "$work/link.json"
"$hoptrace" export --format zipkin -q -o "$work/link.json" "$work/small"
[[ -L "$work/link.json" ]] || fail "the symlink was replaced"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))' "$work/link-target.json"
# two exports to one file at once: one whole document
mkdir "$work/both"
"$hoptrace" export --format zipkin -q -o "$work/both/z.json" "$work/small" &
"$hoptrace" export --format otlp -q -o "$work/both/z.json" "$work/small"
wait $!
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))' "$work/both/z.json"
[[ $(ls -A "$work/both") == z.json ]] || fail "left: $(ls -A "$work/both")"
echo "atomic: modes kept, symlinks followed, concurrent writers give one whole file"

## 1: interrupted runs
traces=100000
# 64 MiB of ring buffer a CPU: the whole recording fits even when a busy
# machine keeps the consumer daemon from draining it (0 discards needed)
timeout 300 "$hoptrace" record -o "$work/big" --subbuf-size 8M --num-subbuf 8 --filter '$ctx.procname == "trace_workload"' -- \
  "$workload" --traces $traces --fanout 2 2> "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log" || { cat "$work/record.log"; fail "discards"; }
# catching PID SIG: whether PID has a handler for SIG (its SigCgt mask)
catching() {
  local mask
  mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
  [[ -n $mask ]] && (((16#$mask >> ($(kill -l "$2") - 1)) & 1))
}
# run COMMAND... in the background, signal it 0.2 s after it handles the
# signal (a slow start, e.g. under ASan, must not meet the default
# action); $status its exit
interrupt() {
  local sig=$1; shift
  "$@" 2> "$work/int.err" & local pid=$!
  for ((i = 0; i < 200; i++)); do catching $pid "$sig" && break; sleep 0.05; done
  sleep 0.2
  kill -0 $pid 2>/dev/null || fail "$* ended within 0.2 s: the input is too small"
  kill -s "$sig" $pid
  status=0; wait $pid || status=$?
}
for cmd in "export --format zipkin" "export --format chrome" report view; do
  for sig in INT TERM; do
    want=$([[ $sig == INT ]] && echo 130 || echo 143)
    rm -rf "$work/out" && mkdir "$work/out"
    echo '{"keep": true}' > "$work/out/keep.json"
    # shellcheck disable=SC2086
    interrupt $sig "$hoptrace" $cmd -o "$work/out/keep.json" "$work/big"
    [[ $status == "$want" ]] || fail "$cmd, SIG$sig: exit $status, not $want"
    grep -q "interrupted by SIG$sig" "$work/int.err" || fail "$cmd, SIG$sig: $(cat "$work/int.err")"
    grep -q "wrote" "$work/int.err" && fail "$cmd, SIG$sig: says it wrote the file"
    [[ $(cat "$work/out/keep.json") == '{"keep": true}' ]] || fail "$cmd, SIG$sig: target changed"
    [[ $(ls -A "$work/out") == keep.json ]] || fail "$cmd, SIG$sig: left $(ls -A "$work/out")"
    # shellcheck disable=SC2086
    interrupt $sig "$hoptrace" $cmd -o "$work/out/new.json" "$work/big"
    [[ $status == "$want" ]] || fail "$cmd, SIG$sig (new file): exit $status"
    [[ ! -e "$work/out/new.json" ]] || fail "$cmd, SIG$sig: an interrupted run created its output"
    [[ $(ls -A "$work/out") == keep.json ]] || fail "$cmd, SIG$sig: left $(ls -A "$work/out")"
  done
  echo "1: $cmd -o interrupted: exit 130/143, target untouched, nothing left"
done
# stdout: an error and an unterminated document
interrupt INT "$hoptrace" export --format zipkin "$work/big" > "$work/stdout.json"
[[ $status == 130 ]] || fail "export to stdout, SIGINT: exit $status"
grep -q "interrupted by SIGINT: the output is incomplete" "$work/int.err" || fail "$(cat "$work/int.err")"
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/stdout.json" 2>/dev/null; then
  fail "an interrupted export to stdout is a complete JSON document"
fi
# and an uninterrupted run of the same input still succeeds
"$hoptrace" export --format zipkin -o "$work/out/keep.json" "$work/big" 2> "$work/ok.err"
grep -q "wrote $work/out/keep.json" "$work/ok.err"
grep -q "$traces traces (0 incomplete" "$work/ok.err"
# 11 with a big output (the writer thread, the decoders): still ENOSPC
for cmd in "export --format zipkin" view; do
  # shellcheck disable=SC2086
  if "$hoptrace" $cmd -q -o /dev/full "$work/big" 2> "$work/err"; then fail "$cmd -o /dev/full succeeded"; fi
  grep -q "cannot write /dev/full: No space left on device" "$work/err" || fail "$cmd, big: $(cat "$work/err")"
done
rm -rf "$work/big" "$work/out" # ~100 MB
echo "tool misuse test passed"
