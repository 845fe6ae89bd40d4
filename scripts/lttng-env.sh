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

# ht_live_session WORK SESSION CTRL DATA LIVE NUM_SUBBUF PROCNAME: a relay
# of our own on loopback ports CTRL/DATA/LIVE (output in WORK/relay, log
# WORK/relayd.log, its pid in HT_LIVE_RELAYD: the caller stops it) and a
# started live session SESSION streaming hoptrace:* of the processes named
# PROCNAME to it (channel `hop`, NUM_SUBBUF sub-buffers of 1 MiB a CPU).
ht_live_session() {
  local work=$1 session=$2 ctrl=$3 data=$4 live=$5 nsub=$6 procname=$7
  lttng-relayd -o "$work/relay" -C "tcp://127.0.0.1:$ctrl" -D "tcp://127.0.0.1:$data" \
    -L "tcp://127.0.0.1:$live" > "$work/relayd.log" 2>&1 &
  HT_LIVE_RELAYD=$!
  sleep 1
  lttng create "$session" --live=200000 --set-url="net://127.0.0.1:$ctrl:$data" >/dev/null &&
    lttng enable-channel --session="$session" -u --subbuf-size=1M --num-subbuf="$nsub" hop \
      >/dev/null &&
    lttng add-context --session="$session" -u --channel=hop -t vpid -t vtid -t procname \
      >/dev/null &&
    lttng enable-event --session="$session" -u --channel=hop 'hoptrace:*' \
      --filter "\$ctx.procname == \"$procname\"" >/dev/null &&
    lttng start "$session" >/dev/null
}

# ht_live_session_end: stops the relay ht_live_session started, if any.
ht_live_session_end() {
  [[ -n ${HT_LIVE_RELAYD:-} ]] || return 0
  kill "$HT_LIVE_RELAYD" 2>/dev/null || true
  wait "$HT_LIVE_RELAYD" 2>/dev/null || true
  HT_LIVE_RELAYD=""
}
