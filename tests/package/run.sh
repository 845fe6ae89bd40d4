#!/usr/bin/env bash
# The Debian packages as a user gets them: scripts/package.sh builds them
# (lintian: no error), dpkg-deb -x unpacks all four into a fresh root, and
# a consumer program from outside the tree (consumer/, copied out) is
# built against that root with find_package (CMAKE_PREFIX_PATH), with
# pkg-config (PKG_CONFIG_PATH; with PKG_CONFIG_SYSROOT_DIR too, built
# only) and statically. Each runs traced in a real LTTng session, with
# LD_LIBRARY_PATH into the root (the packaged libhoptrace and, beside it,
# libhoptrace-tp), and the packaged `hoptrace export` must give every span
# of each. dpkg-shlibdeps on the consumer must give the library package
# at this version or later (its shlibs file).
# Run by .ci/run as its own stage (too long for ctest beside the suite).
#   tests/package/run.sh [BUILD_DIR]    packages built in BUILD_DIR (build-pkg)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
here=$src/tests/package
source "$src/scripts/lttng-env.sh"
ht_private_world "$here/run.sh" "$@" # a session daemon of its own, in a world of its own
build=${1:-$src/build-pkg}
[[ $build == /* ]] || build=$src/$build

work=$(mktemp -d "${TMPDIR:-/tmp}/ht-package-test-XXXXXX")
session="ht-package-$$-$RANDOM"
created=
cleanup() {
  [[ -n $created ]] && timeout 30 lttng destroy "$session" >/dev/null 2>&1 || true
  ht_sessiond_release
  rm -rf "$work"
}
trap cleanup EXIT

echo "== package test: building the packages ($build)"
bash "$src/scripts/package.sh" "$build"
root=$work/root
mkdir -p "$root"
debs=("$build"/packages/*.deb)
for deb in "${debs[@]}"; do
  dpkg-deb -x "$deb" "$root"
done
multiarch=$(gcc -print-multiarch)
libdir=$root/usr/lib/$multiarch
hoptrace=$root/usr/bin/hoptrace
for f in "$libdir/libhoptrace.so.2" "$libdir/libhoptrace-tp.so.0" "$libdir/libhoptrace.a" \
  "$libdir/pkgconfig/hoptrace.pc" "$libdir/cmake/hoptrace/hoptraceConfig.cmake" \
  "$root/usr/include/hoptrace.h" "$hoptrace"; do
  [[ -e $f ]] || { echo "FAIL: the packages hold no ${f#"$root"}" >&2; exit 1; }
done
"$hoptrace" --version

# The consumer, copied out of the tree: nothing of the checkout can be
# found from where it is built.
cp -r "$here/consumer" "$work/src"
echo "== package test: building the consumer with find_package and with pkg-config"
cmake -S "$work/src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$root/usr" >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log" >&2; echo "FAIL: find_package build" >&2; exit 1; }
# The .pc file finds its prefix from its own place (${pcfiledir}).
export PKG_CONFIG_PATH=$libdir/pkgconfig
[[ $(pkg-config --variable=libdir hoptrace) -ef $libdir ]] ||
  { echo "FAIL: pkg-config libdir $(pkg-config --variable=libdir hoptrace), want $libdir" >&2; exit 1; }
cc -std=c11 -Wall -Wextra -Werror -o "$work/consumer_pc" "$work/src/main.c" \
  $(pkg-config --cflags --libs hoptrace)
# A sysroot build's view (PKG_CONFIG_SYSROOT_DIR): the paths, already
# inside the root, are not prefixed again.
flags=$(PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs hoptrace)
[[ $flags != *"$root$root"* ]] || { echo "FAIL: sysroot prefixed twice: $flags" >&2; exit 1; }
cc -std=c11 -Wall -Wextra -Werror -o "$work/consumer_sysroot" "$work/src/main.c" $flags

# A program built against the packages depends on the library package
# through its shlibs file, as a Debian package of that program would.
lib_deb=$(ls "$build"/packages/libhoptrace[0-9]*_*.deb)
lib_pkg=$(dpkg-deb -f "$lib_deb" Package) lib_ver=$(dpkg-deb -f "$lib_deb" Version)
mkdir -p "$work/shlibs/debian/$lib_pkg"
dpkg-deb -e "$lib_deb" "$work/shlibs/debian/$lib_pkg/DEBIAN"
printf 'Source: consumer\n\nPackage: consumer\nArchitecture: any\n' >"$work/shlibs/debian/control"
deps=$(cd "$work/shlibs" && dpkg-shlibdeps -O -l"$libdir" "$work/cmake/consumer_cmake" 2>/dev/null)
echo "consumer: $deps"
[[ $deps == *"$lib_pkg (>= $lib_ver)"* ]] ||
  { echo "FAIL: dpkg-shlibdeps gives no $lib_pkg (>= $lib_ver) for the consumer" >&2; exit 1; }

echo "== package test: running them traced"
ht_sessiond_ensure
timeout 30 lttng create "$session" --output="$work/trace" >/dev/null
created=1
timeout 30 lttng enable-event -u -s "$session" 'hoptrace:*' >/dev/null
timeout 30 lttng start "$session" >/dev/null
programs=(cmake:"$work/cmake/consumer_cmake" pkg-config:"$work/consumer_pc"
          static:"$work/cmake/consumer_static")
for entry in "${programs[@]}"; do
  how=${entry%%:*} prog=${entry#*:}
  LD_LIBRARY_PATH=$libdir timeout 60 "$prog" "pkg-$how" >"$work/$how.out" ||
    { cat "$work/$how.out" >&2; echo "FAIL: consumer ($how) exited $?" >&2; exit 1; }
  cat "$work/$how.out"
  # Only the packaged libraries are in the process: the library (not for
  # the static build) and the provider loaded beside it.
  grep -q "^mapped $libdir/libhoptrace-tp\.so\.0" "$work/$how.out" ||
    { echo "FAIL: consumer ($how) did not load the packaged provider" >&2; exit 1; }
  if [[ $how != static ]]; then
    grep -q "^mapped $libdir/libhoptrace\.so\." "$work/$how.out" ||
      { echo "FAIL: consumer ($how) did not load the packaged library" >&2; exit 1; }
  fi
  if grep "^mapped " "$work/$how.out" | grep -v "^mapped $libdir/"; then
    echo "FAIL: consumer ($how) mapped a hoptrace library from outside the root" >&2
    exit 1
  fi
done
timeout 60 lttng stop "$session" >/dev/null
timeout 30 lttng destroy "$session" >/dev/null
created=

echo "== package test: exporting with the packaged tool"
timeout 120 "$hoptrace" export --format zipkin -o "$work/zipkin.json" "$work/trace"
python3 - "$work/zipkin.json" "$work"/{cmake,pkg-config,static}.out <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))
for out in sys.argv[2:]:
    how = out.rsplit("/", 1)[1][:-len(".out")]
    trace = next(l.split()[1] for l in open(out) if l.startswith("trace "))
    mine = [s for s in spans if trace.endswith(s["traceId"]) and
            s.get("localEndpoint", {}).get("serviceName") == "pkg-" + how]
    names = sorted(s["name"] for s in mine)
    assert names == ["pkg_request", "pkg_step", "pkg_step"], (how, trace, mine)
    root = next(s for s in mine if s["name"] == "pkg_request")
    assert all(s.get("parentId") == root["id"] for s in mine if s is not root), mine
    print("consumer (%s): trace %s, %d spans exported" % (how, trace, len(mine)))
PY
echo "package test passed"
