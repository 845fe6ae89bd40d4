#!/usr/bin/env bash
# Builds bench/blkin/blkin_hop against Blkin (ceph/blkin) for
# bench/recording/run.sh, from a source given, never downloaded (CI has
# no network beyond Debian and npm):
#   bench/blkin/build.sh SRC OUT_DIR
# SRC is a Blkin git directory (a clone's .git or a bare mirror) or a
# source tree. From git: its newest commit that builds outside Ceph's
# tree. Since a46fc2f (2019, "Modified to use TracepointProvider") the
# library includes Ceph's own headers and links only inside Ceph (and
# refuses every annotation naming an endpoint: it would record nothing),
# so: the commit before the one that removed blkin-lib/tp.c. Compiled as
# RelWithDebInfo compiles hoptrace (-O2 -g), probes linked in, against
# the system's lttng-ust. Prints "COMMIT BINARY" (COMMIT "tree" for a
# source tree); exits 1 with a reason when it cannot build.
set -euo pipefail
src=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/blkin-src"
if git --git-dir="$src" rev-parse -q --verify HEAD >/dev/null 2>&1 ||
  git --git-dir="$src/.git" rev-parse -q --verify HEAD >/dev/null 2>&1; then
  gd=$src
  git --git-dir="$gd" rev-parse -q --verify HEAD >/dev/null 2>&1 || gd=$src/.git
  commit=$(git --git-dir="$gd" rev-parse HEAD)
  if ! git --git-dir="$gd" cat-file -e "$commit:blkin-lib/tp.c" 2>/dev/null; then
    removed=$(git --git-dir="$gd" rev-list -1 HEAD -- blkin-lib/tp.c)
    [[ -n $removed ]] || { echo "build.sh: no commit of $src has blkin-lib/tp.c" >&2; exit 1; }
    commit=$(git --git-dir="$gd" rev-parse "$removed^")
  fi
  git --git-dir="$gd" archive "$commit" blkin-lib | tar -x -C "$out/blkin-src"
else
  [[ -f $src/blkin-lib/tp.c ]] || {
    echo "build.sh: $src is neither a Blkin git directory nor a tree with blkin-lib/tp.c" >&2
    exit 1
  }
  cp -r "$src/blkin-lib" "$out/blkin-src/"
  commit=tree
fi
lib=$out/blkin-src/blkin-lib
# Blkin's C is older than this project's warnings: its own flags only
cc -std=gnu99 -O2 -g -I"$lib" -o "$out/blkin_hop" "$here/blkin_hop.c" "$lib/zipkin_c.c" \
  "$lib/tp.c" -llttng-ust -ldl >"$out/blkin-build.log" 2>&1 || {
  cat "$out/blkin-build.log" >&2
  echo "build.sh: Blkin did not build" >&2
  exit 1
}
echo "$commit $out/blkin_hop"
