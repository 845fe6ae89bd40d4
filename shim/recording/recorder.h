/* The shim's event recorder (LTTng-UST + USDT) and its helpers.
 * Internal to libhoptrace. */
#ifndef HT_SHIM_RECORDER_H
#define HT_SHIM_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "hoptrace/span.h"
#include "propagate/events.h"

#include "hoptrace_tp_types.h"

extern const ht_event_ops ht_recorder_ops;

/* Joins n <= HT_KVS_MAX key-values into the event layout: keys and strs
 * (each HT_KVS_TEXT_MAX + 1 bytes, NUL-terminated, parts separated by
 * 0x1f, 0x1f inside a part replaced by '?', truncated at
 * HT_KVS_TEXT_MAX), types and ints (HT_KVS_MAX entries). *out points
 * into the caller's buffers. */
void ht_recorder_join_kvs(const ht_kv *kvs, size_t n, char *keys, char *strs,
                          uint8_t *types, int64_t *ints, ht_tp_kvs *out);

#endif /* HT_SHIM_RECORDER_H */
