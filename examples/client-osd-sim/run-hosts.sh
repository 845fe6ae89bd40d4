#!/usr/bin/env bash
# The multi-host launcher: the
# traced cluster spread over N simulated hosts (scripts/hosts.sh: network,
# mount and UTS namespaces, root only), each with its own lttng-sessiond
# and a live session streaming to one lttng-relayd, each host's trace clock
# skewed by real mechanisms (libfaketime on its session daemon: an offset;
# the clock plugin libht-clock-drift.so in all its processes: a drift).
# Then stops everything and writes into the output directory:
#   relay/     every host's trace, as the relay wrote it (relay/hI/sim-*/)
#   hosts.txt  per host: address, skew, and the ground truth of its clock
#   cluster/   map, OSD and client logs, summary
#   zipkin.json otlp.json chrome-trace.json report.txt waterfall.html
#              clock-table.txt (hoptrace on relay/: every host on one clock)
#
#   run-hosts.sh [--hosts N (3)] [--skew SPEC|none] [--duration S (20)]
#                [--osds N (4)] [--clients N (3)] [--client-hosts h1,...]
#                [--rate R (250)] [--inflight N (16)] [--ratio R (1.0)]
#                [--ratio-schedule SEC:R,...] [--kill-sessiond HOST@SEC]
#                [--follow] [--prefix P (hts + its pid)] [--subnet K] [--out DIR (./hosts-out)]
#                [--build DIR (./build)]
#                [--flight [--capture SPEC] [--flight-size SIZE] [--flight-arg ARG]...]
#                [--cluster-arg ARG]...
#
# --skew: default h1=+7ms,h2=-3ms,h3=+100ppm (hosts beyond N dropped);
#   `none` for an unskewed control run; syntax in scripts/hosts.sh.
# OSD i runs on host (i mod N)+1 at 10.77.K.<host>:6800+i; clients
#   round-robin over --client-hosts (default h1).
# --kill-sessiond HOST@SEC: SIGKILL that host's lttng-sessiond SEC s after
#   the cluster starts (the other hosts' traces must keep coming).
# --flight: every request recorded in memory (HT_FLIGHT=1), capture
#   triggers HT_CAPTURE=SPEC (default slow-client=10ms,error); instead of a
#   live session, each host runs its flight recorder on its own daemon
#   (`hoptrace record --flight --shared-sessiond --relay net://RELAY`):
#   snapshots to the relay (relay/hI/sim-*/capture-*/), each host's
#   capture.json and log in flight/hI*. With --follow, `hoptrace export
#   --follow` reads the relay's snapshots as they are written (what an
#   operator watching captures live sees): zipkin-follow.json, each
#   captured trace once.
# --flight-memory: --flight with the spans in each process's own memory
#   (HT_FLIGHT=memory: README "Flight recorder").
# --flight-arg ARG: passed to each host's `record --flight` as is
#   (--max-defer-ms 5000, ...), once per word.
# --cluster-arg ARG: passed to cluster.sh as is (--slow-osd 1, --kill-osd
#   3@6, --client-arg --failover, ...), once per word.
# --follow: a live Zipkin export of every host's session during the run
#   (in the relay namespace; needs a hoptrace taking several live inputs),
#   into zipkin-live.json.
# hosts.txt: a line `D <ns>` (realtime - monotonic, measured at setup) and
# per host `host hI address=A skew=SPEC offset_ns=N ppm=P anchor_ns=N
# metadata_offset_ns=N trace=relay/hI/.../64-bit processes=osd.0,...`
# (metadata_offset_ns: the clock offset in the host's trace metadata; `-`
# when the host left no trace). Ground truth: host h's trace clock is ahead
# of true time, at a trace timestamp t (ns since the epoch), by
#   theta_h(t) = (metadata_offset_ns - D) + ppm * 1e-6 * (mono(t) - anchor_ns),
#   mono(t) = t - D
# (true time = t - theta_h(t)); hosts_truth.py checks it on the RPCs.
# Exit 77 when simulated hosts cannot be made here (not root, no netns).
# Never: kill a process it did not start; leave a process, namespace or
# mount behind (also on SIGINT/SIGTERM).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

nhosts=3 skew=default duration=20 osds=4 clients=3 client_hosts=h1 rate=250 inflight=16
ratio=1.0 schedule="" kill_sd="" follow=0 prefix=hts$$ subnet="" out="" build="$root/build"
flight=0 flight_mode=1 capture="slow-client=10ms,error" flight_size="" cluster_extra=() flight_extra=()
usage() { sed -n '2,44p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --hosts) nhosts=$2; shift ;;
    --skew) skew=$2; shift ;;
    --duration) duration=$2; shift ;;
    --osds) osds=$2; shift ;;
    --clients) clients=$2; shift ;;
    --client-hosts) client_hosts=$2; shift ;;
    --rate) rate=$2; shift ;;
    --inflight) inflight=$2; shift ;;
    --ratio) ratio=$2; shift ;;
    --ratio-schedule) schedule=$2; shift ;;
    --kill-sessiond) kill_sd=$2; shift ;;
    --follow) follow=1 ;;
    --prefix) prefix=$2; shift ;;
    --subnet) subnet=$2; shift ;;
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    --flight) flight=1 ;;
    --flight-memory) flight=1 flight_mode=memory ;;
    --capture) capture=$2; shift ;;
    --flight-size) flight_size=$2; shift ;;
    --cluster-arg) cluster_extra+=("$2"); shift ;;
    --flight-arg) flight_extra+=("$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-hosts: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $nhosts =~ ^[1-9][0-9]*$ ]] || { echo "run-hosts: --hosts N (1 or more)" >&2; exit 2; }
if [[ $skew == default ]]; then
  skew=$(tr , '\n' <<< "h1=+7ms,h2=-3ms,h3=+100ppm" | awk -F= -v n="$nhosts" 'substr($1, 2) <= n' | paste -sd,)
fi
if [[ -n $kill_sd && ! $kill_sd =~ ^h[0-9]+@[0-9.]+$ ]]; then
  echo "run-hosts: --kill-sessiond HOST@SEC (e.g. h2@5)" >&2; exit 2
fi
[[ -d $build ]] && build=$(cd "$build" && pwd)
[[ -n $out ]] || out="$PWD/hosts-out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

source "$root/scripts/hosts.sh"
# shellcheck disable=SC2034 # read by the ht_* functions
HT_HOSTS_PREFIX=$prefix
ht_hosts_supported || { echo "run-hosts: simulated hosts cannot be made here (see above)" >&2; exit 77; }

# the programs, provider and clock plugin are needed; the tool only for the outputs
bin="$build/examples/client-osd-sim" hoptrace="$build/tools/hoptrace/hoptrace"
plugin="$bin/libht-clock-drift.so"
if [[ ! -x $bin/sim-osd || ! -x $bin/sim-client || ! -f $plugin || ! -e $build/libhoptrace-tp.so ]]; then
  echo "run-hosts: building in $build" >&2
  cmake -S "$root" -B "$build" >/dev/null
  cmake --build "$build" -j2 --target sim-osd sim-client hoptrace_tp ht-clock-drift >/dev/null
fi
if [[ ! -x $hoptrace ]] && ! cmake --build "$build" -j2 --target hoptrace_cli >/dev/null 2>&1; then
  echo "run-hosts: no hoptrace tool ($hoptrace does not build): traces only" >&2
  ((flight)) && { echo "run-hosts: --flight needs the hoptrace tool" >&2; exit 2; }
fi
export HT_LTTNG_PROVIDER="$build/libhoptrace-tp.so"
hx=(bash "$root/scripts/hosts.sh" --prefix "$prefix" exec) # the host launch prefix
# an app waits for its session daemon's registration (default 3 s) before
# running untraced: wait longer, so that every hop is recorded from the start
export LTTNG_UST_REGISTER_TIMEOUT=${LTTNG_UST_REGISTER_TIMEOUT:-30000}

cluster_pid="" killer_pid="" follow_pid="" watcher_pid="" flight_pids=""
cleanup() {
  local p
  set +e # every step runs, whatever fails, whatever signal comes now
  trap '' INT TERM
  [[ -n $killer_pid ]] && pkill -TERM -P "$killer_pid" 2>/dev/null # its sleep
  for p in $watcher_pid $killer_pid $cluster_pid $follow_pid $flight_pids; do kill -TERM "$p" 2>/dev/null || true; done
  for p in $watcher_pid $killer_pid $cluster_pid $follow_pid $flight_pids; do wait "$p" 2>/dev/null || true; done
  ht_hosts_down
}
trap cleanup EXIT
trap 'echo "run-hosts: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM
t_start=$(date +%s%N)
stamp() { echo "$(( ($(date +%s%N) - t_start) / 1000000 ))"; } # ms since start
timing=()

# --- hosts, relay, one session daemon and live session per host
rm -rf "$out/relay" "$out/cluster" "$out/hosts.txt" "$out/flight"
ht_hosts_up "$nhosts" --prefix "$prefix" --skew "$skew" ${subnet:+--subnet "$subnet"} --clock-plugin "$plugin"
ht_hosts_load
hosts=() h=""
for ((i = 1; i <= nhosts; i++)); do hosts+=("h$i"); done
ht_relay_start "$out/relay"
# flight_start HOST: the host's flight recorder on its own daemon, our child
# (hosts.sh exec execs: the pid started is record's); ready once its
# trigger is registered
flight_start() {
  local h=$1 log="$out/flight/$1.log" i
  "${hx[@]}" "$h" "$hoptrace" record --flight --shared-sessiond --name sim \
    --relay "net://$HT_H_SUBNET.254" -o "$out/flight/$h" ${flight_size:+--flight-size "$flight_size"} \
    ${flight_extra[@]+"${flight_extra[@]}"} \
    -- sleep 86400 2> "$log" &
  flight_pids+=" $!"
  for ((i = 0; i < 300; i++)); do
    grep -q 'flight recorder: trigger' "$log" && return 0
    kill -0 "$!" 2>/dev/null || break
    sleep 0.1
  done
  echo "run-hosts: $h: the flight recorder did not start:" >&2
  cat "$log" >&2
  return 1
}
if ((flight)); then mkdir -p "$out/flight"; fi
for h in "${hosts[@]}"; do
  ht_host_sessiond_start "$h"
  if ((flight)); then
    flight_start "$h"
    continue
  fi
  ht_host_exec "$h" lttng -n create sim --live=1000000 --set-url="net://$HT_H_SUBNET.254" >/dev/null
  ht_host_exec "$h" lttng -n enable-channel -u hoptrace --subbuf-size 4M --num-subbuf 8 >/dev/null
  ht_host_exec "$h" lttng -n enable-event -u -c hoptrace 'hoptrace:*' >/dev/null
  ht_host_exec "$h" lttng -n add-context -u -c hoptrace -t vpid -t vtid -t procname >/dev/null
  ht_host_exec "$h" lttng -n start >/dev/null
done
timing+=("setup $(stamp) ms")
if ((flight && follow)); then
  # snapshots a relay writes carry no end mark: the run ends 10 s after
  # the last new one (the recorders take theirs at most ~1 s apart)
  "$hoptrace" export --format zipkin --follow --timeout 10 -o "$out/zipkin-follow.json" \
    "$out/relay" 2> "$out/follow.log" &
  follow_pid=$!
elif [[ $follow == 1 ]]; then
  if [[ -x $hoptrace && $("$hoptrace" help 2>&1) == *"INPUT..."* ]]; then
    urls=(); for h in "${hosts[@]}"; do urls+=("net://$HT_H_SUBNET.254/host/$h/sim"); done
    # --relay-dir: a host whose session daemon dies (--kill-sessiond) ends
    # its stream as a clean destroy would; the relay's files tell them apart
    "${hx[@]}" relay "$hoptrace" export --format zipkin --follow --relay-dir "$out/relay" \
      -o "$out/zipkin-live.json" "${urls[@]}" 2> "$out/follow.log" &
    follow_pid=$!
  else
    echo "run-hosts: --follow skipped: this hoptrace reads one live input only" >&2
  fi
fi

# --- the cluster: OSD i on host (i mod N)+1, clients over --client-hosts
mkdir -p "$out/cluster"
IFS=, read -ra chosts <<< "$client_hosts"
placement=()
{
  echo "# written by run-hosts.sh: OSD i on host (i mod $nhosts)+1"
  echo "pg_num 64"; echo "size 3"; echo "min_size 2"
  for ((i = 0; i < osds; i++)); do
    echo "osd $i tcp://$HT_H_SUBNET.$((i % nhosts + 1)):$((6800 + i))"
    placement+=("osd.$i=h$((i % nhosts + 1))")
  done
} > "$out/cluster/cluster.map"
for ((c = 0; c < clients; c++)); do placement+=("client.$c=${chosts[$((c % ${#chosts[@]}))]}"); done
host_of=$(IFS=,; echo "${placement[*]}")
args=(--bin "$bin" --work "$out/cluster" --map "$out/cluster/cluster.map" --clients "$clients"
      --duration "$duration" --messenger traced --rate "$rate" --inflight "$inflight"
      --sample-ratio "$ratio" --host-exec "${hx[*]}" --host-of "$host_of")
[[ -x $hoptrace ]] && args+=(--hoptrace "$hoptrace")
[[ -n $schedule ]] && args+=(--ratio-schedule "$schedule")
args+=(${cluster_extra[@]+"${cluster_extra[@]}"})
echo "run-hosts: $nhosts hosts (skew ${skew:-none}), $osds OSDs, $clients clients on $client_hosts," \
     "${duration} s, sampling ratio $ratio${kill_sd:+, session daemon of ${kill_sd%@*} killed at ${kill_sd#*@} s}" >&2
if [[ -n $kill_sd ]]; then
  ( sleep "${kill_sd#*@}"; ht_host_sessiond_kill "${kill_sd%@*}" ) &
  killer_pid=$!
fi
# A daemon that dies is said at once, not found at the end: every 0.5 s
# each host's session daemon and the relay, by the pids started for them
watch_daemons() {
  local name pid seen=" "
  while sleep 0.5; do
    for name in "${hosts[@]}" relay; do
      [[ $seen == *" $name "* ]] && continue
      pid=$(awk -v n="$name" '$1 == n { print $3 }' "$HT_HOSTS_RUN/$prefix/pids" 2>/dev/null)
      [[ -n $pid ]] || continue
      if ! ht__started_pid "$name" > /dev/null; then
        seen+="$name "
        echo "$name $pid $(stamp)" >> "$out/daemons-lost.txt"
        echo "run-hosts: $name: its $( [[ $name == relay ]] && echo lttng-relayd || echo lttng-sessiond)" \
             "(pid $pid) is gone at $(stamp) ms: nothing of $name is recorded from then on" >&2
      fi
    done
  done
}
: > "$out/daemons-lost.txt"
watch_daemons &
watcher_pid=$!
status=0
if ((flight)); then
  export HT_FLIGHT=$flight_mode HT_CAPTURE=$capture
  echo "run-hosts: flight mode: every request recorded in memory, captured on $capture" >&2
fi
bash "$here/cluster.sh" "${args[@]}" &
cluster_pid=$!
wait "$cluster_pid" || status=$?
cluster_pid=""
kill "$watcher_pid" 2>/dev/null; wait "$watcher_pid" 2>/dev/null || true
watcher_pid=""
while read -r name pid at; do # one killed on purpose (--kill-sessiond) is not a failure
  [[ $name == "${kill_sd%@*}" && -n $kill_sd ]] && continue
  echo "run-hosts: FAIL: $name's daemon (pid $pid) vanished at $at ms" >&2
  status=1
done < "$out/daemons-lost.txt"
timing+=("cluster $(stamp) ms")

# --- stop and destroy each session (destroy waits until the relay has the data)
if ((flight)); then
  # each recorder ends its command, takes its pending snapshot, writes
  # flight/hI/capture.json and destroys its session
  for p in $flight_pids; do kill -TERM "$p" 2>/dev/null || true; done
  for p in $flight_pids; do wait "$p" 2>/dev/null || true; done
  flight_pids=""
  for h in "${hosts[@]}"; do
    echo "run-hosts: $h: $(grep 'flight recorder: [0-9]' "$out/flight/$h.log" | sed 's/^hoptrace: //')" >&2
  done
fi
for h in "${hosts[@]}"; do
  ((flight)) && break
  if ! ht_host_sessiond_pid "$h" >/dev/null; then
    echo "run-hosts: $h: no session daemon (killed?): its trace ends where it died" >&2
    continue
  fi
  timeout 60 "${hx[@]}" "$h" lttng -n destroy sim >/dev/null ||
    echo "run-hosts: $h: lttng destroy failed or timed out" >&2
done
if [[ -n $follow_pid ]]; then # the live export ends with the sessions
  # (a snapshot follower: 10 s after the recorders' last snapshot)
  for ((i = 0; i < 300; i++)); do kill -0 "$follow_pid" 2>/dev/null || break; sleep 0.1; done
  kill -TERM "$follow_pid" 2>/dev/null || true
  follow_rc=0
  wait "$follow_pid" || follow_rc=$?
  follow_pid=""
  live=$out/zipkin-live.json
  ((flight)) && live=$out/zipkin-follow.json
  # 3: something lost (a killed daemon's part): the checks judge that
  ((follow_rc == 0)) || echo "run-hosts: live export: exit $follow_rc (see $out/follow.log)" >&2
  echo "run-hosts: live export (--follow) wrote $live" \
       "($(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$live" 2>/dev/null || echo "?") spans)" >&2
fi
ht_relay_stop
if ((flight)); then # the report reads each host's counters beside its snapshots
  for h in "${hosts[@]}"; do
    if [[ -f $out/flight/$h/capture.json && -d $out/relay/$h ]]; then
      cp "$out/flight/$h/capture.json" "$out/relay/$h/capture.json"
    fi
  done
fi
timing+=("sessions closed $(stamp) ms")

# --- ground truth, then the hosts can go
{
  sed -n '/^# hosts.txt:/,/^#   mono/p' "$0"
  echo "D $HT_H_D_NS"
  while read -r h addr spec off ppm anchor; do
    trace=$(cd "$out" && ls -d relay/"$h"/sim-*/ust/uid/0/64-bit \
      relay/"$h"/sim-*/capture-*/ust/uid/0/64-bit 2>/dev/null | head -n 1) || true
    meta=-
    if [[ -n $trace ]]; then
      # the clock's offset_s (seconds) and offset (cycles at 1 GHz), in integers
      read -r os oc < <(babeltrace2 --output-format=ctf-metadata "$out/$trace" 2>/dev/null |
        awk -F'[=;]' '/^clock \{/ { c = 1 } /^\};/ { c = 0 }
                      c { k = $1; v = $2; gsub(/[ \t]/, "", k); gsub(/[ \t]/, "", v) }
                      c && k == "offset_s" { s = v } c && k == "offset" { o = v }
                      END { print (s == "" ? 0 : s), (o == "" ? "-" : o) }') || true
      [[ ${oc:--} =~ ^-?[0-9]+$ ]] && meta=$(( os * 1000000000 + oc ))
    fi
    procs=$(tr , '\n' <<< "$host_of" | sed -n "s/=$h\$//p" | paste -sd,)
    echo "host $h address=$addr skew=$spec offset_ns=$off ppm=$ppm anchor_ns=$anchor" \
         "metadata_offset_ns=$meta trace=${trace:--} processes=${procs:--}"
  done < "$HT_HOSTS_RUN/$prefix/hosts"
} > "$out/hosts.txt"
ht_hosts_down
timing+=("hosts down $(stamp) ms")

echo
grep -v '^#' "$out/hosts.txt"
python3 "$here/hosts_truth.py" "$out" || echo "run-hosts: ground truth and traces disagree (above)" >&2
echo "relay output: $(du -sh "$out/relay" | cut -f1) ($(find "$out/relay" -name 'metadata' | wc -l) traces)"

# --- the tool's outputs, when it reads several hosts' traces at once
if [[ -x $hoptrace && $("$hoptrace" help 2>&1) == *"INPUT..."* ]]; then
  echo "run-hosts: converting the traces" >&2
  "$hoptrace" export --format zipkin -q -o "$out/zipkin.json" "$out/relay"
  "$hoptrace" export --format otlp -q -o "$out/otlp.json" "$out/relay"
  "$hoptrace" export --format chrome -q -o "$out/chrome-trace.json" "$out/relay"
  "$hoptrace" report -o "$out/report.txt" "$out/relay" 2> "$out/report.log" || cat "$out/report.log" >&2
  "$hoptrace" view -q -o "$out/waterfall.html" "$out/relay"
  timing+=("exports $(stamp) ms")
  # the clock table on its own: per host pair the fitted offset, drift and bound
  sed -n '/^Clock alignment/,/^$/p' "$out/report.txt" > "$out/clock-table.txt"
  echo
  sed -n '/^Per host:/,/^Completeness/p' "$out/report.txt" | sed '$d' || true
  echo "(report.txt: per-hop latency, now on one clock; clock-table.txt: the clocks)"
else
  echo "run-hosts: no hoptrace reading several hosts at once: no merged outputs (relay/ holds the traces)" >&2
fi

cat <<TXT

== hoptrace simulated hosts: $(sed 's/^cluster: //' "$out/cluster/summary.txt" 2>/dev/null)
Outputs in $out: relay/ (every host's trace), hosts.txt (clock ground truth), cluster/ (logs),
  zipkin.json otlp.json chrome-trace.json report.txt waterfall.html clock-table.txt (every host on the reference host's clock)
Timings: ${timing[*]}
TXT
exit $status
