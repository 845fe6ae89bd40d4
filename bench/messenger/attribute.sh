#!/usr/bin/env bash
# Where the traced messenger's cost goes: runs two cells of
# bench_messenger under callgrind (instructions are exact where wall time
# on a shared machine is not) and prints user-space instructions per
# request, plain vs traced, and the functions that differ most.
#   bench/messenger/attribute.sh [BUILD_DIR] [CELL_A] [CELL_B] [SECONDS] [LIB]
# (cells: 0 plain, 1 traced 0 %, 2 traced 1 %, 3 traced 100 %; LIB: a for
# libhoptrace.a, the default, or so for libhoptrace.so, what applications
# link: its thread-local state and calls go through the GOT and PLT). Start-up
# (dynamic linking, thread creation) is divided among the requests too:
# SECONDS (default 2) long enough keeps it to a few instructions each.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
a=${2:-0} b=${3:-1} secs=${4:-2} lib=${5:-a}
case $lib in
  a) bin="$build/bench/messenger/bench_messenger" ;;
  so) bin="$build/bench/messenger/bench_messenger_shared" ;;
  *) echo "attribute.sh: LIB is a or so, not '$lib'" >&2; exit 2 ;;
esac
out=$(mktemp -d /tmp/ht-cg-XXXXXX)
trap 'rm -rf "$out"' EXIT
for c in "$a" "$b"; do
  BENCH_CELL=$c HT_LTTNG=0 timeout 600 valgrind --tool=callgrind \
    --callgrind-out-file="$out/cg.$c" "$bin" "$secs" 1 \
    2> "$out/log.$c"
  grep -o "requests [0-9]*" "$out/log.$c" | cut -d' ' -f2 > "$out/n.$c"
done
python3 - "$out" "$a" "$b" "$lib" "$root/bench/common" <<'PY'
import sys
out, a, b, lib, common = sys.argv[1:]
sys.path.insert(0, common)
from callgrind_profile import profile
def load(c):
    """instructions per request by function name"""
    n = int(open("%s/n.%s" % (out, c)).read())
    d = {}
    for (func, _), v in profile("%s/cg.%s" % (out, c))[0].items():
        name = func.split(":")[-1]
        d[name] = d.get(name, 0) + v / n
    return d
x, y = load(a), load(b)
print("instructions per request (user space, both sides, libhoptrace.%s): cell %s %.0f, cell %s %.0f (+%.0f)"
      % (lib, a, sum(x.values()), b, sum(y.values()), sum(y.values()) - sum(x.values())))
print("%8s %8s %8s  %s" % ("diff", "cell " + a, "cell " + b, "function"))
for k in sorted(set(x) | set(y), key=lambda k: -(y.get(k, 0) - x.get(k, 0)))[:25]:
    print("%8.0f %8.0f %8.0f  %s" % (y.get(k, 0) - x.get(k, 0), x.get(k, 0), y.get(k, 0), k))
PY
