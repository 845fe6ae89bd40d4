#!/usr/bin/env bash
# Flight recorder benchmark: trigger to snapshot written on its own host
# (`hoptrace record --flight`, from the notification's receipt to
# lttng_snapshot_record's return), p50/p99/max from capture.json.
#   isolated, ring full:  100 captures 600 ms apart (slower than the rate
#                         limit: no waiting), 20,000 two-span traces
#                         recorded before each, so the 8 MiB a CPU ring is
#                         full: each snapshot copies all of it
#   isolated, --snapshot-max 4M: ring full, each snapshot only the newest
#                         sub-buffers (LTTng's snapshot max size)
#   isolated, ring empty: the same without the filler traces
#   demo cluster:         scripts' cluster in flight mode (run-sim.sh
#                         --flight, 20 s, slow-client=10ms,error):
#                         bursty triggers, rate-limit waits included
# Prints a table and writes bench/results/flight.txt.
# usage: bench/flight/bench_flight.sh [BUILD_DIR]   (default build/)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
hoptrace=$build/tools/hoptrace/hoptrace
fire=$build/tests/tool/flight_fire
export HT_LTTNG_PROVIDER=$build/libhoptrace-tp.so
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-flight-XXXXXX")
trap 'rm -rf "$work"' EXIT

run_fire() { # NAME FIRES GAP_US FILL [RECORD OPTION...]
  local name=$1 fires=$2 gap=$3 fill=$4
  shift 4
  "$hoptrace" record --flight -o "$work/$name" "$@" -- "$fire" "$fires" "$gap" "$fill" \
    > "$work/$name.out" 2> "$work/$name.log" || { cat "$work/$name.log" >&2; exit 1; }
}
run_fire full 100 600000 20000
run_fire max4m 100 600000 20000 --snapshot-max 4M
run_fire empty 100 600000 0
bash "$src/examples/client-osd-sim/run-sim.sh" --build "$build" --out "$work/demo" --flight \
  --duration 20 > "$work/demo.log" 2>&1 || { tail -30 "$work/demo.log" >&2; exit 1; }

python3 - "$src" "$work" "$src/bench/results/flight.txt" <<'PY'
import json, os, platform, subprocess, sys, time
src, work, out_path = sys.argv[1:]
rows = [("isolated, ring full", "full/capture.json"),
        ("isolated, max 4M", "max4m/capture.json"),
        ("isolated, ring empty", "empty/capture.json"),
        ("demo cluster", "demo/snapshots/capture.json")]
def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
lines = []
commit = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"],
                        capture_output=True, text=True).stdout.strip()
cpu = "?"
for l in open("/proc/cpuinfo"):
    if l.startswith("model name"):
        cpu = l.split(":", 1)[1].strip(); break
lines.append("# hoptrace benchmark: flight")
lines.append("# date: %s  commit: %s" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), commit))
lines.append("# machine: %s %s, %d cpus, %s" % (platform.system(), platform.release(), os.cpu_count(), cpu))
lines.append("")
lines.append("%-22s %8s %6s %6s %9s %7s %7s %9s %9s %9s %10s" % (
    "scenario", "ring/cpu", "fired", "snaps", "coalesced", "ratelim", "dropped",
    "p50 ms", "p99 ms", "max ms", "MB/snap"))
for name, rel in rows:
    path = os.path.join(work, rel)
    c = json.load(open(path))
    d = os.path.dirname(path)
    sizes = [du(os.path.join(d, s["name"])) for s in c["snapshot_list"]]
    q = c["trigger_to_snapshot_ms"]
    lines.append("%-22s %7dM %6d %6d %9d %7d %7d %9.1f %9.1f %9.1f %10.2f" % (
        name, c["ring_bytes_per_cpu"] >> 20, c["triggers_fired"], c["snapshots"], c["coalesced"],
        c["rate_limited"], c["dropped"], q["p50"], q["p99"], q["max"],
        max(sizes) / 1e6 if sizes else 0))
text = "\n".join(lines) + "\n"
print(text, end="")
open(out_path, "w").write(text)
print("results written to " + out_path)
PY
