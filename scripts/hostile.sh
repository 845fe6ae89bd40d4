#!/usr/bin/env bash
# Hostile peers against a live OSD for as long as you like (ctest
# sim_hostile runs 30 s): builds build/ and runs tests/sim/hostile_test.sh.
#
#   scripts/hostile.sh [--minutes N | --seconds N] [--out DIR] [--seed S]
#                      [--valgrind]
# Defaults: 10 minutes, output in build/hostile-out. --valgrind runs every
# program under valgrind (as scripts/valgrind.sh does).
# Prints the per-attack table, the OSD's memory, the DEBUG counters and
# the client's verification; exit 0 when every check held.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=600 out="" build=build valgrind=0
while (($#)); do
  case "$1" in
    --minutes) secs=$(( $2 * 60 )); shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seed) export HT_HOSTILE_SEED=$2; shift 2 ;;
    --valgrind) valgrind=1; shift ;;
    *) echo "usage: $0 [--minutes N | --seconds N] [--out DIR] [--seed S] [--valgrind]" >&2; exit 2 ;;
  esac
done
(( secs >= 10 )) || { echo "hostile: at least 10 seconds" >&2; exit 2; }
[[ -n $out ]] || out=$PWD/$build/hostile-out
bash scripts/install-deps.sh
cmake -S . -B "$build" -DHT_WERROR=ON >/dev/null
cmake --build "$build" -j2 --target sim-osd sim-client sim-hostile hoptrace_tp
if [[ $valgrind == 1 ]]; then
  mkdir -p "$out/valgrind"
  export HT_TEST_WRAPPER="valgrind --error-exitcode=99 --leak-check=full \
--errors-for-leak-kinds=definite,indirect --suppressions=$PWD/scripts/valgrind.supp \
--log-file=$out/valgrind/%p.log" HT_TEST_SLOW=1
fi
provider=$(find "$build" -maxdepth 1 -name 'libhoptrace-tp.so' | head -1)
bash tests/sim/hostile_test.sh "$build/examples/client-osd-sim" "$build/tests/sim/sim-hostile" \
  "$provider" "$out" "$secs"
