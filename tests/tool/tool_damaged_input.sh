#!/usr/bin/env bash
# Several inputs, one damaged: the decoder's error names the
# damaged input's trace directory (below the input, so its path too) and
# never the good one, with one decoder and with two, in either order, and
# the run fails (exit 1) instead of aborting. Two damages of a committed
# trace (data/schema1, two stream files; no LTTng session needed): 16
# bytes of 0xff at offset 6000 of a stream file (an event class id that
# does not exist: babeltrace2 fails the next call) and at offset 3000
# (inside an event: src.ctf.fs returns the events before it and leaves
# its error on the thread, which made babeltrace2 abort the next call).
# usage: tool_damaged_input.sh HOPTRACE WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 work=$2 src=$3
rm -rf "$work" && mkdir -p "$work/tmp"
export TMPDIR=$work/tmp
fail() { echo "FAIL: $*" >&2; exit 1; }
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
cd "$work" # relative paths, as a user types them
cp -r "$src/data/schema2/trace" good
"${tool[@]}" export --format zipkin -q -o /dev/null good || fail "the good input does not read"
# babeltrace2 2.0.4's src.ctf.fs leaks 640 bytes (glib's g_malloc0) on a
# stream damaged inside an event, the babeltrace2 command too: under
# LeakSanitizer (scripts/test.sh --sanitize) the damaged runs alone allow
# leaks allocated by glib, which hoptrace never calls itself
printf 'leak:libglib-2.0.so\n' > "$work/lsan.supp"
damaged_lsan="suppressions=$work/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
for off in 6000 3000; do
  bad=bad-at-$off
  cp -r "$src/data/schema1/trace" $bad
  printf '\xff%.0s' {1..16} | dd of=$bad/ust/uid/0/64-bit/hoptrace_1 bs=1 seek=$off conv=notrunc 2> /dev/null
  for cmd in "export --format zipkin" report; do
    for d in 1 2; do
      for order in "good $bad" "$bad good"; do
        # shellcheck disable=SC2086
        status=0
        LSAN_OPTIONS=$damaged_lsan "${tool[@]}" $cmd --decoders $d -o out $order 2> err || status=$?
        said=$(grep '^hoptrace: ' err | grep -v '^hoptrace: [0-9]* events' || true)
        [[ $status == 1 ]] || fail "$cmd --decoders $d $order: exit $status: $(cat err)"
        grep -q "^hoptrace: reading $bad/ust/uid/0/64-bit failed: ." <<< "$said" ||
          fail "$cmd --decoders $d $order: the damaged input not named: $said"
        grep -q "good" <<< "$said" && fail "$cmd --decoders $d $order: names the good input: $said"
        grep -Eq "hoptrace-split|/t[0-9]" <<< "$said" &&
          fail "$cmd --decoders $d $order names a link directory: $said"
        [[ ! -e out ]] || fail "$cmd --decoders $d $order: a failed run wrote its output"
      done
    done
  done
  echo "damaged at $off: $said"
done
[[ -z $(ls -A tmp) ]] || fail "temporary directories left: $(ls tmp)"
echo "tool damaged input test passed"
