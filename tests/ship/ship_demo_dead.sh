#!/usr/bin/env bash
# `scripts/demo.sh --to URL` with nobody listening at URL: the demo must
# say why its push failed (the collector accepted nothing, given up on)
# and exit non-zero, never 130 and "interrupted by SIGINT" (the demo's
# own signal, sent after waiting 60 s, was all it reported).
# usage: ship_demo_dead.sh BUILD WORKDIR SRCDIR
set -euo pipefail
trap 'echo "ship_demo_dead: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$1 work=$2 src=$3
rm -rf "$work"
mkdir -p "$work"
# a port nobody listens on: one bound and closed by this test
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rc=0
start=$(date +%s)
HT_DEMO_BUILD=$build timeout 150 bash "$src/scripts/demo.sh" --to "http://127.0.0.1:$port" \
  --duration 3 --clients 1 --rate 100 --out "$work/out" > "$work/demo.out" 2> "$work/demo.log" ||
  rc=$?
took=$(( $(date +%s) - start ))
fail() { echo "ship_demo_dead: $*" >&2; tail -20 "$work/demo.log" >&2; exit 1; }
((rc != 0 && rc != 130 && rc != 124)) || fail "exit $rc"
grep -q "interrupted by SIGINT" "$work/demo.log" && fail "an interruption nobody asked for"
grep -q "demo: push to http://127.0.0.1:$port: the collector at .* accepted nothing: given up on" \
  "$work/demo.log" || fail "the cause is not said"
grep -q "the collector is taken for dead" "$work/demo.log" || fail "the push did not give up"
((took <= 90)) || fail "took $took s"
echo "ship demo dead test passed (exit $rc, $took s)"
