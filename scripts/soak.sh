#!/usr/bin/env bash
# The soak test of the simulated cluster: the traced cluster at
# sampling 1.0 under an LTTng recording session for a bounded time, with
# faults: OSDs SIGKILLed and restarted round-robin (at most one down, the
# restarted one repairs objects on read), one slow OSD, client connections
# dropped. Afterwards it checks, and prints:
#   - every client request accounted for exactly once (issued = answered +
#     failed, none answered twice or never), read-your-writes held
#     (verification failures 0), no client hung, the cluster kept working;
#   - memory: every process's VmRSS, RssAnon and RssShmem sampled every few
#     seconds (/proc/PID/status); the second half's max of RssAnon (private
#     memory: the heap, where a leak shows; VmRSS also counts LTTng's shared
#     ring buffers, whose pages a process touches one by one as they wrap)
#     must stay within the first half's max + 10 % + 4 MiB
#     (--rss-margin-pct/--rss-margin-kb); and, with an ASan build
#     (--build build-asan), no sanitizer report in any log;
#   - tracing: every answered request has a complete trace (client span,
#     primary span, every answered replica or pull request's span) unless
#     cut by an OSD killed mid-request or lost to LTTng discards (counted).
# Last line: `SOAK result=PASS|FAIL key=value...`; exit 1 on FAIL, 77 when
# the run cannot be made here (skip).
#
#   scripts/soak.sh [--duration SEC (600)] [--out DIR (./soak-out)]
#                   [--build DIR (./build; built if needed)]
#                   [--no-sessiond] [--kill-sessiond-at SEC]
#                   [--clients N (3)] [--rate R (100 ops/s a client)]
#                   [--restart-period SEC] [--rss-margin-pct P] [--rss-margin-kb KB]
#
# --no-sessiond: the same cluster, traced, with no session daemon at all:
#   it runs in a private mount namespace whose LTTng run directory and
#   /dev/shm are empty (the applications cannot find the machine's daemon);
#   accounting and read-your-writes must hold as with tracing.
# --kill-sessiond-at SEC: a private lttng-sessiond (same private namespace:
#   the machine's daemon and sessions are untouched) records, and is
#   SIGKILLed SEC seconds in; the applications must run to the end with
#   correct accounting, no hang, no crash (traces are not checked then).
#
# Never: kill a process it did not start; leave one behind; touch the
# machine's own session daemon or its sessions.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sim=$root/examples/client-osd-sim

duration=600 out="" build="$root/build" no_sessiond=0 kill_sd_at="" clients=3 rate=100
period="" margin_pct=10 margin_kb=4096
usage() { sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; }
args_all=("$@")
while [[ $# -gt 0 ]]; do
  case $1 in
    --duration) duration=$2; shift ;;
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    --no-sessiond) no_sessiond=1 ;;
    --kill-sessiond-at) kill_sd_at=$2; shift ;;
    --clients) clients=$2; shift ;;
    --rate) rate=$2; shift ;;
    --restart-period) period=$2; shift ;;
    --rss-margin-pct) margin_pct=$2; shift ;;
    --rss-margin-kb) margin_kb=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "soak: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $no_sessiond == 1 && -n $kill_sd_at ]] && { echo "soak: --no-sessiond or --kill-sessiond-at, not both" >&2; exit 2; }
mode=recorded
[[ $no_sessiond == 1 ]] && mode=no-sessiond
[[ -n $kill_sd_at ]] && mode=sessiond-killed
[[ -n $out ]] || out="$PWD/soak-out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")

# --- a private mount namespace (modes without the machine's daemon)
if [[ $mode != recorded && -z ${HT_SOAK_NS:-} ]]; then
  if unshare --mount --propagation private true 2>/dev/null && [[ -d /var/run/lttng || $(id -u) == 0 ]]; then
    exec unshare --mount --propagation private env HT_SOAK_NS=1 bash "$0" "${args_all[@]}"
  fi
  if [[ $mode == no-sessiond ]] && ! lttng --no-sessiond list >/dev/null 2>&1; then
    echo "soak: no private namespace here, but no session daemon answers either: going on" >&2
  else
    echo "soak: $mode needs a private mount namespace (unshare --mount, as root) so that" \
         "the applications cannot see this machine's lttng-sessiond: skipped" >&2
    exit 77
  fi
fi
source "$root/scripts/lttng-env.sh"
if [[ -n ${HT_SOAK_NS:-} ]]; then
  HT__WORLD_ENTERED=1 ht_private_world || exit 1
fi

# --- build
source "$root/examples/client-osd-sim/sim-build.sh"
sim_build_ensure "$root" "$build" soak

# --- the schedule: kills every PERIOD s (down DOWN s), drops every 2 s a client
[[ -n $period ]] || period=$(( duration / 20 > 10 ? duration / 20 : 10 ))
down=$(( period / 4 > 2 ? period / 4 : 2 ))
[[ $down -gt 5 ]] && down=5
interval=$(( duration >= 300 ? 5 : 1 ))
rm -rf "$out/cluster" "$out/data" "$out/trace" "$out"/*.json "$out"/rss.txt "$out"/ust.txt "$out"/.done
# Names of our own (symlinks), so that the logs and RSS samples name this
# run's programs; the recording holds only them anyway (record's own
# session daemon, or this run's private one).
tag="soak$$"
rm -rf "$out/bin" && mkdir -p "$out/bin"
ln -s "$bin/sim-osd" "$out/bin/$tag-osd"
ln -s "$bin/sim-client" "$out/bin/$tag-cli"
cluster_args=(--bin "$bin" --osd-exe "$out/bin/$tag-osd" --client-exe "$out/bin/$tag-cli"
  --work "$out/cluster" --osds 4 --clients "$clients"
  --duration "$duration" --messenger traced --rate "$rate" --inflight 16 --sample-ratio 1
  --slow-osd 3 --slow-ms 10 --drop-conn-ms 2000 --restart-osds "$period:$down"
  --data-dir "$out/data" --hoptrace "$hoptrace")

started=() sessiond_pid="" consumerd_pids=""
cleanup() {
  touch "$out/.done" 2>/dev/null || true
  for p in "${started[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in $consumerd_pids $sessiond_pid; do kill -9 "$p" 2>/dev/null || true; done
  [[ -n ${HT_WORLD_DIR:-} ]] && rm -rf "$HT_WORLD_DIR"
  return 0
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# RSS of every process of the cluster (restarted OSDs are new instances):
# VmRSS, and its private part RssAnon (the heap: where a leak shows) and
# RssShmem (LTTng's shared ring buffers, touched as they wrap). One awk a
# round, so that sampling stays cheap on a loaded machine.
sample_rss() {
  local t0 name pid p files
  declare -A real=() ust_seen=()
  t0=$(date +%s)
  while [[ ! -f $out/.done ]]; do
    files=()
    if [[ -f $out/cluster/procs ]]; then
      while read -r name pid; do
        if [[ -z ${real[$pid]:-} ]]; then # clients run under timeout: sample its child
          p=$pid
          [[ $name == client.* ]] && p=$(pgrep -P "$pid" | head -n 1 || true)
          [[ -n $p ]] || continue
          real[$pid]=$p
        fi
        p=${real[$pid]}
        [[ -d /proc/$p ]] || continue
        if [[ -z ${ust_seen[$p]:-} ]]; then # lttng-ust loaded (traced, provider found)?
          ust_seen[$p]=1
          grep -q liblttng-ust "/proc/$p/maps" 2>/dev/null && echo "$name $p" >> "$out/ust.txt"
        fi
        files+=("$name:/proc/$p/status")
      done < "$out/cluster/procs"
    fi
    if [[ ${#files[@]} -gt 0 ]]; then
      awk -v t="$(( $(date +%s) - t0 ))" '
        BEGIN { for (i = 1; i < ARGC; i++) { split(ARGV[i], f, ":"); name[f[2]] = f[1]; ARGV[i] = f[2] } }
        FNR == 1 && last != "" { out() }
        { last = FILENAME }
        /^VmRSS:/ { vm = $2 } /^RssAnon:/ { an = $2 } /^RssShmem:/ { sh = $2 }
        function out() { split(last, p, "/"); if (vm != "") print t, name[last], p[3], vm, an + 0, sh + 0; vm = an = sh = "" }
        END { if (last != "") out() }' "${files[@]}" >> "$out/rss.txt" 2>/dev/null || true
    fi
    sleep "$interval"
  done
}
sample_rss &
started+=($!)

echo "soak: $mode, ${duration} s, 4 OSDs (osd.3 slow), $clients clients at $rate ops/s," \
     "sampling 1.0; an OSD killed every ${period} s and restarted ${down} s later;" \
     "connections dropped every 2 s; output in $out" >&2
status=0
case $mode in
recorded)
  # A process is traced once the session daemon has registered it (its
  # buffers made, events enabled). lttng-ust waits 3 s for that by default
  # and then runs on untraced until it happens: on a loaded host a
  # restarted OSD then serves its first requests unrecorded. Wait longer.
  export LTTNG_UST_REGISTER_TIMEOUT=30000
  "$hoptrace" record -o "$out/trace" --subbuf-size 4M --num-subbuf 8 -- \
    bash "$sim/cluster.sh" "${cluster_args[@]}" 2> "$out/run.log" &
  started+=($!)
  wait "${started[-1]}" || status=$?
  if [[ $status == 3 ]] && grep -q "^hoptrace: .*lttng-sessiond.*into the recording" "$out/run.log"; then
    echo "soak: FAIL: the recording's session daemon vanished mid-run:" >&2
    grep "^hoptrace: .*into the recording" "$out/run.log" >&2
  fi
  ;;
no-sessiond)
  if lttng list >/dev/null 2>&1; then
    echo "soak: a session daemon is reachable from here: cannot run without one" >&2
    exit 77
  fi
  bash "$sim/cluster.sh" "${cluster_args[@]}" 2> "$out/run.log" &
  started+=($!)
  wait "${started[-1]}" || status=$?
  ;;
sessiond-killed)
  ht_sessiond_start sessiond_pid "$out/sessiond.log" || exit 1
  echo "soak: private lttng-sessiond pid $sessiond_pid (killed at ${kill_sd_at} s)" >&2
  # this run's daemon (--shared-sessiond), and the cluster runs on after it
  # is gone (--keep-going): record says so at once and exits 3 at the end
  "$hoptrace" record --shared-sessiond --keep-going -o "$out/trace" --subbuf-size 4M \
    --num-subbuf 8 -- bash "$sim/cluster.sh" "${cluster_args[@]}" 2> "$out/run.log" &
  rec=$!
  started+=($rec)
  ( sleep "$kill_sd_at"
    consumers=$(pgrep -P "$sessiond_pid" | tr '\n' ' ' || true)
    echo "$consumers" > "$out/consumerd.pids"
    kill -9 "$sessiond_pid" && echo "soak: t=${kill_sd_at}s lttng-sessiond (pid $sessiond_pid) SIGKILLed" >&2
  ) &
  started+=($!)
  wait "$rec" || status=$?
  consumerd_pids=$(cat "$out/consumerd.pids" 2>/dev/null || true)
  if [[ $status == 3 ]] && grep -q "lttng-sessiond (the one that answers here.*stopped answering" "$out/run.log"; then
    status=0 # what record must say, and did
  else
    echo "soak: record did not report its session daemon's death (exit $status)" >&2
    status=1
  fi
  if kill -0 "$sessiond_pid" 2>/dev/null; then
    echo "soak: the session daemon was not killed (run shorter than --kill-sessiond-at?)" >&2
    status=1
  fi
  ;;
esac
touch "$out/.done"
wait "${started[0]}" 2>/dev/null || true
cat "$out/run.log" >&2

# --- checks
result=PASS
figures=()
check() { # check NAME CMD...: runs a check, keeps its figures (last line)
  local name=$1 log="$out/check-$1.txt"
  shift
  if "$@" > "$log" 2>&1; then :; else result=FAIL; fi
  cat "$log"
  figures+=($(tail -n 1 "$log"))
}
[[ $status == 0 ]] || { echo "soak: FAIL: the cluster exited $status (a client failed or an OSD did not stop cleanly)" >&2; result=FAIL; }
clients_txt="$out/cluster/clients.txt"
[[ -f $clients_txt ]] || { echo "soak: FAIL: no client summary" >&2; result=FAIL; : > "$clients_txt"; }
min_ops=$(( clients * rate * duration / 2 ))
check accounts python3 "$sim/soak_check.py" accounts "$clients_txt" "$min_ops"
# (no `ldd | grep -q` under pipefail: grep quits early, ldd dies of SIGPIPE
# and the test read "not ASan" at random)
ldd_out=$(ldd "$bin/sim-osd" 2>/dev/null || true)
if [[ $ldd_out == *libasan* ]]; then
  # ASan holds freed memory in its quarantine (up to 256 MiB) and RSS grows
  # with it: the figures are shown, LeakSanitizer at each exit judges leaks
  echo "soak: ASan build: RSS is reported, not judged; leaks are LeakSanitizer's (any report fails)" >&2
  result_before=$result
  check rss python3 "$sim/soak_check.py" rss "$out/rss.txt" "$margin_pct" "$margin_kb"
  result=$result_before
  figures+=(rss_judged=no_asan_build)
else
  check rss python3 "$sim/soak_check.py" rss "$out/rss.txt" "$margin_pct" "$margin_kb"
fi
if grep -l "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:" "$out"/cluster/logs/* 2>/dev/null; then
  echo "soak: FAIL: sanitizer reports in the logs above" >&2
  result=FAIL
fi
ust=$(sort -u "$out/ust.txt" 2>/dev/null | wc -l)
figures+=(lttng_ust_processes="$ust")
if [[ $ust == 0 ]]; then
  echo "soak: FAIL: no process of the cluster had lttng-ust loaded (the traced messenger's provider)" >&2
  result=FAIL
fi
kills=$(grep -c " kill osd" "$out/cluster/faults.log" 2>/dev/null || true)
restarts=$(grep -c " restart osd" "$out/cluster/faults.log" 2>/dev/null || true)
repaired=$(sed -n 's/.*read-repair: \([0-9]*\) objects repaired.*/\1/p' "$out"/cluster/logs/osd.*.log | awk '{s+=$1} END {print s+0}')
drops=$(sed -n 's/.* \([0-9]*\) connections dropped.*/\1/p' "$out"/cluster/logs/client.*.log | awk '{s+=$1} END {print s+0}')
figures+=(kills="$kills" restarts="$restarts" repairs="$repaired" drops="$drops")
[[ $kills -gt 0 && $restarts == "$kills" ]] || { echo "soak: FAIL: $kills kills, $restarts restarts" >&2; result=FAIL; }

if [[ $mode == recorded ]]; then
  discarded=$(sed -n 's/.* \([0-9][0-9]*\) discarded by LTTng.*/\1/p' "$out/run.log" | tail -n 1)
  timeout 900 "$hoptrace" export --format zipkin -o "$out/zipkin.json" "$out/trace" 2> "$out/export.log" || true
  cat "$out/export.log" >&2
  timeout 900 "$hoptrace" report -o "$out/report.txt" "$out/trace" 2> /dev/null || true
  check traces python3 "$sim/soak_check.py" traces "$out/zipkin.json" "$out/cluster/pids" \
    "$out/cluster/killed.pids" "$clients_txt" "${discarded:-0}"
fi
echo "SOAK result=$result mode=$mode duration=$duration ${figures[*]}"
[[ $result == PASS ]]
