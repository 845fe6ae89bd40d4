#!/usr/bin/env bash
# Installs the Debian 12 packages hoptrace needs to build, test, trace and
# fuzz. Idempotent: does nothing (not even apt-get update) when every
# package is already present. Uses sudo only when not root.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libuv1-dev libprotobuf-c-dev protobuf-c-compiler libcmocka-dev
  liblttng-ust-dev lttng-tools babeltrace2 libbabeltrace2-dev
  liblttng-ctl-dev  # hoptrace record --flight: triggers, notifications, snapshots
  systemtap-sdt-dev python3 valgrind chromium
  faketime iproute2  # simulated hosts (scripts/hosts.sh)
  libnng-dev libzmq3-dev  # bench/transport comparison only
  libcurl4-openssl-dev zlib1g-dev  # hoptrace export --to: HTTP(S), gzip
  libmicrohttpd-dev  # examples/client-osd-sim: sim-gateway (HTTP)
  nodejs  # tests/ship/receiver, tests/gateway, tests/tool/view (npm ci)
  lintian file  # scripts/package.sh: lintian; cpack's dpkg-shlibdeps step runs file
)
# npm (the receivers' OpenTelemetry packages, playwright-core for the view
# test): Debian's package, unless the nodejs installed (e.g. NodeSource's,
# which conflicts with it) already brings its own
command -v npm >/dev/null || packages+=(npm)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
