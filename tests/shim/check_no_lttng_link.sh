#!/usr/bin/env bash
# libhoptrace and a program linked with it must not depend on lttng-ust at
# link time: no DT_NEEDED entry naming lttng (the provider is dlopen'ed).
#   check_no_lttng_link.sh LIBHOPTRACE_SO PROGRAM...
set -euo pipefail
for f in "$@"; do
  needed=$(readelf -d "$f" | grep NEEDED || true)
  if grep -qi lttng <<<"$needed"; then
    echo "FAIL: $f links lttng-ust:" >&2
    echo "$needed" >&2
    exit 1
  fi
  echo "ok: $f has no lttng DT_NEEDED"
done
