# Sourced by the tests that push to receiver.js. ship_setup HOPTRACE
# PROVIDER WORK SRC: an empty WORK, the LTTng provider exported, `tool`
# the command line that runs hoptrace (under HT_TEST_WRAPPER, valgrind,
# when set), and the receivers in WORK/receiver with their packages
# installed from the committed lock file (npm ci).
ship_setup() {
  local hoptrace=$1 provider=$2 work=$3 src=$4
  ship_hoptrace=$hoptrace ship_work=$work
  rm -rf "$work" && mkdir -p "$work/receiver"
  export HT_LTTNG_PROVIDER=$provider
  tool=("$hoptrace")
  [[ -z ${HT_TEST_WRAPPER:-} ]] || { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
  command -v node >/dev/null && command -v npm >/dev/null ||
    { echo "node and npm are needed (scripts/install-deps.sh installs them)" >&2; return 1; }
  cp "$src/receiver/package.json" "$src/receiver/package-lock.json" "$src/receiver/"*.js \
    "$work/receiver/"
  (cd "$work/receiver" && timeout 300 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
}

# ship_record WORKLOAD ARGS...: WORKLOAD's spans recorded by `hoptrace
# record` into WORK/trace (only its own process, 120 s at most; its log in
# WORK/record.log, shown when LTTng discarded anything: then it fails).
ship_record() {
  timeout 120 "$ship_hoptrace" record -o "$ship_work/trace" \
    --filter '$ctx.procname == "trace_workload"' -- "$@" 2> "$ship_work/record.log"
  grep -q " 0 discarded by LTTng" "$ship_work/record.log" ||
    { cat "$ship_work/record.log" >&2; return 1; }
}
