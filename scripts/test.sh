#!/usr/bin/env bash
# README's test command: installs what is missing, builds hoptrace with
# -Werror, and runs every test with ctest. The integration tests use a
# session daemon of this run's own, in a world of its own (as root: a
# mount namespace), started and stopped by its pid: two runs side by side
# (two clones) never share a daemon, a session or a namespace name.
#
#   scripts/test.sh              build/ , -Werror
#   scripts/test.sh --sanitize   build-asan/ , -Werror, ASan + UBSan
# Extra arguments after -- go to ctest (e.g. -- -R wire).
set -euo pipefail
cd "$(dirname "$0")/.."
# The run's own LTTng world (scripts/lttng-env.sh): as root a mount
# namespace where only this run's session daemon and processes meet, so
# that test suites and demos side by side never see each other's.
source scripts/lttng-env.sh
ht_private_world "$PWD/scripts/test.sh" "$@"
trap ht_private_world_end EXIT

build_dir=build
sanitize=""
while (($#)); do
  case "$1" in
    --sanitize) sanitize="address,undefined"; build_dir=build-asan; shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [--sanitize] [-- ctest-args...]" >&2; exit 2 ;;
  esac
done

bash scripts/install-deps.sh
cmake -S . -B "$build_dir" -DHT_WERROR=ON -DHT_SANITIZE="$sanitize" >/dev/null
# A build killed mid-compile (SIGKILL, OOM, a closed terminal) can leave
# truncated objects newer than their sources, which make then takes as up
# to date (link errors, odd failures later). The marker lives only while a
# build runs: found at the start, the last build was killed, and its
# objects are rebuilt from clean. A build that failed (compile error)
# removes it: no clean rebuild after an ordinary mistake.
building="$build_dir/.ht-build-running"
if [[ -e $building ]]; then
  echo "test.sh: the last build in $build_dir was interrupted: rebuilding it from clean" >&2
  cmake --build "$build_dir" --target clean
fi
touch "$building"
build_rc=0
cmake --build "$build_dir" -j"$(nproc)" || build_rc=$?
rm -f "$building"
((build_rc == 0)) || exit "$build_rc"

ht_sessiond_start HT_STARTED_SESSIOND "$build_dir/lttng-sessiond.log"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# HT_NO_SKIP=1 (CI): a test that skipped (exit 77: no LTTng, no namespaces)
# hides a failure, so the run fails when any did.
log="$build_dir/ctest.log"
rc=0
ctest --test-dir "$build_dir" --output-on-failure -j2 "$@" 2>&1 | tee "$log" || rc=$?
if [[ -n ${HT_NO_SKIP:-} ]] && grep -q "(Skipped)" "$log"; then
  echo "test.sh: tests skipped, and HT_NO_SKIP=1 forbids that:" >&2
  grep "(Skipped)" "$log" >&2
  exit 1
fi
exit $rc
