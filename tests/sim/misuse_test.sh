#!/usr/bin/env bash
# The simulator's programs used carelessly or attacked (items
# 10, 12, 13): real processes on loopback, each bounded by `timeout`.
#
# usage: misuse_test.sh MODE BINDIR WORKDIR
# MODE:
#   log-flood  500 garbage connections to an OSD: its warnings are
#              rate-limited (default --log-rate 10) and what was held back is
#              reported as one "N more like this suppressed" line
#   data       --data naming a regular file or an impossible path: the OSD
#              exits 2 at start-up with the reason; the data directory
#              removed under a running OSD: each failed store operation
#              is logged (rate-limited), and the client, whose operations
#              all fail, exits 1 (--max-failed-pct), 0 with 100
#   args       bad arguments: each refused (exit 2) with a message naming
#              its option; nan/inf durations never run; a port in use is
#              named as such (EADDRINUSE)
set -euo pipefail
mode=$1 bin=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
osd=$bin/sim-osd client=$bin/sim-client
fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
printf 'size 1\nmin_size 1\nosd 0 tcp://127.0.0.1:%s\n' "$port" > "$work/map"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
start_osd() { # start_osd LOG ARGS...: a 1-OSD cluster, waits until it serves
  local log=$1; shift
  rm -f "$work/ready"
  timeout -s KILL 60 "$osd" --id 0 --map "$work/map" --ready-file "$work/ready" "$@" 2> "$log" &
  osd_pid=$! pids+=($!)
  for ((i = 0; i < 100; i++)); do [[ -f $work/ready ]] && return 0; sleep 0.1; done
  cat "$log" >&2; fail "the OSD did not start"
}
stop_osd() { kill -TERM "$osd_pid"; local rc=0; wait "$osd_pid" || rc=$?; [[ $rc == 0 ]] || fail "OSD exit $rc"; }
# expect_usage NAME WANT CMD...: CMD exits 2 within 5 s, its stderr has WANT
expect_usage() {
  local name=$1 want=$2 rc=0; shift 2
  timeout -s KILL 5 "$@" > /dev/null 2> "$work/$name.err" || rc=$?
  [[ $rc == 2 ]] || { cat "$work/$name.err" >&2; fail "$name: exit $rc, want 2"; }
  grep -qF -- "$want" "$work/$name.err" || { cat "$work/$name.err" >&2; fail "$name: no '$want'"; }
  echo "$name: refused: $(head -n 1 "$work/$name.err")"
}

case $mode in
log-flood)
  n=500
  start_osd "$work/osd.log" # default --log-rate: 10 a second per kind
  python3 - "$port" "$n" <<'PY'
import socket, sys
for _ in range(int(sys.argv[2])):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"\xff" * 64)  # a frame length far beyond the maximum
    s.close()
PY
  # every connection closed and counted (the second is over: the count is out)
  for ((i = 0; i < 50; i++)); do
    printed=$(grep -c "closing connection" "$work/osd.log" | head -n 1 || true)
    held=$(sed -n 's/.* \([0-9]*\) more like this suppressed in .*closing connection.*/\1/p' \
      "$work/osd.log" | awk '{s += $1} END {print s + 0}')
    (( printed - $(grep -c "suppressed" "$work/osd.log" || true) + held >= n )) && break
    sleep 0.1
  done
  stop_osd
  lines=$(grep -c "closing connection" "$work/osd.log" || true)
  reports=$(grep -c "more like this suppressed" "$work/osd.log" || true)
  held=$(sed -n 's/.* \([0-9]*\) more like this suppressed in .*/\1/p' "$work/osd.log" |
    awk '{s += $1} END {print s + 0}')
  echo "$n garbage connections: $((lines - reports)) warnings printed, $held suppressed" \
       "($reports report lines), $(wc -l < "$work/osd.log") log lines in all"
  grep -m1 "more like this suppressed" "$work/osd.log" || true
  (( lines - reports <= 40 )) || fail "warnings not rate-limited"
  (( reports >= 1 && lines - reports + held == n )) || fail "suppressed warnings not counted"
  ;;
data)
  echo "not a directory" > "$work/file"
  expect_usage data-file "--data $work/file: not a directory" \
    "$osd" --id 0 --map "$work/map" --data "$work/file"
  expect_usage data-missing "--data $work/no/such/dir: cannot create it" \
    "$osd" --id 0 --map "$work/map" --data "$work/no/such/dir"
  # the directory removed under a running OSD: every store operation fails
  start_osd "$work/osd.log" --data "$work/data"
  rm -rf "$work/data"
  rc=0
  timeout -s KILL 30 "$client" --id 0 --map "$work/map" --duration 1 --inflight 4 \
    > "$work/client.out" 2> "$work/client.err" || rc=$?
  grep "FAILED:" "$work/client.err" || true
  [[ $rc == 1 ]] || { cat "$work/client.err" >&2; fail "client with failed operations: exit $rc, want 1"; }
  grep -q "operations failed (.* more than --max-failed-pct 1)" "$work/client.err" ||
    fail "client: no failure-threshold message"
  rc=0
  timeout -s KILL 30 "$client" --id 1 --map "$work/map" --duration 0.5 --inflight 4 \
    --max-failed-pct 100 > /dev/null 2> "$work/client100.err" || rc=$?
  [[ $rc == 0 ]] || { cat "$work/client100.err" >&2; fail "client --max-failed-pct 100: exit $rc"; }
  stop_osd
  grep -m1 "store: an object .* failed" "$work/osd.log" || fail "OSD: store failures not logged"
  (( $(grep -c "store: an object" "$work/osd.log") <= 80 )) || fail "store failures not rate-limited"
  ;;
args)
  m=(--map "$work/map")
  expect_usage osd-id-abc "--id must be a whole number" "$osd" --id abc "${m[@]}"
  expect_usage osd-id-range "--id must be a whole number" "$osd" --id 64 "${m[@]}"
  expect_usage osd-id-hex "--id must be a whole number" "$osd" --id 0x1 "${m[@]}"
  expect_usage osd-workers "--workers" "$osd" --id 0 "${m[@]}" --workers 0
  expect_usage osd-crash-nan "--crash-after" "$osd" --id 0 "${m[@]}" --crash-after nan
  expect_usage osd-log-rate "--log-rate" "$osd" --id 0 "${m[@]}" --log-rate -1
  for d in nan inf -inf -1 0 1e99 x; do
    expect_usage "client-duration-$d" "--duration" "$client" --id 0 "${m[@]}" --duration "$d"
  done
  expect_usage client-inflight "--inflight" "$client" --id 0 "${m[@]}" --inflight 0
  expect_usage client-objects "--objects (4) must be >= 2 x --inflight (8)" \
    "$client" --id 0 "${m[@]}" --objects 4
  expect_usage client-read-pct "--read-pct" "$client" --id 0 "${m[@]}" --read-pct 101
  expect_usage client-pct-sum "--read-pct + --stat-pct + --delete-pct" \
    "$client" --id 0 "${m[@]}" --read-pct 60 --stat-pct 30 --delete-pct 20
  expect_usage client-sizes "--size-min (9) must be <= --size-max (8)" \
    "$client" --id 0 "${m[@]}" --size-min 9 --size-max 8
  expect_usage client-size-max "--size-max" "$client" --id 0 "${m[@]}" --size-max 99999999
  expect_usage client-timeout "--timeout-ms" "$client" --id 0 "${m[@]}" --timeout-ms abc
  expect_usage client-rate "--rate" "$client" --id 0 "${m[@]}" --rate nan
  expect_usage client-ratio-at "--ratio-at" "$client" --id 0 "${m[@]}" --ratio-at 1:nan
  expect_usage client-seed "--seed" "$client" --id 0 "${m[@]}" --seed -5
  expect_usage client-id "--id" "$client" --id x "${m[@]}"
  expect_usage client-max-failed "--max-failed-pct" "$client" --id 0 "${m[@]}" --max-failed-pct 101
  if grep -l "objects must be >= 2 x inflight" "$work"/client-*.err | grep -v client-objects; then
    fail "the objects/inflight message for another option"
  fi
  # a port in use: said so, not "input/output error"
  start_osd "$work/osd.log"
  rc=0
  timeout -s KILL 20 "$osd" --id 0 --map "$work/map" 2> "$work/inuse.err" || rc=$?
  grep "listen" "$work/inuse.err" || true
  [[ $rc != 0 ]] || fail "a second OSD on the same port ran"
  grep -q "address already in use (EADDRINUSE)" "$work/inuse.err" || fail "port in use not named"
  stop_osd
  ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
echo "sim misuse $mode: passed"
