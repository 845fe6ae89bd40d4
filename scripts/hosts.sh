#!/usr/bin/env bash
# Simulated hosts for tracing a cluster on one machine, with the
# real LTTng components. Sourced (functions ht_*) or run as a command:
#   hosts.sh [--prefix P] up N [--skew SPEC] [--subnet K] [--clock-plugin SO]
#   hosts.sh [--prefix P] exec HOST CMD...     HOST: h1..hN or relay
#   hosts.sh [--prefix P] sessiond-start|sessiond-kill HOST
#   hosts.sh [--prefix P] relay-start OUTDIR | relay-stop | list | down | supported
#
# Host hI: network namespace P-hI (10.77.K.I on eth0), a mount namespace with
# private tmpfs on /var/run/lttng and /dev/shm (its own lttng-sessiond and
# registrations), a UTS namespace (hostname hI). Namespace P-relay holds the
# bridge 10.77.K.254 every host's veth joins, and lttng-relayd (5342-5344).
# Nothing is addressed from the root namespace: prefixes never collide; K is
# cksum(P) % 250 + 1 unless --subnet K. Default prefix ht (or $HT_HOSTS_PREFIX).
#
# --skew SPEC (default none): hI=+7ms|-250us|+0.5s|+100ppm,... (one host's
# entries add up). An offset: the host's lttng-sessiond runs under
# libfaketime, monotonic untouched, so the clock offset it writes into the
# metadata is off by that much (apps are not under faketime: LD_PRELOAD would
# clash with ASan/valgrind). A drift: the sessiond (so its consumerd) and
# every app run by `exec` load libht-clock-drift.so with HT_CLOCK_DRIFT_PPM
# and ONE anchor per host, the monotonic time at `up`. Ground truth, host h,
# trace time t (ns since the epoch), D = realtime - monotonic at `up`:
#   theta_h(t) = (metadata_offset_h - D) + ppm_h*1e-6*(mono(t) - anchor_h), mono(t) = t - D
#
# State in $HT_HOSTS_RUN/P/ (default /run/hoptrace-hosts, a private bind
# mount of itself), so exec/down work from any shell: `state` (sourceable;
# HT_H_OWNER: pid and start time of the shell that brought it up),
# `hosts` (name address spec offset_ns ppm anchor_ns), `pids` (daemons
# started, by the pid started: never found by name), per host mnt/uts
# namespace files and a HOME. `down` stops every process in P's
# namespaces (all ours: the daemons, their children, apps), unmounts,
# deletes namespaces (veths go with them) and state: idempotent, safe in
# an EXIT trap; `up` refuses a prefix whose owner still runs and cleans
# the state of one whose owner is gone.
HT_HOSTS_RUN=${HT_HOSTS_RUN:-/run/hoptrace-hosts}
HT_HOSTS_PREFIX=${HT_HOSTS_PREFIX:-ht}
HT_HOSTS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

ht__err() { echo "hosts: $*" >&2; }
ht__dir() { echo "$HT_HOSTS_RUN/$HT_HOSTS_PREFIX"; }
# ht__locked CMD...: one setup or teardown at a time on the machine. Reentrant:
# a teardown run by a trap that interrupted a locked setup already holds it.
ht__locked() {
  local rc=0
  if [[ -n ${HT__LOCK_FD:-} ]]; then "$@"; return; fi
  exec {HT__LOCK_FD}>"$HT_HOSTS_RUN.lock"
  flock "$HT__LOCK_FD"
  "$@" || rc=$?
  exec {HT__LOCK_FD}>&-
  HT__LOCK_FD=""
  return $rc
}

# ht_hosts_supported: 0 when namespaces can be made here, else 1 with the reason.
ht_hosts_supported() {
  local c
  [[ $(id -u) == 0 ]] || { ht__err "needs root (network and mount namespaces)"; return 1; }
  for c in ip unshare nsenter flock lttng lttng-sessiond lttng-relayd python3; do
    command -v "$c" >/dev/null || { ht__err "needs $c"; return 1; }
  done
  unshare --net --mount --uts --propagation private true 2>/dev/null ||
    { ht__err "cannot create namespaces (no CAP_SYS_ADMIN?)"; return 1; }
  ip netns list >/dev/null 2>&1 || { ht__err "ip netns does not work here"; return 1; }
}

ht__ns_list() { # this prefix's network namespaces, hosts before the relay
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${HT_HOSTS_PREFIX}-h[0-9]+\$" | sort -V
  ip netns list 2>/dev/null | awk '{print $1}' | grep -Fx "${HT_HOSTS_PREFIX}-relay"
}

# ht_hosts_up N [--prefix P] [--skew SPEC] [--subnet K] [--clock-plugin SO]
ht_hosts_up() {
  local n=$1 skew="" subnet="" plugin="" ; shift
  while [[ $# -gt 0 ]]; do
    case $1 in
      --prefix) HT_HOSTS_PREFIX=$2; shift ;;
      --skew) skew=$2; shift ;;
      --subnet) subnet=$2; shift ;;
      --clock-plugin) plugin=$2; shift ;;
      *) ht__err "up: unknown option $1"; return 2 ;;
    esac
    shift
  done
  [[ $n =~ ^[0-9]+$ && $n -ge 1 && $n -le 200 ]] || { ht__err "up: N must be 1..200"; return 2; }
  [[ $HT_HOSTS_PREFIX =~ ^[a-z][a-z0-9]{0,11}$ ]] || { ht__err "prefix: [a-z][a-z0-9]{0,11}"; return 2; }
  [[ -n $subnet ]] || subnet=$(( $(printf %s "$HT_HOSTS_PREFIX" | cksum | cut -d' ' -f1) % 250 + 1 ))
  [[ $subnet =~ ^[0-9]+$ && $subnet -ge 1 && $subnet -le 254 ]] || { ht__err "--subnet K: 1..254"; return 2; }
  [[ -n $plugin ]] || plugin=${HT_CLOCK_DRIFT_PLUGIN:-$HT_HOSTS_ROOT/build/examples/client-osd-sim/libht-clock-drift.so}
  ht_hosts_supported || return 1
  local table
  table=$(python3 "$HT_HOSTS_ROOT/scripts/hosts_clock.py" skew "$skew" "$n") || return 2
  if awk '$3 != 0 { f = 1 } END { exit !f }' <<< "$table" && [[ ! -f $plugin ]]; then
    ht__err "a drift needs the clock plugin $plugin (cmake --build build --target ht-clock-drift)"; return 1
  fi
  local faketime
  faketime=$(find /usr/lib -path '*/faketime/libfaketime.so.1' 2>/dev/null | head -n 1)
  if awk '$2 != 0 { f = 1 } END { exit !f }' <<< "$table" && [[ -z $faketime ]]; then
    ht__err "a clock offset needs libfaketime (apt-get install faketime)"; return 1
  fi
  if ht__owner_alive; then
    ht__err "prefix $HT_HOSTS_PREFIX is in use by a run that still runs ($(ht__owner)): choose another"
    return 1
  fi
  ht_hosts_down # a stale state of this prefix (an earlier run, gone)
  ht__locked ht__up "$n" "$subnet" "$table" "$(cd "$(dirname "$plugin")" 2>/dev/null && pwd)/$(basename "$plugin")" "$faketime" ||
    { ht_hosts_down; return 1; }
}

# ht__owner: "PID START" of the process that brought the prefix up (START:
# its start time in clock ticks, so that a reused pid is not taken for it)
ht__owner() { sed -n 's/^HT_H_OWNER=//p' "$(ht__dir)/state" 2>/dev/null | tr -d "'\""; }
ht__start_time() { awk '{ print $22 }' "/proc/$1/stat" 2>/dev/null; }
ht__owner_alive() { # 0 when the prefix's owner still runs
  local pid start
  read -r pid start <<< "$(ht__owner)"
  [[ -n $pid && -n $start && $(ht__start_time "$pid") == "$start" ]]
}

ht__mkns() { # DIR [HOSTNAME]: mnt (+uts) namespace files with private run dirs
  mkdir -p "$1/home"; touch "$1/mnt"
  local uts=() sethost=""
  if [[ -n ${2:-} ]]; then touch "$1/uts"; uts=(--uts="$1/uts"); sethost="; hostname $2"; fi
  # unshare's bind of the new namespace onto the file fails with EINVAL
  # when the new namespace's id is below that of the namespace we run in
  # (the kernel's mount-namespace loop check), and kernels that hand out
  # namespace ids from per-CPU batches (6.18 here) give a lower one on a
  # CPU whose batch is lower: every try on that CPU fails, one on the CPU
  # our own namespace was made on never does. So the tries after the
  # first are pinned to each CPU in turn (one outside a cpuset fails as a
  # try).
  local try cpus pin=()
  read -ra cpus < <(python3 -c 'import os; print(*range(os.cpu_count()))')
  for try in 1 2 3 4 5 6 7 8 9 10; do
    ((try == 1)) || pin=(taskset -c "${cpus[(try - 2) % ${#cpus[@]}]}")
    "${pin[@]}" unshare --mount="$1/mnt" "${uts[@]}" --propagation private sh -c \
      "mkdir -p /var/run/lttng && mount -t tmpfs -o mode=0755 htrun /var/run/lttng &&
       mount -t tmpfs -o mode=1777 htshm /dev/shm$sethost" 2>> "$1/mkns.err" && return 0
    for f in "$1/mnt" ${2:+"$1/uts"}; do # a half-made attempt's files, anew
      mountpoint -q "$f" 2>/dev/null && umount -l "$f"
      rm -f "$f" && touch "$f"
    done
    sleep "0.$try"
  done
  cat "$1/mkns.err" >&2
  return 1
}

ht__up() {
  local n=$1 k=$2 table=$3 plugin=$4 faketime=$5 d i p=$HT_HOSTS_PREFIX D anchor
  d=$(ht__dir)
  mkdir -p "$HT_HOSTS_RUN"
  if ! mountpoint -q "$HT_HOSTS_RUN"; then
    mount --bind "$HT_HOSTS_RUN" "$HT_HOSTS_RUN" && mount --make-private "$HT_HOSTS_RUN" || return 1
  fi
  mkdir -p "$d/relay" && : > "$d/pids" || return 1
  read -r D anchor < <(python3 "$HT_HOSTS_ROOT/scripts/hosts_clock.py" measure) || return 1
  printf 'HT_H_PREFIX=%s\nHT_H_SUBNET=10.77.%s\nHT_H_N=%s\nHT_H_D_NS=%s\nHT_H_PLUGIN=%q\nHT_H_FAKETIME=%q\nHT_H_OWNER="%s %s"\n' \
    "$p" "$k" "$n" "$D" "$plugin" "$faketime" "$$" "$(ht__start_time $$)" > "$d/state" || return 1
  awk -v k="$k" -v a="$anchor" '{ sub(/^h/, "", $1); print "h" $1, "10.77." k "." $1, $4, $2, $3, a }' \
    <<< "$table" > "$d/hosts" || return 1
  ip netns add "$p-relay" && ip -n "$p-relay" link set lo up &&
    ip -n "$p-relay" link add br0 type bridge &&
    ip -n "$p-relay" addr add "10.77.$k.254/24" dev br0 && ip -n "$p-relay" link set br0 up &&
    ht__mkns "$d/relay" || return 1
  for ((i = 1; i <= n; i++)); do
    ip netns add "$p-h$i" && ip -n "$p-h$i" link set lo up &&
      ip -n "$p-relay" link add "veth$i" type veth peer name eth0 netns "$p-h$i" &&
      ip -n "$p-relay" link set "veth$i" master br0 up &&
      ip -n "$p-h$i" addr add "10.77.$k.$i/24" dev eth0 && ip -n "$p-h$i" link set eth0 up &&
      ht__mkns "$d/h$i" "h$i" || return 1
  done
  echo "hosts: up: $n hosts ($p-h1..$p-h$n, 10.77.$k.1..$n), relay $p-relay 10.77.$k.254" >&2
}

ht_hosts_load() { # sources this prefix's state; fails when it is not up
  local d; d=$(ht__dir)
  [[ -f $d/state ]] || { ht__err "prefix $HT_HOSTS_PREFIX is not up (no $d/state)"; return 1; }
  # shellcheck disable=SC1091
  source "$d/state"
}

ht__host_field() { # HOST FIELD#: a column of the hosts table
  awk -v h="$1" -v f="$2" '$1 == h { print $f; found = 1 } END { exit !found }' "$(ht__dir)/hosts"
}

# ht__prefix HOST: sets the array HT_CMD to the command prefix entering HOST
ht__prefix() {
  local h=$1 d ppm cwd=/
  ht_hosts_load || return 1
  d=$(ht__dir)
  [[ -d $PWD ]] && cwd=$PWD
  HT_CMD=(nsenter --net="/run/netns/$HT_H_PREFIX-$h" --mount="$d/$h/mnt")
  ppm=0
  if [[ $h != relay ]]; then
    ppm=$(ht__host_field "$h" 5) || { ht__err "no host $h (h1..h$HT_H_N or relay)"; return 1; }
    HT_CMD+=(--uts="$d/$h/uts")
  fi
  HT_CMD+=(env -C "$cwd" -u FAKETIME)
  [[ $ppm == 0 ]] && HT_CMD+=(-u LTTNG_UST_CLOCK_PLUGIN -u HT_CLOCK_DRIFT_PPM -u HT_CLOCK_DRIFT_ANCHOR_NS)
  HT_CMD+=(HOME="$d/$h/home" LTTNG_HOME="$d/$h/home")
  [[ $ppm == 0 ]] || HT_CMD+=(LTTNG_UST_CLOCK_PLUGIN="$HT_H_PLUGIN" HT_CLOCK_DRIFT_PPM="$ppm"
                              HT_CLOCK_DRIFT_ANCHOR_NS="$(ht__host_field "$h" 6)")
}

# ht_host_exec HOST CMD...: runs CMD inside HOST with its environment.
ht_host_exec() { local HT_CMD; ht__prefix "$1" || return 1; shift; "${HT_CMD[@]}" "$@"; }

ht__ns_pids() { ip netns pids "$1" 2>/dev/null; } # every process in network namespace $1

# ht__started_pid NAME: the pid `pids` holds for NAME (a host or relay)
# when that process still runs; 1 otherwise. Daemons are known by the pid
# started here, never by their name.
ht__started_pid() {
  local pid
  pid=$(awk -v n="$1" '$1 == n { p = $3 } END { if (p == "") exit 1; print p }' "$(ht__dir)/pids" 2>/dev/null) ||
    return 1
  kill -0 "$pid" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] || return 1
  echo "$pid"
}

# ht__wait_ready PID SECONDS CMD...: until CMD succeeds while PID runs
ht__wait_ready() {
  local pid=$1 t=$2 i
  shift 2
  for ((i = 0; i < t * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    "$@" > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# ht_host_sessiond_start HOST: its lttng-sessiond (faketime for an offset
# host), our child: the pid started is the daemon's (nsenter and env exec)
ht_host_sessiond_start() {
  local h=$1 off ft=() pid HT_CMD d
  ht__prefix "$h" || return 1
  d=$(ht__dir)
  # checked: called from '||' (set -e off), an unread offset ran unfaked
  off=$(ht__host_field "$h" 4) && [[ $off =~ ^-?[0-9]+$ ]] ||
    { ht__err "$h: no clock offset in the hosts table"; return 1; }
  if [[ $off != 0 ]]; then
    ft=(FAKETIME="$(awk -v o="$off" 'BEGIN { printf "%+.9f", o / 1e9 }')"
        FAKETIME_DONT_FAKE_MONOTONIC=1 LD_PRELOAD="$HT_H_FAKETIME")
  fi
  "${HT_CMD[@]}" "${ft[@]}" lttng-sessiond --no-kernel > "$d/$h/sessiond.log" 2>&1 &
  pid=$!
  echo "$h lttng-sessiond $pid" >> "$d/pids"
  ht__wait_ready "$pid" 20 "${HT_CMD[@]}" lttng --no-sessiond list ||
    { ht__err "$h: lttng-sessiond did not start:"; cat "$d/$h/sessiond.log" >&2; return 1; }
  echo "hosts: $h: lttng-sessiond pid $pid${ft:+ (${ft[0]})}" >&2
}

# ht_host_sessiond_pid HOST: prints the pid of its session daemon; 1 if none
ht_host_sessiond_pid() { ht_hosts_load && ht__started_pid "$1"; }

# ht_host_sessiond_kill HOST: SIGKILL to that host's session daemon (a crash)
ht_host_sessiond_kill() {
  local pid
  pid=$(ht_host_sessiond_pid "$1") || { ht__err "$1: no lttng-sessiond"; return 1; }
  kill -KILL "$pid" && echo "hosts: $1: lttng-sessiond pid $pid SIGKILLed" >&2
}

# ht_relay_start OUTDIR: lttng-relayd in the relay namespace writing there,
# our child, ready once it listens on its three ports
ht_relay_start() {
  local out pid HT_CMD d
  mkdir -p "$1" && out=$(cd "$1" && pwd) || return 1
  ht__prefix relay || return 1
  d=$(ht__dir)
  "${HT_CMD[@]}" lttng-relayd -o "$out" -C tcp://0.0.0.0:5342 \
    -D tcp://0.0.0.0:5343 -L tcp://0.0.0.0:5344 > "$d/relay/relayd.log" 2>&1 &
  pid=$!
  echo "relay lttng-relayd $pid" >> "$d/pids"
  # 5342-5344 are 14DE-14E0: all three listening (state 0A) in its namespace
  ht__wait_ready "$pid" 15 "${HT_CMD[@]}" sh -c \
    '[ "$(grep -cE "^ *[0-9]+: [0-9A-F]{8}:(14DE|14DF|14E0) [0-9A-F]{8}:0000 0A " /proc/net/tcp)" = 3 ]' ||
    { ht__err "lttng-relayd did not start:"; cat "$d/relay/relayd.log" >&2; return 1; }
  echo "hosts: relay: lttng-relayd pid $pid on $HT_H_SUBNET.254, output $out" >&2
}

ht__stop_pids() { # SECONDS PID...: TERM, then KILL whatever is left after SECONDS
  local t=$1 p i left; shift
  [[ $# -gt 0 ]] || return 0
  kill -TERM "$@" 2>/dev/null
  for ((i = 0; i < t * 10; i++)); do
    left=(); for p in "$@"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
    [[ ${#left[@]} == 0 ]] && return 0
    sleep 0.1
  done
  kill -KILL "${left[@]}" 2>/dev/null
  echo "hosts: SIGKILLed pids ${left[*]} (no exit $t s after SIGTERM)" >&2
}

# ht_relay_stop: SIGTERM to the relay (it closes its files), waits for it
ht_relay_stop() {
  local pid
  pid=$(ht__started_pid relay) || return 0
  ht__stop_pids 10 "$pid"
  wait "$pid" 2>/dev/null || true
}

# ht_hosts_down [--prefix P]: stops everything in P's namespaces, removes them
ht_hosts_down() {
  [[ ${1:-} == --prefix ]] && HT_HOSTS_PREFIX=$2
  ht__locked ht__down
}

ht__down() {
  local ns pids=() d f
  d=$(ht__dir)
  # hosts first (a sessiond tearing down its live session still talks to the relay)
  for ns in $(ht__ns_list); do
    if [[ $ns == *-relay ]]; then ht__stop_pids 10 "${pids[@]}"; pids=(); fi
    mapfile -t -O "${#pids[@]}" pids < <(ht__ns_pids "$ns")
  done
  ht__stop_pids 10 "${pids[@]}"
  for f in "$d"/*/mnt "$d"/*/uts; do
    mountpoint -q "$f" 2>/dev/null && { umount "$f" 2>/dev/null || umount -l "$f"; }
    mountpoint -q "$f" 2>/dev/null && umount -l "$f" 2>/dev/null # (busy: detached)
  done
  for ns in $(ht__ns_list); do ip netns del "$ns"; done
  rm -rf "$d"
  if mountpoint -q "$HT_HOSTS_RUN" && [[ -z $(ls -A "$HT_HOSTS_RUN") ]]; then
    umount "$HT_HOSTS_RUN" 2>/dev/null && rmdir "$HT_HOSTS_RUN" 2>/dev/null
  fi
  return 0
}

# ht_hosts_list: host address skew offset_ns ppm anchor_ns sessiond-pid
ht_hosts_list() {
  local h rest pid
  ht_hosts_load || return 1
  echo "# prefix $HT_H_PREFIX, D_ns $HT_H_D_NS; host address skew offset_ns ppm anchor_ns sessiond"
  while read -r h rest; do
    pid=$(ht__started_pid "$h") || pid=-
    echo "$h $rest $pid"
  done < "$(ht__dir)/hosts"
  echo "relay $HT_H_SUBNET.254 - - - - $(ht__started_pid relay || echo -)"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -uo pipefail
  [[ ${1:-} == --prefix ]] && { HT_HOSTS_PREFIX=$2; shift 2; }
  cmd=${1:-}; shift || true
  case $cmd in
    up) ht_hosts_up "$@" ;;
    down) ht_hosts_down "$@" ;;
    exec) ht__prefix "${1:?hosts: exec HOST CMD...}" || exit 1; shift; exec "${HT_CMD[@]}" "$@" ;;
    list) ht_hosts_list ;;
    sessiond-start) ht_host_sessiond_start "${1:?HOST}" ;;
    sessiond-kill) ht_host_sessiond_kill "${1:?HOST}" ;;
    relay-start) ht_relay_start "${1:?OUTDIR}" ;;
    relay-stop) ht_relay_stop ;;
    supported) ht_hosts_supported ;;
    *) sed -n '4,7p' "$0" | sed 's/^# \{0,1\}/usage: /' >&2; exit 2 ;;
  esac
fi
