# Sourced by the scripts: start an LTTng session daemon (and relay) when
# none runs, and stop only what we started. Functions only; sourcing has
# no side effects.

# ht_daemon_ensure NAME VAR: starts daemon NAME (--daemonize) unless one
# of ours runs; stores the pid we started (or "") in variable VAR.
ht_daemon_ensure() {
  local name=$1 var=$2
  printf -v "$var" '%s' ""
  if pgrep -u "$(id -u)" -x "$name" >/dev/null 2>&1; then
    return 0
  fi
  "$name" --daemonize >/dev/null 2>&1 || {
    echo "hoptrace: could not start $name" >&2
    return 1
  }
  printf -v "$var" '%s' "$(pgrep -n -u "$(id -u)" -x "$name" || true)"
  echo "hoptrace: started $name (pid ${!var:-?})" >&2
}

# ht_daemon_release NAME VAR: stops the daemon whose pid VAR holds, if any.
ht_daemon_release() {
  local name=$1 var=$2 pid=${!2:-}
  [[ -n "$pid" ]] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "hoptrace: stopped $name (pid $pid)" >&2
  printf -v "$var" '%s' ""
}

ht_sessiond_ensure() { ht_daemon_ensure lttng-sessiond HT_STARTED_SESSIOND; }
ht_sessiond_release() { ht_daemon_release lttng-sessiond HT_STARTED_SESSIOND; }
ht_relayd_ensure() { ht_daemon_ensure lttng-relayd HT_STARTED_RELAYD; }
ht_relayd_release() { ht_daemon_release lttng-relayd HT_STARTED_RELAYD; }

# In a private mount namespace (unshare --mount --propagation private, as
# root): LTTng's run directory and /dev/shm as fresh tmpfs, HOME and
# LTTNG_HOME set to HOME_DIR, so that the processes started from here and
# the session daemon ht_private_sessiond_start starts see only each other
# (not this machine's daemon, nor its applications).
#   ht_private_lttng_dirs NAME HOME_DIR   (NAME labels the mounts)
ht_private_lttng_dirs() {
  mkdir -p /var/run/lttng "$2"
  mount -t tmpfs -o mode=0755 "$1-lttng" /var/run/lttng
  mount -t tmpfs -o mode=1777 "$1-shm" /dev/shm
  export HOME="$2" LTTNG_HOME="$2"
}

# ht_private_sessiond_start VAR: starts a session daemon (user space only)
# in the private run directory and stores its pid in VAR.
ht_private_sessiond_start() {
  lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 || {
    echo "hoptrace: cannot start a private lttng-sessiond" >&2; return 1; }
  printf -v "$1" '%s' "$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null || true)"
  [[ -n ${!1} ]] || { echo "hoptrace: private lttng-sessiond: no pid file" >&2; return 1; }
}

# ht_port_listening PORT: true when a TCP socket listens on 127.0.0.1:PORT
# (or any address) — read from /proc, no connection made.
ht_port_listening() {
  local hex
  hex=$(printf '%04X' "$1")
  grep -Eq "^ *[0-9]+: (0100007F|00000000):$hex [0-9A-F]{8}:0000 0A " /proc/net/tcp
}

# ht_live_session WORK SESSION NUM_SUBBUF PROCNAME: a relay of our own on
# three free loopback ports below the kernel's ephemeral range (an outgoing
# connection cannot hold them), chosen here and in HT_LIVE_CTRL,
# HT_LIVE_DATA and HT_LIVE_PORT (live); output in WORK/relay, log
# WORK/relayd.log, its pid in HT_LIVE_RELAYD (ht_live_session_end stops
# it). Waits until the relay listens, and tries other ports when it could
# not bind. Then a started live session SESSION streaming hoptrace:* of
# the processes named PROCNAME to it (channel `hop`, NUM_SUBBUF
# sub-buffers of 1 MiB a CPU). Errors are printed with the relay's log.
ht_live_session() {
  local work=$1 session=$2 nsub=$3 procname=$4 attempt base
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
    local i
    for i in $(seq 150); do # up to 15 s on a loaded machine
      kill -0 "$HT_LIVE_RELAYD" 2>/dev/null || break
      ht_port_listening $HT_LIVE_CTRL && ht_port_listening $HT_LIVE_DATA &&
        ht_port_listening $HT_LIVE_PORT && break
      sleep 0.1
    done
    if kill -0 "$HT_LIVE_RELAYD" 2>/dev/null && ht_port_listening $HT_LIVE_CTRL &&
      ht_port_listening $HT_LIVE_DATA && ht_port_listening $HT_LIVE_PORT; then
      break
    fi
    echo "hoptrace: lttng-relayd on ports $base-$((base + 2)) did not listen (attempt $attempt)" >&2
    ht_live_session_end
  done
  if [[ -z $HT_LIVE_RELAYD ]]; then
    echo "hoptrace: no lttng-relayd of our own could listen; its log:" >&2
    cat "$work/relayd.log" >&2
    return 1
  fi
  local out="$work/lttng-setup.log"
  if ! { lttng create "$session" --live=200000 \
      --set-url="net://127.0.0.1:$HT_LIVE_CTRL:$HT_LIVE_DATA" &&
    lttng enable-channel --session="$session" -u --subbuf-size=1M --num-subbuf="$nsub" hop &&
    lttng add-context --session="$session" -u --channel=hop -t vpid -t vtid -t procname &&
    lttng enable-event --session="$session" -u --channel=hop 'hoptrace:*' \
      --filter "\$ctx.procname == \"$procname\"" &&
    lttng start "$session"; } > "$out" 2>&1; then
    echo "hoptrace: setting up live session $session failed:" >&2
    cat "$out" "$work/relayd.log" >&2
    return 1
  fi
}

# ht_live_session_end: stops the relay ht_live_session started, if any.
ht_live_session_end() {
  [[ -n ${HT_LIVE_RELAYD:-} ]] || return 0
  kill "$HT_LIVE_RELAYD" 2>/dev/null || true
  wait "$HT_LIVE_RELAYD" 2>/dev/null || true
  HT_LIVE_RELAYD=""
}
