# Sourced by run-sim.sh and scripts/soak.sh: builds the cluster's programs,
# the tool and the provider when absent, and points the library at the
# provider. Sets bin and hoptrace.
#   sim_build_ensure ROOT BUILD LABEL
sim_build_ensure() {
  local root=$1 build=$2 label=$3
  bin="$build/examples/client-osd-sim"
  hoptrace="$build/tools/hoptrace/hoptrace"
  if [[ ! -x $bin/sim-osd || ! -x $bin/sim-client || ! -x $hoptrace ]]; then
    echo "$label: building in $build" >&2
    cmake -S "$root" -B "$build" >/dev/null
    cmake --build "$build" -j2 --target sim-osd sim-client hoptrace_cli hoptrace_tp >/dev/null
  fi
  export HT_LTTNG_PROVIDER="$build/libhoptrace-tp.so"
}
