#!/usr/bin/env bash
# README's main job. Installs what is missing, builds hoptrace, and runs
# the current demonstration: for now the wire round trip of one traced
# write (client -> primary -> replicas) through envelopes and frames.
# The traced simulator cluster replaces it when it lands.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -DHT_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)" --target wire-roundtrip
echo
./build/examples/wire-roundtrip/wire-roundtrip
