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
