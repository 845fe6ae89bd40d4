#!/usr/bin/env bash
# `hoptrace diff` on the simulated cluster, recorded for real: a normal
# run against one whose osd.3 adds 10 ms to every disk write names osd.3's
# replica_write service time first, with about 10 ms added; the normal
# run's two halves differ in nothing significant; the slowest 1 % of a
# run whose osd.3 adds 300 ms to 4 % of its writes against the rest names
# the same culprit, with about 300 ms added. The same seed gives the same
# output. Three runs of 4 to 6 s.
# usage: tool_diff.sh HOPTRACE SIMBIN PROVIDER WORKDIR SRCDIR
set -euo pipefail
hoptrace=$1 bin=$2 provider=$3 work=$4 src=$5
rm -rf "$work" && mkdir -p "$work"
export HT_LTTNG_PROVIDER=$provider
tool=("$hoptrace")
[[ -n ${HT_TEST_WRAPPER:-} ]] && { read -ra tool <<< "$HT_TEST_WRAPPER"; tool+=("$hoptrace"); }
cluster=$src/examples/client-osd-sim/cluster.sh
# the programs under names of their own: the session keeps only this
# test's processes (a shared machine runs other sim-* programs)
tag="td$$"
mkdir -p "$work/bin"
ln -s "$bin/sim-osd" "$work/bin/$tag-osd"
ln -s "$bin/sim-client" "$work/bin/$tag-cli"

record() { # record NAME CLUSTER-ARGS...
  local name=$1
  shift
  timeout -s KILL 150 "$hoptrace" record -o "$work/$name" --subbuf-size 4M \
    --filter "\$ctx.procname == \"$tag-*\"" -- \
    bash "$cluster" --bin "$bin" --osd-exe "$work/bin/$tag-osd" \
    --client-exe "$work/bin/$tag-cli" --work "$work/c-$name" --messenger traced --osds 4 \
    --clients 2 --duration 4 --sample-ratio 1 "$@" 2> "$work/record-$name.log"
}
record normal --rate 100
record slow --rate 100 --slow-osd 3 --slow-ms 10
# writes only, and many: the slowest 1 % must hold 10 traces or more whose
# path crosses osd.3 as a replica (a loaded machine ran 1,244 writes in
# 4 s of 2 clients, too few; 3 clients with 16 in flight for 6 s), with
# 16 disk workers an OSD: 4 of them queued writes behind each 300 ms
# sleep, which then added 349 ms at p50, not 300
record tail --rate 300 --clients 3 --inflight 16 --duration 6 --slow-osd 3 --slow-ms 300 \
  --slow-pct 4 --osd-arg --workers --osd-arg 16 --client-arg --read-pct --client-arg 0 --client-arg --stat-pct --client-arg 0 \
  --client-arg --delete-pct --client-arg 0

diff=(timeout 120 "${tool[@]}" diff)
"${diff[@]}" -o "$work/slow.txt" "$work/normal" "$work/slow"
"${diff[@]}" -q --format json -o "$work/slow.json" "$work/normal" "$work/slow"
"${diff[@]}" -q --format json -o "$work/halves.json" --split halves "$work/normal"
"${diff[@]}" -q --format json -o "$work/tail.json" --split p99 "$work/tail"
"${diff[@]}" -q -o "$work/tail.txt" --split p99 "$work/tail"
"${diff[@]}" -q -o "$work/tail-again.txt" --split p99 "$work/tail"
cmp "$work/tail.txt" "$work/tail-again.txt"
head -n 1 "$work/slow.txt" "$work/tail.txt"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def culprit(name, delay_ms):
    d = json.load(open("%s/%s.json" % (work, name)))
    c = d["culprit"]
    assert c is not None, d["headline"]
    print("%s: %s" % (name, d["headline"]))
    assert (c["service"], c["server"], c["operation"], c["phase"]) == \
        ("osd.3", None, "replica_write", "service self time"), c
    added = c["p50"]["change_ns"] / 1e6
    assert abs(added - delay_ms) <= 0.1 * delay_ms, "added %.2f ms for %d ms" % (added, delay_ms)
    assert d["headline"].startswith("osd.3 replica_write: service self time +"), d["headline"]
culprit("slow", 10)
culprit("tail", 300)
assert open(work + "/slow.txt").readline().startswith("osd.3 replica_write: service self time")
d = json.load(open(work + "/halves.json"))
print("halves: %s" % d["headline"])
assert d["culprit"] is None and d["tests"] > 0, d["headline"]
for o in d["operations"]:
    for r in o["rows"]:
        assert not r["significant"], r
PY
# misuse: a clear error and its status, never a half-written answer
status() { local rc=0; "$@" > /dev/null 2>&1 || rc=$?; echo $rc; }
[[ $(status "${diff[@]}" "$work/normal") == 2 ]]            # one recording, no --split
[[ $(status "${diff[@]}" --split p100 "$work/normal") == 2 ]]
[[ $(status "${diff[@]}" --resamples 5 "$work/normal" "$work/slow") == 2 ]]
[[ $(status "${diff[@]}" "$work/none" "$work/slow") == 1 ]]
echo "tool_diff: passed"
