#!/usr/bin/env bash
# Builds hoptrace's Debian packages in build-pkg/ (a build of its own:
# /usr prefix, Debian's hardening flags from dpkg-buildflags, no tests,
# benchmarks or examples) with cpack -G DEB, then checks each with
# lintian: an error fails the run, warnings are listed.
#   scripts/package.sh [BUILD_DIR]     packages in BUILD_DIR/packages/
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-pkg}

bash scripts/install-deps.sh
# Debian's build flags: stack protector, fortify, relro (lintian's
# hardening checks); the prefix map keeps this checkout's path out of the
# binaries.
cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_C_FLAGS="$cflags" -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" \
  -DCMAKE_EXE_LINKER_FLAGS="$ldflags" \
  -DHT_BUILD_TESTS=OFF -DHT_BUILD_BENCH=OFF -DHT_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j"$(nproc)"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB >cpack.log 2>&1) || { cat "$build/cpack.log" >&2; exit 1; }

shopt -s nullglob
debs=("$build"/packages/*.deb)
if ((${#debs[@]} != 4)); then
  echo "package: expected 4 packages, cpack made ${#debs[@]}:" "${debs[@]}" >&2
  exit 1
fi
rc=0
lintian --no-tag-display-limit "${debs[@]}" >"$build/lintian.log" 2>&1 || rc=$?
errors=$(grep -c '^E: ' "$build/lintian.log" || true)
warnings=$(grep -c '^W: ' "$build/lintian.log" || true)
if [[ $warnings != 0 ]]; then
  echo "package: lintian warnings ($warnings):"
  grep '^W: ' "$build/lintian.log"
fi
if [[ $errors != 0 ]]; then
  echo "package: lintian errors ($errors):" >&2
  grep '^E: ' "$build/lintian.log" >&2
  exit 1
fi
# lintian exits 1 on errors only (warnings: 0 with --fail-on error, the default)
[[ $rc == 0 ]] || { cat "$build/lintian.log" >&2; exit 1; }
for deb in "${debs[@]}"; do
  printf '%-44s %8s bytes\n' "$(basename "$deb")" "$(stat -c %s "$deb")"
done
echo "package: ${#debs[@]} packages in $build/packages, lintian: 0 errors, $warnings warnings"
