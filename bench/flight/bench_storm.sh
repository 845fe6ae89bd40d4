#!/usr/bin/env bash
# Trigger storm against no triggers: does a capture storm slow the
# messenger? Flight mode (every request recorded in memory), 3 OSDs, 2
# clients x 16 in flight with no rate limit (closed loop: throughput is
# what the processes can do), 10 s a run. "storm": once the OSDs' control
# sockets serve, every OSD span fires a capture (`capture-policy
# slow-server=1us`) for 5 s, then `capture-policy off`: each a capture event, the
# reply's capture flag, notices to the peers called (rate-limited), and
# the host's snapshots (2 a second). "quiet": the same run, no policy.
# Rounds paired (quiet then storm, each round), the storm's ops/s over
# the quiet run's of the same round; the goal is >= 95 %.
# Prints a table and writes bench/results/flight-storm.txt.
# usage: bench/flight/bench_storm.sh [BUILD_DIR] [ROUNDS (3)] [SECONDS (10)]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
rounds=${2:-3} secs=${3:-10}
hoptrace=$build/tools/hoptrace/hoptrace
export HT_LTTNG_PROVIDER=$build/libhoptrace-tp.so
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-storm-XXXXXX")
trap 'rm -rf "$work"' EXIT

run_one() { # run_one quiet|storm ROUND
  local cfg=$1 dir=$work/$1-$2 rec
  mkdir -p "$dir"
  HT_FLIGHT=1 "$hoptrace" record --flight -o "$dir/flight" -- \
    bash "$src/examples/client-osd-sim/cluster.sh" --bin "$build/examples/client-osd-sim" \
    --work "$dir/c" --messenger traced --osds 3 --clients 2 --inflight 16 --duration "$secs" \
    --ctl > "$dir/run.log" 2> "$dir/record.log" &
  rec=$!
  if [[ $cfg == storm ]]; then
    for ((t = 0; t < 600; t++)); do
      [[ -S $dir/c/ctl/osd.0.sock && -S $dir/c/ctl/osd.1.sock && -S $dir/c/ctl/osd.2.sock ]] && break
      sleep 0.1
    done
    for i in 0 1 2; do
      "$hoptrace" ctl --timeout 10 "$dir/c/ctl/osd.$i.sock" capture-policy slow-server=1us > /dev/null
    done
    sleep 5
    for i in 0 1 2; do
      "$hoptrace" ctl --timeout 10 "$dir/c/ctl/osd.$i.sock" capture-policy off > /dev/null
    done
  fi
  wait "$rec" || { tail -20 "$dir/record.log" >&2; exit 1; }
}

for ((r = 0; r < rounds; r++)); do
  for cfg in quiet storm; do
    run_one "$cfg" "$r"
    echo "round $r $cfg: $(grep -h '^cluster:' "$work/$cfg-$r/run.log" "$work/$cfg-$r/record.log" | tail -1)" >&2
  done
done

python3 - "$src" "$work" "$rounds" "$secs" "$src/bench/results/flight-storm.txt" <<'PY'
import json, os, platform, statistics, subprocess, sys, time
src, work, rounds, secs, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
def ops(cfg, r):
    rows = [dict(kv.split("=", 1) for kv in l.split()[2:])
            for l in open(os.path.join(work, "%s-%d" % (cfg, r), "c", "clients.txt"))
            if l.startswith("SIM-CLIENT")]
    return sum(float(x["ops_s"]) for x in rows), max(int(x["p99_us"]) for x in rows)
def flight(cfg, r):
    return json.load(open(os.path.join(work, "%s-%d" % (cfg, r), "flight", "capture.json")))
commit = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"],
                        capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
lines = ["# hoptrace benchmark: flight recorder under a trigger storm",
         "# date: %s  commit: %s" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), commit),
         "# machine: %s %s, %d cpus, %s; load average at the end %s" % (
             platform.system(), platform.release(), os.cpu_count(), cpu,
             " ".join(open("/proc/loadavg").read().split()[:3])),
         "# flight mode, 3 OSDs, 2 clients x 16 in flight (closed loop), %s s a run;" % secs,
         "# storm: every OSD span a trigger (capture-policy slow-server=1us) for 5 s from",
         "# the moment the control sockets serve; ops/s over the whole run",
         "",
         "%-6s %-6s %9s %8s %8s %7s %9s %8s %8s" % ("round", "run", "ops/s", "p99 ms", "fired",
                                                  "snaps", "coalesced", "dropped", "storm/quiet")]
ratios = []
for r in range(rounds):
    q = ops("quiet", r)
    for cfg in ("quiet", "storm"):
        o, p99 = ops(cfg, r)
        f = flight(cfg, r)
        ratio = ""
        if cfg == "storm":
            ratios.append(o / q[0])
            ratio = "%.1f%%" % (100 * o / q[0])
        lines.append("%-6d %-6s %9.0f %8.2f %8d %7d %9d %8d %8s" % (
            r, cfg, o, p99 / 1000, f["triggers_fired"], f["snapshots"], f["coalesced"],
            f["dropped"], ratio))
med = statistics.median(ratios)
lines.append("")
lines.append("storm over quiet, paired by round: median %.1f%% (rounds %s); goal >= 95%%: %s" % (
    100 * med, ", ".join("%.1f%%" % (100 * x) for x in ratios), "met" if med >= 0.95 else "NOT met"))
text = "\n".join(lines) + "\n"
sys.stdout.write(text)
open(out_path, "w").write(text)
PY
