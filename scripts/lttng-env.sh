# Sourced by the scripts: start an LTTng session daemon (and relay) when
# none runs, and stop only what we started. Functions, no side effects on
# sourcing.

# Starts lttng-sessiond if absent; remembers the pid we started.
ht_sessiond_ensure() {
  HT_STARTED_SESSIOND=""
  if pgrep -u "$(id -u)" -x lttng-sessiond >/dev/null 2>&1; then
    return 0
  fi
  lttng-sessiond --daemonize >/dev/null 2>&1 || {
    echo "hoptrace: could not start lttng-sessiond" >&2
    return 1
  }
  HT_STARTED_SESSIOND=$(pgrep -n -u "$(id -u)" -x lttng-sessiond || true)
  echo "hoptrace: started lttng-sessiond (pid ${HT_STARTED_SESSIOND:-?})" >&2
}

# Stops the session daemon only if ht_sessiond_ensure started it.
ht_sessiond_release() {
  if [[ -n "${HT_STARTED_SESSIOND:-}" ]]; then
    kill "$HT_STARTED_SESSIOND" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$HT_STARTED_SESSIOND" 2>/dev/null || break
      sleep 0.1
    done
    echo "hoptrace: stopped lttng-sessiond (pid $HT_STARTED_SESSIOND)" >&2
    HT_STARTED_SESSIOND=""
  fi
}

# Starts lttng-relayd if absent; remembers the pid we started.
ht_relayd_ensure() {
  HT_STARTED_RELAYD=""
  if pgrep -u "$(id -u)" -x lttng-relayd >/dev/null 2>&1; then
    return 0
  fi
  lttng-relayd --daemonize >/dev/null 2>&1 || {
    echo "hoptrace: could not start lttng-relayd" >&2
    return 1
  }
  HT_STARTED_RELAYD=$(pgrep -n -u "$(id -u)" -x lttng-relayd || true)
}

ht_relayd_release() {
  if [[ -n "${HT_STARTED_RELAYD:-}" ]]; then
    kill "$HT_STARTED_RELAYD" 2>/dev/null || true
    HT_STARTED_RELAYD=""
  fi
}
