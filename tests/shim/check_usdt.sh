#!/usr/bin/env bash
# Every hoptrace event has a USDT twin in libhoptrace, with a semaphore.
#   check_usdt.sh LIBHOPTRACE_SO
set -euo pipefail
lib=$1
notes=$(readelf -n "$lib")
if ! grep -q stapsdt <<<"$notes"; then
  echo "FAIL: no stapsdt notes in $lib" >&2
  exit 1
fi
for ev in span span_start span_end annotation kv_str kv_int kvs status msg_send msg_recv hop_send hop_recv; do
  block=$(awk -v ev="$ev" '/Provider: /{p=$2} /Name: /{n=$2} /Semaphore: /{ if (p=="hoptrace" && n==ev) print $0 }' <<<"$notes")
  if [[ -z "$block" ]]; then
    echo "FAIL: no USDT probe hoptrace:$ev" >&2
    exit 1
  fi
  sem=$(awk '{for (i=1;i<=NF;i++) if ($i=="Semaphore:") print $(i+1)}' <<<"$block" | head -1)
  if [[ -z "$sem" || "$sem" =~ ^0x0+$ ]]; then
    echo "FAIL: hoptrace:$ev has no semaphore ($block)" >&2
    exit 1
  fi
  echo "ok: hoptrace:$ev semaphore $sem"
done
