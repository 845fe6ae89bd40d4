#!/usr/bin/env bash
# Installs this build into a scratch prefix, then builds a consumer with
# find_package(hoptrace) (shared and static) and with pkg-config, and runs
# them. Usage: check-install.sh BUILD_DIR SOURCE_DIR SANITIZE_FLAGS
set -euo pipefail
build=$1 src=$2 sanitize=${3:-}
work=$(mktemp -d "$build/install-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

flags=""
[[ -n "$sanitize" ]] && flags="-fsanitize=$sanitize"
cmake -S "$src/tests/install/consumer" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$flags" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer_shared"
"$work/consumer/consumer_static"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig:$prefix/lib/$(gcc -print-multiarch)/pkgconfig
cc $flags -o "$work/consumer_pc" "$src/tests/install/consumer/main.c" \
  $(pkg-config --cflags --libs hoptrace)
LD_LIBRARY_PATH=$(pkg-config --variable=libdir hoptrace) "$work/consumer_pc"
# Only ht_* symbols leave the shared object.
so=$(ls "$(pkg-config --variable=libdir hoptrace)"/libhoptrace.so.*.*.* | head -n1)
leaked=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDB]/ && $3 !~ /^ht_/ {print $3}')
if [[ -n "$leaked" ]]; then
  echo "non-ht_ symbols exported: $leaked" >&2
  exit 1
fi
echo "install check passed"
