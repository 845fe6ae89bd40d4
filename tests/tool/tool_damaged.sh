#!/usr/bin/env bash
# A failed export looks failed: a real two-CPU
# recording with one stream file truncated must fail the same way with
# one decoder and with several (exit 1, the same message naming the
# user's trace directory, never a decoder's link directory), leave no
# finished-looking output (stdout: no document end; -o: the old file kept,
# no new file), and leave no temporary directory.
# usage: tool_damaged.sh HOPTRACE WORKLOAD PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 workload=$2 provider=$3 work=$4
rm -rf "$work" && mkdir -p "$work/tmp"
export HT_LTTNG_PROVIDER=$provider TMPDIR=$work/tmp
fail() { echo "FAIL: $*" >&2; exit 1; }
# scripts/valgrind.sh runs every reading hoptrace under valgrind (record is not checked)
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
[[ $(nproc) -ge 2 ]] || fail "needs 2 CPUs for two stream files"
timeout 120 "$hoptrace" record -o "$work/trace" --filter '$ctx.procname == "trace_workload"' -- \
  bash -c "taskset -c 0 '$workload' --traces 2000 --fanout 2 &
           taskset -c 1 '$workload' --traces 2000 --fanout 2; wait" 2> "$work/record.log"
grep -q " 0 discarded by LTTng" "$work/record.log" || { cat "$work/record.log"; fail "discards"; }
cd "$work" # relative paths, as a user types them
cp -r trace tr-trunc
streams=$(find tr-trunc -type f -size +0 -name 'hoptrace_*' ! -name '*.idx' | sort)
[[ $(wc -l <<< "$streams") -ge 2 ]] || fail "one stream file: $streams"
cut=$(head -n1 <<< "$streams")
truncate -s $(( $(stat -c %s "$cut") / 2 + 77 )) "$cut"
tdir=$(dirname "$cut")

for cmd in "export --format zipkin" "export --format otlp" report view; do
  for d in 1 2; do
    # shellcheck disable=SC2086
    status=0; "${tool[@]}" $cmd --decoders $d -o - tr-trunc > "out-$d" 2> "err-$d" || status=$?
    [[ $status == 1 ]] || fail "$cmd --decoders $d: exit $status: $(cat "err-$d")"
    grep -q "^hoptrace: cannot open $tdir as an LTTng trace: " "err-$d" ||
      fail "$cmd --decoders $d: message: $(cat "err-$d")"
    grep -Eq "hoptrace-split|$tdir/t[0-9]|tr-trunc/t[0-9]" "err-$d" &&
      fail "$cmd --decoders $d names a link directory: $(cat "err-$d")"
    case $cmd in
      export*) python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "out-$d" 2>/dev/null &&
                 fail "$cmd --decoders $d: a complete JSON document on stdout" ;;
      report) grep -q "Completeness" "out-$d" && fail "report --decoders $d: a finished report" ;;
      view) grep -q "</html>" "out-$d" && fail "view --decoders $d: a finished page" ;;
    esac
    # -o: an existing file kept, a new one never created
    echo keep > keep.out
    # shellcheck disable=SC2086
    "${tool[@]}" $cmd --decoders $d -q -o keep.out tr-trunc 2> /dev/null && fail "$cmd -o succeeded"
    [[ $(cat keep.out) == keep ]] || fail "$cmd --decoders $d: keep.out changed"
    # shellcheck disable=SC2086
    "${tool[@]}" $cmd --decoders $d -q -o new.out tr-trunc 2> /dev/null && fail "$cmd -o succeeded"
    [[ ! -e new.out ]] || fail "$cmd --decoders $d: a failed run created new.out"
  done
  # one decoder or two: the same output, the same messages but for the
  # path babeltrace2 resolved
  cmp -s out-1 out-2 || fail "$cmd: outputs differ between 1 and 2 decoders"
  diff <(sed "s|'/[^']*/tr-trunc/|'tr-trunc/|" err-1) <(sed "s|'/[^']*/tr-trunc/|'tr-trunc/|" err-2) ||
    fail "$cmd: messages differ between 1 and 2 decoders"
  echo "$cmd: exit 1 with 1 and 2 decoders, $(head -c 90 err-1)..."
done
[[ -z $(ls -A tmp) ]] || fail "temporary directories left: $(ls tmp)"
# the undamaged copy still exports with both
for d in 1 2; do
  "${tool[@]}" export --format zipkin --decoders $d -q -o ok-$d.json trace
done
cmp -s <(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' ok-1.json) \
       <(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' ok-2.json) ||
  fail "the undamaged trace differs between 1 and 2 decoders"
echo "tool damaged test passed"
