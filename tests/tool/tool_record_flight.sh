#!/usr/bin/env bash
# `hoptrace record --flight` end to end, against real session daemons: a
# process in flight mode captures N traces by hand (flight_fire: N
# hoptrace:capture events at a known pace); the recorder's trigger fires
# N times, its snapshots are written and read by babeltrace2 (each holds
# capture events), capture.json's counts add up exactly (fired =
# snapshots + coalesced + dropped = N; the listed snapshots' triggers =
# snapshots + coalesced; the traces each was taken for, as the
# notifications named them, hold capture events in it) and the rate
# limit held (starts >= 1/R apart, no second holding more than R). A storm past --max-defer-ms drops
# triggers, still counted exactly. With --shared-sessiond the trigger is
# removed at the end (only ours). Snapshots to a relay land there. A
# daemon killed mid-run ends record with exit 3 and exact counts. --flight
# with --live is refused.
# usage: tool_record_flight.sh HOPTRACE FLIGHT_FIRE PROVIDER WORKDIR SRCDIR
set -euo pipefail
src=$(cd "$5" && pwd)
source "$src/../../scripts/lttng-env.sh"
hoptrace=$1 fire=$2 provider=$3 work=$4
ht_test_open "$work" "$provider" ht_private_world_end "$0" "$@"

# check DIR N RATE [IDS]: capture.json of a run whose command fired N
# captures (IDS: with --trace-ids)
check() {
  python3 - "$@" <<'PY'
import json, os, subprocess, sys
d, n, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
ids_expected = len(sys.argv) > 4
c = json.load(open(os.path.join(d, "capture.json")))
print("capture.json:", {k: v for k, v in c.items() if k != "snapshot_list"})
assert c["daemon_dropped_notifications"] == 0, "the daemon dropped notifications"
assert c["tracer_discarded_notifications"] == 0, "the tracer discarded notifications"
assert c["triggers_fired"] == n, "fired %d, the command captured %d" % (c["triggers_fired"], n)
assert c["triggers_fired"] == c["snapshots"] + c["coalesced"] + c["dropped"], "counts"
snaps = c["snapshot_list"]
assert len(snaps) == c["snapshots"] > 0
assert sum(s["triggers"] for s in snaps) == c["snapshots"] + c["coalesced"]
assert c["snapshot_failures"] == 0, c["last_failure"]
starts = [s["start_mono_ns"] for s in snaps]
for i, a in enumerate(starts):
    assert sum(1 for b in starts[i:] if b < a + 1e9) <= max(1, rate), "more than R in a second"
for s in snaps:
    path = os.path.join(d, s["name"])
    assert os.path.isdir(os.path.join(path, "ust", "uid")), path
    out = subprocess.run(["babeltrace2", path], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "hoptrace:capture" in out.stdout, "no capture event in " + path
    # the traces the notifications named are those the snapshot captured
    if not ids_expected:
        assert s["traces"] == [] and s["traces_more"] == s["triggers"], s
        continue
    assert len(s["traces"]) + s["traces_more"] == s["triggers"], s
    for t in s["traces"]:
        ids = "[0] = 0x%X, [1] = 0x%X" % (int(t["trace"][:16], 16), int(t["trace"][16:], 16))
        assert any(ids in l and "hoptrace:capture" in l and "why = %d" % t["why"] in l
                   for l in out.stdout.splitlines()), (t, path)
q = c["trigger_to_snapshot_ms"]
assert 0 < q["p50"] <= q["p99"] <= q["max"]
print("ok: %d snapshots, %d coalesced, %d rate-limited, %d dropped; p50 %.1f ms p99 %.1f ms"
      % (c["snapshots"], c["coalesced"], c["rate_limited"], c["dropped"], q["p50"], q["p99"]))
PY
  python3 "$src/../sim/snapshot_rate.py" "$1/capture.json" "$3"
}

# --- paced: 20 captures 100 ms apart, the default limit of 2 a second;
# --trace-ids: lttng-ust 2.13 never frees a capturing trigger's bytecode
# in the traced process (about 600 bytes, at its exit): under
# LeakSanitizer flight_fire alone allows leaks allocated by liblttng-ust
printf 'leak:liblttng-ust.so\n' > "$work/lsan.supp"
ust_lsan="suppressions=$work/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
timeout 120 "$hoptrace" record --flight --trace-ids -o "$work/paced" -- \
  env LSAN_OPTIONS="$ust_lsan" "$fire" 20 100000 \
  > "$work/paced.out" 2> "$work/paced.log" || { cat "$work/paced.log" >&2; exit 1; }
grep -q '^fired 20$' "$work/paced.out"
grep 'flight recorder:' "$work/paced.log"
check "$work/paced" 20 2 ids
python3 -c "import json,sys; c=json.load(open(sys.argv[1])); assert c['rate_limited'] > 0" \
  "$work/paced/capture.json"

# --- a storm: 600 captures 2 ms apart, 1 snapshot a second, at most 300
# ms of waiting: the triggers between are dropped, each counted
timeout 120 "$hoptrace" record --flight -o "$work/storm" --snapshot-rate 1 \
  --max-defer-ms 300 --coalesce-ms 5 -- "$fire" 600 2000 \
  > "$work/storm.out" 2> "$work/storm.log" || { cat "$work/storm.log" >&2; exit 1; }
grep -q '^fired 600$' "$work/storm.out"
check "$work/storm" 600 1
python3 -c "import json,sys; c=json.load(open(sys.argv[1])); assert c['dropped'] > 0 and c['coalesced'] > 0, c" \
  "$work/storm/capture.json"

# --- the world's own daemon (--shared-sessiond): our trigger is gone after
ht_sessiond_ensure
timeout 120 "$hoptrace" record --flight --shared-sessiond -o "$work/shared" -- "$fire" 3 300000 \
  > "$work/shared.out" 2> "$work/shared.log" || { cat "$work/shared.log" >&2; exit 1; }
check "$work/shared" 3 2
lttng list-triggers > "$work/triggers.txt" 2>&1
if grep -q 'hoptrace-flight' "$work/triggers.txt"; then
  cat "$work/triggers.txt" >&2
  echo "the recorder's trigger is still registered" >&2
  exit 1
fi

# --- to a relay (--relay): the relay writes HOST/SESSION-DATE/capture-N-DATE-K
ht_relay_own "$work"
trap 'ht_live_session_end; ht_private_world_end' EXIT
timeout 120 "$hoptrace" record --flight --relay "net://127.0.0.1:$HT_LIVE_CTRL:$HT_LIVE_DATA" \
  -o "$work/to-relay" -- "$fire" 4 300000 > "$work/relay.out" 2> "$work/relay.log" ||
  { cat "$work/relay.log" "$work/relayd.log" >&2; exit 1; }
python3 - "$work/to-relay/capture.json" "$work/relay" <<'PY'
import glob, json, os, subprocess, sys
c = json.load(open(sys.argv[1]))
assert c["triggers_fired"] == 4 == c["snapshots"] + c["coalesced"] + c["dropped"], c
for s in c["snapshot_list"]:
    found = glob.glob(os.path.join(sys.argv[2], "*", "*", s["name"] + "-*"))
    assert len(found) == 1, (s["name"], found)
    out = subprocess.run(["babeltrace2", found[0]], capture_output=True, text=True)
    assert out.returncode == 0 and "hoptrace:capture" in out.stdout, found[0]
print("relay: %d snapshots at the relay" % c["snapshots"])
PY
ht_live_session_end

# --- record's daemon killed mid-run: record says so and exits 3 (a
# SIGPIPE from liblttng-ctl's writes to the dead daemon must not kill
# it), capture.json still written, its counts still exact
"$hoptrace" record --flight -o "$work/killed" -- "$fire" 100 100000 \
  > "$work/killed.out" 2> "$work/killed.log" &
rec=$!
for ((t = 0; t < 300; t++)); do grep -q 'flight recorder: trigger' "$work/killed.log" && break; sleep 0.1; done
sleep 1.5
sd=$(sed -n 's/^hoptrace: started lttng-sessiond (pid \([0-9]*\))$/\1/p' "$work/killed.log")
[[ -n $sd ]] && kill -KILL "$sd"
rc=0
wait "$rec" || rc=$?
cat "$work/killed.log"
[[ $rc == 3 ]] || { echo "record --flight with its daemon killed: exit $rc, want 3" >&2; exit 1; }
python3 - "$work/killed/capture.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["triggers_fired"] > 0 and c["snapshots"] > 0, c
assert c["triggers_fired"] == c["snapshots"] + c["coalesced"] + c["dropped"], c
assert c["notification_channel_lost"], c
print("daemon killed: %d fired, %d snapshots, %d dropped, %d failed (%s)" % (
    c["triggers_fired"], c["snapshots"], c["dropped"], c["snapshot_failures"], c["last_failure"]))
PY

# --- misuse
rc=0
"$hoptrace" record --flight --live net://127.0.0.1 -- true 2> "$work/live.log" || rc=$?
[[ $rc == 2 ]]
grep -q -- '--relay' "$work/live.log"
echo "tool_record_flight: ok"
