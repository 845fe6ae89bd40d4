# Sourced by the scripts: a private LTTng world for a run, and session
# daemons started and stopped by the pid started. Functions only;
# sourcing has no side effects. Nothing here finds a process by name.

# ht_private_world SCRIPT ARGS...: makes the calling script's run see only
# its own LTTng daemons and applications, whatever else runs on the
# machine (another test suite, a demo, the machine's own daemon). As
# root it re-executes SCRIPT ARGS in a mount namespace of its own (returns
# only there), with empty tmpfs on /var/run/lttng and /dev/shm (where
# root's session daemon and applications meet), /run/netns and
# /run/hoptrace-hosts (scripts/hosts.sh); otherwise (a user's
# daemon and applications meet in $LTTNG_HOME/.lttng) it sets a fresh
# LTTNG_HOME. Either way LTTNG_HOME is HT_WORLD_DIR, a directory of the
# run's own, removed by ht_private_world_end (call it from the EXIT trap).
ht_private_world() {
  if [[ $(id -u) == 0 && -z ${HT__WORLD_ENTERED:-} ]]; then
    if unshare --mount --propagation private true 2>/dev/null; then
      exec unshare --mount --propagation private env HT__WORLD_ENTERED=1 bash "$@"
    fi
    echo "hoptrace: cannot make a mount namespace (unshare --mount): this run shares" \
         "/var/run/lttng with the machine" >&2
  fi
  if [[ -n ${HT__WORLD_ENTERED:-} ]]; then
    unset HT__WORLD_ENTERED
    mkdir -p /var/run/lttng /run/netns /run/hoptrace-hosts
    # network namespace names (ip netns) are files in /run/netns, the
    # simulated hosts' state in /run/hoptrace-hosts: the world's own, so
    # that no other run's can clash with them
    mount -t tmpfs -o mode=0755 ht-world-lttng /var/run/lttng &&
      mount -t tmpfs -o mode=1777 ht-world-shm /dev/shm &&
      mount -t tmpfs -o mode=0755 ht-world-netns /run/netns &&
      mount -t tmpfs -o mode=0755 ht-world-hosts /run/hoptrace-hosts ||
      { echo "hoptrace: cannot mount a private /var/run/lttng, /dev/shm, /run/netns," \
             "/run/hoptrace-hosts" >&2; return 1; }
  fi
  # (callers test this function's status: set -e is off inside it)
  HT_WORLD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ht-world-$$-XXXXXX") || return 1
  export LTTNG_HOME=$HT_WORLD_DIR # (HT_WORLD_DIR itself not exported: the owner removes it)
}

# ht_private_world_end: stops the world's session daemon (if started) and
# removes its directory.
ht_private_world_end() { ht_sessiond_release; }

# ht_sessiond_start VAR [LOG]: starts lttng-sessiond as our child (user
# space only as root) and waits until it answers (at most 20 s); stores
# its pid in VAR. 1 (said why, with its output) when it did not start.
ht_sessiond_start() {
  local var=$1 log=${2:-${TMPDIR:-/tmp}/ht-sessiond-$$.log} args=() pid i
  [[ $(id -u) == 0 ]] && args=(--no-kernel)
  lttng-sessiond "${args[@]}" > "$log" 2>&1 &
  pid=$!
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    if lttng --no-sessiond list > /dev/null 2>&1; then
      printf -v "$var" '%s' "$pid"
      echo "hoptrace: started lttng-sessiond (pid $pid)" >&2
      return 0
    fi
    sleep 0.1
  done
  echo "hoptrace: lttng-sessiond (pid $pid) did not answer; its output:" >&2
  cat "$log" >&2
  ht_pid_stop "$pid"
  return 1
}

# ht_pid_stop PID [SECONDS]: SIGTERM to a process we started, SIGKILL
# after SECONDS (10), reaped when it is our child.
ht_pid_stop() {
  local pid=$1 t=${2:-10} i
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || return 0
  for ((i = 0; i < t * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# ht_sessiond_ensure: a session daemon of the calling script's own, in the
# world it made first (ht_private_world "$0" "$@"), where nobody else's
# answers; its pid kept in HT_STARTED_SESSIOND for ht_sessiond_release.
# A daemon that answers here already is not ours: refused, never used (a
# daemon someone else may stop under us).
ht_sessiond_ensure() {
  HT_STARTED_SESSIOND=""
  if lttng --no-sessiond list > /dev/null 2>&1; then
    echo "hoptrace: a session daemon that is not this run's answers here: call" \
         "ht_private_world first (scripts/lttng-env.sh)" >&2
    return 1
  fi
  ht_sessiond_start HT_STARTED_SESSIOND
}

# ht_sessiond_release: stops the daemon ht_sessiond_ensure started, if any,
# and removes the world's directory when this shell made it.
ht_sessiond_release() {
  if [[ -n ${HT_STARTED_SESSIOND:-} ]]; then
    ht_pid_stop "$HT_STARTED_SESSIOND"
    echo "hoptrace: stopped lttng-sessiond (pid $HT_STARTED_SESSIOND)" >&2
    HT_STARTED_SESSIOND=""
  fi
  [[ -n ${HT_WORLD_DIR:-} ]] && rm -rf "$HT_WORLD_DIR"
  HT_WORLD_DIR=""
}

# ht_port_listening PORT: true when a TCP socket listens on 127.0.0.1:PORT
# (or any address) — read from /proc, no connection made.
ht_port_listening() {
  local hex
  hex=$(printf '%04X' "$1")
  grep -Eq "^ *[0-9]+: (0100007F|00000000):$hex [0-9A-F]{8}:0000 0A " /proc/net/tcp
}

# ht_relay_own WORK: a relay of our own on three free loopback ports below
# the kernel's ephemeral range (an outgoing connection cannot hold them),
# chosen here and in HT_LIVE_CTRL, HT_LIVE_DATA and HT_LIVE_PORT (live);
# output in WORK/relay, log WORK/relayd.log, its pid in HT_LIVE_RELAYD
# (ht_live_session_end stops it). Waits until the relay listens, and tries
# other ports when it could not bind.
ht_relay_own() {
  local work=$1 attempt base i
  HT_LIVE_RELAYD=""
  for attempt in 1 2 3 4 5; do
    base=$((20000 + RANDOM % 12000))
    ht_port_listening $base || ht_port_listening $((base + 1)) ||
      ht_port_listening $((base + 2)) && continue
    HT_LIVE_CTRL=$base HT_LIVE_DATA=$((base + 1)) HT_LIVE_PORT=$((base + 2))
    lttng-relayd -o "$work/relay" -C "tcp://127.0.0.1:$HT_LIVE_CTRL" \
      -D "tcp://127.0.0.1:$HT_LIVE_DATA" -L "tcp://127.0.0.1:$HT_LIVE_PORT" \
      >> "$work/relayd.log" 2>&1 &
    HT_LIVE_RELAYD=$!
    for i in $(seq 150); do # up to 15 s on a loaded machine
      kill -0 "$HT_LIVE_RELAYD" 2>/dev/null || break
      ht_port_listening $HT_LIVE_CTRL && ht_port_listening $HT_LIVE_DATA &&
        ht_port_listening $HT_LIVE_PORT && break
      sleep 0.1
    done
    if kill -0 "$HT_LIVE_RELAYD" 2>/dev/null && ht_port_listening $HT_LIVE_CTRL &&
      ht_port_listening $HT_LIVE_DATA && ht_port_listening $HT_LIVE_PORT; then
      return 0
    fi
    echo "hoptrace: lttng-relayd on ports $base-$((base + 2)) did not listen (attempt $attempt)" >&2
    ht_live_session_end
  done
  echo "hoptrace: no lttng-relayd of our own could listen; its log:" >&2
  cat "$work/relayd.log" >&2
  return 1
}

# ht_live_session WORK SESSION NUM_SUBBUF PROCNAME: a relay of our own
# (ht_relay_own), then a started live session SESSION on it
# (ht_live_session_add).
ht_live_session() {
  ht_relay_own "$1" || return 1
  ht_live_session_add "$@"
}

# ht_live_session_add WORK SESSION NUM_SUBBUF PROCNAME: a started live
# session SESSION streaming hoptrace:* of the processes named PROCNAME to
# the relay ht_relay_own started (channel `hop`, NUM_SUBBUF sub-buffers of
# 1 MiB a CPU). Errors are printed with the relay's log.
ht_live_session_add() {
  local work=$1 session=$2 nsub=$3 procname=$4
  local out="$work/lttng-setup.log"
  if ! { lttng create "$session" --live=200000 \
      --set-url="net://127.0.0.1:$HT_LIVE_CTRL:$HT_LIVE_DATA" &&
    lttng enable-channel --session="$session" -u --subbuf-size=1M --num-subbuf="$nsub" hop &&
    lttng add-context --session="$session" -u --channel=hop -t vpid -t vtid -t procname &&
    lttng enable-event --session="$session" -u --channel=hop 'hoptrace:*' \
      --filter "\$ctx.procname == \"$procname\"" &&
    lttng start "$session"; } >> "$out" 2>&1; then
    echo "hoptrace: setting up live session $session failed:" >&2
    cat "$out" "$work/relayd.log" >&2
    return 1
  fi
}

# ht_test_open WORK PROVIDER ON_EXIT SCRIPT ARGS...: the opening of a test
# that records in a world of its own: ht_private_world SCRIPT ARGS (call it
# as ht_test_open ... "$0" "$@"), then the EXIT trap ON_EXIT (a command: the
# test's cleanup, which ends with ht_private_world_end), then WORK made
# anew and HT_LTTNG_PROVIDER=PROVIDER exported. No session daemon yet:
# ht_sessiond_ensure starts one.
ht_test_open() {
  local work=$1 provider=$2 on_exit=$3
  shift 3
  ht_private_world "$@" || return 1
  # shellcheck disable=SC2064 # ON_EXIT is the command, expanded now
  trap "$on_exit" EXIT
  ht_work_anew "$work" "$provider"
}

# ht_work_anew WORK PROVIDER: WORK emptied (made when missing), PROVIDER
# exported as HT_LTTNG_PROVIDER, the tracepoint provider the workloads load.
ht_work_anew() {
  rm -rf "$1" && mkdir -p "$1" || return 1
  export HT_LTTNG_PROVIDER=$2
}

# ht_live_open WORK PROVIDER SESSION: the opening of a live test, in its
# own world (ht_private_world) with its EXIT trap already set (it stops
# what this started when a step fails): WORK made anew, PROVIDER the
# tracepoint provider, a session daemon of our own, and the live session
# SESSION of trace_workload's events on a relay of our own
# (ht_live_session, 4 sub-buffers).
ht_live_open() {
  ht_work_anew "$1" "$2" || return 1
  ht_sessiond_ensure || return 1
  ht_live_session "$1" "$3" 4 trace_workload
}

# ht_live_attached JSON LOG [PID]: waits (at most 60 s) until a follower's
# output JSON holds a trace: lttng-live reads from the live position, so
# what the workload traced before that never comes. 1, with the
# follower's LOG, when none came or the follower PID ended first.
ht_live_attached() {
  local json=$1 log=$2 pid=${3:-} i
  for ((i = 0; i < 300; i++)); do
    grep -q '"traceId"' "$json" 2>/dev/null && return 0
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      grep -q '"traceId"' "$json" 2>/dev/null && return 0
      echo "hoptrace: the follower writing $json ended before a trace came; its log:" >&2
      cat "$log" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "hoptrace: the follower writing $json never attached (no trace in 60 s); its log:" >&2
  cat "$log" >&2
  return 1
}

# ht_live_session_end: stops the relay ht_live_session started, if any.
ht_live_session_end() {
  [[ -n ${HT_LIVE_RELAYD:-} ]] || return 0
  kill "$HT_LIVE_RELAYD" 2>/dev/null || true
  wait "$HT_LIVE_RELAYD" 2>/dev/null || true
  HT_LIVE_RELAYD=""
}

# ht_wait_gone PID [SECONDS]: true once PID has exited (an orphan is a
# zombie until its new parent reaps it: waited for, at most SECONDS, 5)
ht_wait_gone() {
  local i
  for ((i = 0; i < ${2:-5} * 10; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}
