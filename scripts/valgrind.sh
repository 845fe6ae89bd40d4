#!/usr/bin/env bash
# The test suite's programs under valgrind memcheck, bounded in
# time (< 15 min on 2 cores). Builds build/ exactly as scripts/test.sh does
# (RelWithDebInfo, -Werror, no sanitizers: valgrind and ASan do not mix;
# after test.sh nothing is rebuilt; HT_VALGRIND_BUILD=DIR for another
# directory, relative to the source tree), then:
#   1. the C unit tests (transport, traced messenger, control socket,
#      wire, propagate, tool, fuzz replays; the ones that fork too) with
#      `ctest -T memcheck`: each test process runs under valgrind;
#   2. the integration tests that start programs (sim cluster, hostile
#      peers, traced messenger with LTTng, the hoptrace tool) with
#      HT_TEST_WRAPPER set: their scripts start every sim-osd, sim-client,
#      sim-hostile, traced_node and hoptrace under valgrind, and
#      HT_TEST_SLOW=1 scales their counts, durations and timeouts.
# Any memcheck error, and any definite or indirect leak, makes the
# program exit 99 and its test fail. Suppressions (third-party noise
# only): scripts/valgrind.supp. Logs: BUILD/valgrind/*.log.
#
#   scripts/valgrind.sh              both steps
#   scripts/valgrind.sh --unit       step 1 only
#   scripts/valgrind.sh --integration step 2 only
# Extra arguments after -- go to both ctest runs (e.g. -- -R sim_rw).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
# a world of this run's own, as scripts/test.sh makes (scripts/lttng-env.sh)
source scripts/lttng-env.sh
ht_private_world "$src/scripts/valgrind.sh" "$@"
trap ht_private_world_end EXIT
build=${HT_VALGRIND_BUILD:-build}
steps="unit integration"
while (($#)); do
  case "$1" in
    --unit) steps=unit; shift ;;
    --integration) steps=integration; shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [--unit|--integration] [-- ctest-args...]" >&2; exit 2 ;;
  esac
done

bash scripts/install-deps.sh
cmake -S . -B "$build" -DHT_WERROR=ON -DHT_SANITIZE= >/dev/null
cmake --build "$build" -j"$(nproc)"

logs=$src/$build/valgrind
rm -rf "$logs" && mkdir -p "$logs"
vg_opts=(--error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
         --show-leak-kinds=definite,indirect --num-callers=40 --track-origins=no
         --suppressions="$src/scripts/valgrind.supp")

# The C unit tests; the script-driven ones are step 2 (or not valgrind's:
# install, link and symbol checks).
unit_exclude='^(sim_|cluster_|ship_(push|faults|utf8)$|gateway_otel$|tool_(export|loss|live|decoders|schema1|utf8|discovery|damaged|sigpipe|view|report|record_world)$|messenger_lttng$|messenger_control_clients$|example_worker_reply_lttng$|shim_|install_|api_symbols$)'
integration='^(sim_(rw|kill-traced|drop|hostile)|messenger_lttng|messenger_control_clients|ship_(push|faults|utf8)|gateway_otel|tool_(export|decoders|schema1|utf8|damaged|view|report))$'

ht_sessiond_start HT_STARTED_SESSIOND "$build/lttng-sessiond.log"

status=0
start=$(date +%s)
if [[ $steps == *unit* ]]; then
  echo "== valgrind: unit tests (ctest -T memcheck)"
  # ctest's memcheck reads its settings from DartConfiguration.tcl, which
  # include(CTest) would write; enable_testing() alone does not.
  cat > "$build/DartConfiguration.tcl" <<EOF
SourceDirectory: $src
BuildDirectory: $src/$build
MemoryCheckCommand: $(command -v valgrind)
MemoryCheckCommandOptions: ${vg_opts[*]}
MemoryCheckType: Valgrind
TimeOut: 600
EOF
  ctest --test-dir "$build" -T memcheck -E "$unit_exclude" -j2 --output-on-failure \
    --timeout 600 "$@" || status=1
  rm -f "$build/DartConfiguration.tcl" # plain ctest runs stay as they were
fi
if [[ $steps == *integration* ]]; then
  echo "== valgrind: integration tests (HT_TEST_WRAPPER)"
  export HT_TEST_WRAPPER="valgrind ${vg_opts[*]} --log-file=$logs/%p.log"
  export HT_TEST_SLOW=1
  # two at a time at most; the LTTng ones alone (RUN_SERIAL)
  ctest --test-dir "$build" -R "$integration" -j2 --output-on-failure --timeout 900 "$@" ||
    status=1
  # a program that valgrind flagged: its log says why
  for f in "$logs"/*.log; do
    [[ -e $f ]] || continue
    if grep -qE "ERROR SUMMARY: [1-9]|definitely lost: [1-9]|indirectly lost: [1-9]" "$f"; then
      echo "== valgrind: errors in $f"
      cat "$f"
      status=1
    fi
  done
fi
echo "== valgrind: $(( $(date +%s) - start )) s, $( ((status == 0)) && echo passed || echo FAILED)"
exit $status
