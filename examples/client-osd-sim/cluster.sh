#!/usr/bin/env bash
# Starts a simulated cluster on loopback (N OSDs, M clients), runs the
# workload for a bounded time, applies the requested faults, stops every
# process it started, and prints one summary. No tracing setup here: the
# launcher (run-sim.sh) wraps this script in `hoptrace record`.
#
#   cluster.sh --bin DIR --work DIR [--osds 4] [--clients 3] [--duration 20]
#              [--messenger plain|traced] [--inflight N] [--rate R]
#              [--objects N] [--sample-ratio R] [--ratio-schedule SEC:R,...]
#              [--hoptrace PATH] [--slow-osd ID] [--slow-ms MS] [--slow-pct P]
#              [--kill-osd ID@SEC] [--drop-conn-ms MS] [--corrupt-reads N]
#              [--restart-osds PERIOD[:DOWN]] [--no-repair] [--data-dir DIR] [--unix] [--ctl]
#              [--client-arg ARG]... [--osd-arg ARG]...
#              [--osd-exe PATH] [--client-exe PATH]
#              [--map FILE] [--host-exec CMD --host-of NAME=HOST,...]
#
# --map FILE: use this map (copied to WORK/cluster.map; --osds is its
# number of `osd` lines) instead of free loopback ports.
# --host-exec CMD, --host-of osd.0=h1,client.0=h2,...: start each named
# process as `CMD HOST PROGRAM ARGS` (simulated hosts: CMD is
# "bash scripts/hosts.sh --prefix P exec", which execs the program, so its
# pid is the one waited for); unnamed processes start as usual.
#
# --slow-pct P: the slow OSD slows only P percent of its writes, at random.
# SIM_TRUTH=FILE (and SIM_TRUTH_SLOW_MS): every process writes what went
# wrong, with its trace id, to FILE (sim_truth.h): the ground truth of the
# flight recorder's tests.
#
# --restart-osds: every PERIOD seconds one OSD (round-robin, never the slow
# one) is SIGKILLed by this script and restarted DOWN seconds later (default
# 3) on the same address with --recovering (read-repair), its data kept with
# --data-dir. At most one OSD is down at a time. Kills and restarts go to
# WORK/faults.log; every process started (restarts too) to WORK/procs
# ("name pid"); the pids killed on purpose to WORK/killed.pids. --no-repair
# restarts without --recovering (a control: stale reads must be caught).
#
# --osd-exe/--client-exe: run the programs under another name (a symlink
# such as soak123-osd), so that a recording session can keep exactly
# this cluster's processes by procname (default DIR/sim-osd, DIR/sim-client).
#
# --ctl gives every OSD a control socket, $work/ctl/osd.N.sock.
# --ratio-schedule with a traced messenger and --hoptrace goes through
# those sockets (`hoptrace ctl --timeout 2`); a change that a process did
# not take is named on stderr (WORK/logs/ctl.log says why) and fails the
# run, unless processes were killed on purpose (--kill-osd, --restart-osds).
# HT_TEST_WRAPPER="valgrind ..." starts every OSD and client under that
# command (scripts/valgrind.sh); then OSDs get 60 s to be ready, not 10.
#
# Exit 0 when every client exited 0 (verification passed, no hang, at most
# 1 % of its operations failed; with --kill-osd, --restart-osds or
# --drop-conn-ms failed operations are expected and do not count) and
# every OSD that was not killed on purpose stopped cleanly. Never leaves a
# process behind; never kills anything it did not start.
set -euo pipefail

bin="" work="" osds=4 clients=3 duration=20 messenger="" inflight=8 rate=0
objects=256 ratio="" schedule="" hoptrace="" slow_osd="" slow_ms=20 slow_pct=100
kill_spec="" drop_ms=0 corrupt=0 unix=0 data_dir="" restart_spec="" repair_flag=--recovering ctl_all=0
client_args=() osd_args=() osd_exe="" client_exe="" map_file="" host_exec="" host_of=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin) bin=$2; shift ;;
    --work) work=$2; shift ;;
    --osds) osds=$2; shift ;;
    --clients) clients=$2; shift ;;
    --duration) duration=$2; shift ;;
    --messenger) messenger=$2; shift ;;
    --inflight) inflight=$2; shift ;;
    --rate) rate=$2; shift ;;
    --objects) objects=$2; shift ;;
    --sample-ratio) ratio=$2; shift ;;
    --ratio-schedule) schedule=$2; shift ;;
    --hoptrace) hoptrace=$2; shift ;;
    --slow-osd) slow_osd=$2; shift ;;
    --slow-ms) slow_ms=$2; shift ;;
    --slow-pct) slow_pct=$2; shift ;;
    --kill-osd) kill_spec=$2; shift ;;
    --drop-conn-ms) drop_ms=$2; shift ;;
    --corrupt-reads) corrupt=$2; shift ;;
    --data-dir) data_dir=$2; shift ;;
    --restart-osds) restart_spec=$2; shift ;;
    --no-repair) repair_flag="" ;;
    --unix) unix=1 ;;
    --ctl) ctl_all=1 ;;
    --client-arg) client_args+=("$2"); shift ;;
    --osd-arg) osd_args+=("$2"); shift ;;
    --osd-exe) osd_exe=$2; shift ;;
    --client-exe) client_exe=$2; shift ;;
    --map) map_file=$2; shift ;;
    --host-exec) host_exec=$2; shift ;;
    --host-of) host_of=$2; shift ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x $bin/sim-osd && -x $bin/sim-client && -n $work ]] || {
  echo "cluster.sh: --bin DIR (with sim-osd, sim-client) and --work DIR are required" >&2; exit 2; }
[[ -n $osd_exe ]] || osd_exe=$bin/sim-osd
[[ -n $client_exe ]] || client_exe=$bin/sim-client
mkdir -p "$work/logs"
wrap=()
[[ -n ${HT_TEST_WRAPPER:-} ]] && read -ra wrap <<< "$HT_TEST_WRAPPER"
ready_ticks=$(( ${#wrap[@]} > 0 ? 600 : 100 ))
on_host() { # on_host NAME: sets hx, the launch prefix of process NAME (--host-of)
  local h
  hx=()
  h=$(tr , '\n' <<< "$host_of" | sed -n "s/^$1=//p")
  if [[ -n $h && -n $host_exec ]]; then read -ra hx <<< "$host_exec"; hx+=("$h"); fi
  return 0
}
rm -f "$work"/logs/* "$work"/ready.* "$work"/ctl/*.sock 2>/dev/null || true
: > "$work/procs"
: > "$work/faults.log"
: > "$work/killed.pids"

pids=() names=() cpids=() sched_pid=""
cleanup() {
  # clients run under timeout, which passes TERM on to them
  for p in "${cpids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# --- the map: free loopback ports (or Unix sockets), replication 3, min 2
if [[ -n $map_file ]]; then
  [[ $map_file -ef $work/cluster.map ]] || cp "$map_file" "$work/cluster.map"
  osds=$(grep -c '^osd ' "$work/cluster.map")
else {
  echo "# written by cluster.sh"
  echo "pg_num 64"
  echo "size 3"
  echo "min_size 2"
  if [[ $unix == 1 ]]; then
    for ((i = 0; i < osds; i++)); do echo "osd $i unix://$work/osd.$i.sock"; done
  else
    # Ports below the kernel's ephemeral range: a port is free when the
    # map is written and listened on only later, and in the ephemeral
    # range any process's outgoing connection can take it meanwhile (a
    # run under valgrind lost osd.1's port that way).
    python3 - "$osds" <<'PY'
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
socks = []
for i in range(int(sys.argv[1])):
    s = socket.socket()
    for _ in range(200):
        try:
            s.bind(("127.0.0.1", random.randint(10000, low - 1) if low > 10001 else 0))
            break
        except OSError:
            pass
    else:
        s.bind(("127.0.0.1", 0))
    socks.append(s)
    print("osd %d tcp://127.0.0.1:%d" % (i, s.getsockname()[1]))
PY
  fi
} > "$work/cluster.map"
fi

common=()
[[ -n $messenger ]] && common+=(--messenger "$messenger")
[[ -n $ratio ]] && common+=(--sample-ratio "$ratio")

# Mid-run ratio changes: over the control socket when this hoptrace has
# `ctl` (traced messenger), else by the clients themselves (--ratio-at).
use_ctl=0
if [[ -n $schedule && -n $hoptrace && $messenger == traced ]] &&
   [[ $("$hoptrace" help 2>&1) == *" ctl "* ]]; then
  use_ctl=1
  mkdir -p "$work/ctl"
fi
[[ $ctl_all == 1 ]] && mkdir -p "$work/ctl"

kill_id="" kill_at=""
if [[ -n $kill_spec ]]; then kill_id=${kill_spec%@*}; kill_at=${kill_spec#*@}; fi

# --- OSDs
start_osd() { # start_osd ID [--recovering]: sets pids[ID]; the log is appended to
  local i=$1 args
  args=(--id "$i" --map "$work/cluster.map" --ready-file "$work/ready.$i" "${common[@]}")
  [[ $i == "$slow_osd" ]] && args+=(--slow-ms "$slow_ms" --slow-pct "$slow_pct")
  [[ $i == "$kill_id" ]] && args+=(--crash-after "$kill_at")
  [[ $i == 0 && $corrupt != 0 ]] && args+=(--corrupt-reads "$corrupt")
  [[ -n $data_dir ]] && mkdir -p "$data_dir" && args+=(--data "$data_dir/osd.$i")
  [[ $use_ctl == 1 || $ctl_all == 1 ]] && args+=(--control-socket "$work/ctl/osd.$i.sock")
  on_host "osd.$i"
  "${hx[@]}" "${wrap[@]}" "$osd_exe" "${args[@]}" "${@:2}" "${osd_args[@]}" 2>> "$work/logs/osd.$i.log" &
  pids[$i]=$! names[$i]="osd.$i"
  echo "osd.$i $!" >> "$work/procs"
}
for ((i = 0; i < osds; i++)); do start_osd "$i"; done
for ((t = 0; t < ready_ticks; t++)); do
  n=$(find "$work" -maxdepth 1 -name "ready.*" | wc -l)
  [[ $n == "$osds" ]] && break
  for ((i = 0; i < osds; i++)); do
    kill -0 "${pids[$i]}" 2>/dev/null || { cat "$work/logs/osd.$i.log" >&2; exit 1; }
  done
  sleep 0.1
done
[[ $n == "$osds" ]] || { echo "cluster.sh: OSDs not ready after $((ready_ticks / 10)) s" >&2; exit 1; }
echo "cluster: $osds OSDs up (map $work/cluster.map)${slow_osd:+, osd.$slow_osd slow (+${slow_ms} ms a disk write)}${kill_id:+, osd.$kill_id crashes at ${kill_at} s}" >&2

# --- clients
for ((c = 0; c < clients; c++)); do
  args=(--id "$c" --map "$work/cluster.map" --duration "$duration" --inflight "$inflight"
        --objects "$objects" "${common[@]}")
  [[ $rate != 0 ]] && args+=(--rate "$rate")
  [[ $drop_ms != 0 ]] && args+=(--drop-conn-ms "$drop_ms")
  # faults that fail operations on purpose: only verification, a hang or
  # lost accounting fail a client (a --client-arg --max-failed-pct after
  # this one still wins)
  if [[ -n $kill_spec || -n $restart_spec || $drop_ms != 0 ]]; then
    args+=(--max-failed-pct 100)
  fi
  [[ -n $schedule && $use_ctl == 0 ]] && args+=(--ratio-at "$schedule")
  [[ $use_ctl == 1 ]] && args+=(--control-socket "$work/ctl/client.$c.sock")
  on_host "client.$c"
  timeout -s KILL $((${duration%.*} + 40)) "${hx[@]}" "${wrap[@]}" "$client_exe" "${args[@]}" "${client_args[@]}" \
    > "$work/logs/client.$c.out" 2> "$work/logs/client.$c.log" &
  cpids+=($!)
  echo "client.$c $!" >> "$work/procs" # timeout's pid: the client is its child
done
echo "cluster: $clients clients running for $duration s (messenger ${messenger:-\$HT_MESSENGER/plain})" >&2

if [[ $use_ctl == 1 ]]; then
  (
    # the schedule starts with the workload (LTTng registration can delay it)
    for ((t = 0; t < 100; t++)); do
      n=$(cat "$work"/logs/client.*.log 2>/dev/null | grep -c ": running for" || true)
      [[ $n -ge $clients ]] && break
      sleep 0.1
    done
    start_ms=$(date +%s%3N)
    IFS=, read -ra steps <<< "$schedule"
    for step in "${steps[@]}"; do
      at=${step%%:*} r=${step#*:}
      due_ms=$(awk -v s="$start_ms" -v a="$at" 'BEGIN { printf "%.0f", s + a * 1000 }')
      while (( $(date +%s%3N) < due_ms )); do sleep 0.02; done
      failed=()
      for s in "$work"/ctl/*.sock; do
        # bounded (ctl's --timeout); a failure is reported, never hidden
        # a process that ended (its run over: its socket removed at exit)
        # is not a failure; one that still has its socket is
        "$hoptrace" ctl --timeout 2 "$s" set "ratio=$r" >/dev/null 2>> "$work/logs/ctl.log" ||
          { [[ -S $s ]] && failed+=("$(basename "$s" .sock)"); } || true
      done
      if (( ${#failed[@]} > 0 )); then
        echo "cluster: t=${at}s sampling ratio -> $r FAILED for ${failed[*]} (see $work/logs/ctl.log)" >&2
        sched_failed=1
      else
        echo "cluster: t=${at}s sampling ratio -> $r (hoptrace ctl, every process)" >&2
      fi
    done
    exit "${sched_failed:-0}"
  ) &
  sched_pid=$!
  pids+=("$sched_pid") names+=("ratio-schedule")
fi

# --- OSD kills and restarts while the clients run (round-robin, one down at a time)
now_ms() { date +%s%3N; }
fault() { echo "t=$(( ($(now_ms) - t0_ms) / 1000 ))s $*" | tee -a "$work/faults.log" >&2; }
restart_osd() { # restart_osd ID NOTE: starts it again and waits until it serves
  local id=$1 i
  rm -f "$work/ready.$id"
  start_osd "$id" $repair_flag
  for ((i = 0; i < 100; i++)); do
    [[ -f $work/ready.$id ]] && break
    sleep 0.1
  done
  fault "restart osd.$id pid ${pids[$id]} (${repair_flag:-no repair}$2)$([[ -f $work/ready.$id ]] || echo ", NOT READY after 10 s")"
}
restart_loop() {
  local period=${restart_spec%%:*} down=3 next=0 victim=-1 up_at=0 i t
  if [[ $restart_spec == *:* ]]; then down=${restart_spec#*:}; fi
  next=$((t0_ms + period * 1000))
  local order=()
  for ((i = 0; i < osds; i++)); do
    if [[ $i != "$slow_osd" ]]; then order+=("$i"); fi
  done
  local k=0
  while :; do
    local alive=0
    for p in "${cpids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [[ $alive == 1 ]] || break
    t=$(now_ms)
    if [[ $victim -lt 0 && $t -ge $next && ${#order[@]} -gt 0 ]]; then
      victim=${order[$((k % ${#order[@]}))]} k=$((k + 1))
      kill -9 "${pids[$victim]}" 2>/dev/null || true
      { wait "${pids[$victim]}"; } 2>/dev/null || true
      echo "${pids[$victim]}" >> "$work/killed.pids"
      fault "kill osd.$victim pid ${pids[$victim]} (SIGKILL)"
      up_at=$((t + down * 1000))
    elif [[ $victim -ge 0 && $t -ge $up_at ]]; then
      restart_osd "$victim" ""
      victim=-1 next=$(($(now_ms) + period * 1000))
    fi
    sleep 0.1
  done
  if [[ $victim -ge 0 ]]; then # the run ended while it was down: bring it back to stop it cleanly
    restart_osd "$victim" ", after the run"
  fi
}
t0_ms=$(now_ms)
if [[ -n $restart_spec ]]; then restart_loop; fi

status=0
for ((c = 0; c < clients; c++)); do
  rc=0
  wait "${cpids[$c]}" || rc=$?
  if [[ $rc != 0 ]]; then
    echo "cluster: client.$c FAILED (exit status $rc)" >&2
    status=1
  fi
  cat "$work/logs/client.$c.log" >&2
done

# the schedule's changes reached every process, unless processes were
# down on purpose (a killed OSD's socket refuses them; that is logged)
if [[ -n $sched_pid ]]; then
  rc=0
  wait "$sched_pid" || rc=$?
  if [[ $rc != 0 && -z $kill_spec && -z $restart_spec ]]; then
    echo "cluster: a scheduled ratio change failed (exit status $rc)" >&2
    status=1
  fi
fi

# --- stop the OSDs (graceful), check each stopped cleanly
for ((i = 0; i < osds; i++)); do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
for ((i = 0; i < osds; i++)); do
  rc=0
  { wait "${pids[$i]}"; } 2>/dev/null || rc=$?
  if [[ $i == "$kill_id" ]]; then
    [[ $rc == 137 ]] || { echo "cluster: osd.$i should have crashed, exit $rc" >&2; status=1; }
  elif [[ $rc != 0 ]]; then
    echo "cluster: osd.$i exited $rc" >&2; cat "$work/logs/osd.$i.log" >&2; status=1
  fi
  tail -n 1 "$work/logs/osd.$i.log" >&2
done
wait 2>/dev/null || true
pids=()

# --- one summary over all clients; the pids of the cluster (a recording
# session on a shared host may hold other processes' traces too)
cat "$work"/logs/client.*.out > "$work/clients.txt"
cat "$work"/logs/*.log | sed -n 's/.*(.*pid \([0-9]*\))$/\1/p' > "$work/pids"
python3 - "$work/clients.txt" <<'PY' | tee "$work/summary.txt"
import sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("SIM-CLIENT"):
        f = line.split()
        rows.append(dict(kv.split("=", 1) for kv in f[2:]))
def tot(k): return sum(float(r[k]) for r in rows)
if not rows:
    print("cluster: no client summary"); sys.exit(0)
print("cluster: %d clients: %.0f ops/s, %d ops, %d failed (%d timeouts, %d connection, "
      "%d OSD errors), worst p99 %.1f ms, %d reads verified, %d verification failures" % (
      len(rows), tot("ops_s"), tot("ops"), tot("failed"), tot("timeouts"), tot("conn_errors"),
      tot("peer_errors"), max(float(r["p99_us"]) for r in rows) / 1000, tot("verified"),
      tot("verify_failures")))
PY
exit $status
