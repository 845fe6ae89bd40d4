#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (+ ASan/UBSan) in build-fuzz/ and
# runs each for a bounded time, starting from the committed seed corpus
# (copied, so the repository is not modified). Prints executions per
# target; exits non-zero on any finding (crash input left in build-fuzz/).
#
#   scripts/fuzz.sh [--seconds N] [--seconds-for TARGET=N]... [--seed S] [target...]
# --seconds-for gives one target a time of its own (CI: the assembler,
# which writes every output format, runs 300 s, the others --seconds).
# --seed makes the run reproducible (libFuzzer's -seed): CI uses a fixed
# seed, so a finding there replays the same way here; exploratory runs
# leave it out and get a fresh random seed each time.
# HT_FUZZ_BUILD_DIR overrides the build directory.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
declare -A seconds_for=()
seed_args=()
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --seconds-for) seconds_for[${2%%=*}]=${2#*=}; shift 2 ;;
    --seed) seed_args=(-seed="$2"); shift 2 ;;
    -*) echo "usage: $0 [--seconds N] [--seconds-for TARGET=N]... [--seed S] [target...]" >&2
        exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if ((${#targets[@]} == 0)); then
  targets=($(ls tests/fuzz/corpus))
fi

bash scripts/install-deps.sh
build=$(realpath -m "${HT_FUZZ_BUILD_DIR:-build-fuzz}")
CC=clang cmake -S . -B "$build" -DHT_FUZZ=ON -DHT_SANITIZE=address,undefined \
  -DHT_BUILD_BENCH=OFF -DHT_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}")

status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  mkdir -p "$corpus" "$build/findings/$t"
  rm -f "$build/findings/$t"/{crash,leak,timeout,oom}-*
  cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  log="$build/fuzz_$t.log"
  secs=${seconds_for[$t]:-$seconds}
  echo "== fuzz $t for ${secs}s"
  if ! (cd "$build/findings/$t" &&
        "$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 \
          -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
          ${seed_args[@]+"${seed_args[@]}"} "$corpus") >"$log" 2>&1; then
    echo "fuzz $t: FINDING (see $log and $build/findings/$t)" >&2
    tail -n 40 "$log" >&2
    # CI keeps only the log: print the input so it can be replayed here
    # (base64 -d > crash; build-fuzz/tests/fuzz/fuzz_<target> crash).
    for f in "$build/findings/$t"/crash-* "$build/findings/$t"/leak-* \
             "$build/findings/$t"/timeout-* "$build/findings/$t"/oom-*; do
      [[ -f $f ]] || continue
      echo "input $(basename "$f") ($(stat -c %s "$f") bytes), base64:" >&2
      head -c 65536 "$f" | base64 -w 76 >&2
    done
    status=1
    continue
  fi
  runs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  echo "fuzz $t: ${runs} executions in ${secs}s, no finding"
done
exit $status
