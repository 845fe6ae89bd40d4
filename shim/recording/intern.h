/* Per-process intern tables of the span records (hoptrace_schema.h): a
 * span's description (kind, name, service, endpoint) and its peer's
 * address become 32-bit ids, each written once as a desc / peer event
 * and again after every re-enable of tracing (the epoch).
 * Internal to libhoptrace.
 *
 * Lookups take no lock (the table is published with release/acquire and
 * entries never move or die); a new string takes a mutex and one
 * allocation. Each table holds at most HT_INTERN_MAX strings: past that,
 * lookups return NULL and the caller writes the names inline (span_s). */
#ifndef HT_SHIM_INTERN_H
#define HT_SHIM_INTERN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/tls_hot.h"
#include "hoptrace/span.h"

#define HT_INTERN_MAX 65535 /* ids fit 16 bits (hoptrace_schema.h) */
/* An entry in use is written again when its last writing is this old (in
 * tracer-clock units: a second of a nanosecond clock by default), so a
 * live viewer that attaches late (it reads from where the streams are)
 * gets the names within that, and a flight recorder's ring that holds
 * more than that still has them. HT_NAMES_REFRESH_MS sets it (10 to
 * 60000): a ring holding less needs a shorter one. */
#define HT_INTERN_REFRESH_DEFAULT 1000000000ll
extern HT_HOT_DATA int64_t ht_intern_refresh;

typedef struct ht_intern_entry {
  uint32_t id;   /* >= 1 */
  uint32_t hash;
  atomic_uint emitted_epoch; /* the epoch its event was last written in */
  _Atomic uint64_t emitted_at; /* and when (tracer clock) */
  uint8_t kind;
  uint32_t name_len, service_len, endpoint_len;
  const char *name, *service, *endpoint; /* desc; a peer uses name only */
} ht_intern_entry;

/* The description's entry, created if new; NULL when the table is full
 * or memory ran out. Strings are copied; a NULL one reads as "". */
const ht_intern_entry *ht_intern_desc(uint8_t kind, const char *name,
                                      const char *service,
                                      const char *endpoint);

/* info's description entry: an info of ht_span_info_intern is recognised
 * by its address (a range check, nothing read before it) and gives its
 * entry without a lookup; any other goes through ht_intern_desc. */
const ht_intern_entry *ht_intern_info_desc(const ht_span_info *info);

/* The peer's entry (same rules); peer must not be empty. */
const ht_intern_entry *ht_intern_peer(const char *peer);

/* The current epoch (>= 1 once tracing has been seen enabled). */
uint32_t ht_intern_epoch(void);

/* Starts a new epoch: every entry is written again at its next use. */
uint32_t ht_intern_new_epoch(void);

/* true once per entry and epoch, and again ht_intern_refresh after its
 * last writing (now: the tracer clock): the caller writes its event now. */
static inline bool ht_intern_claim(const ht_intern_entry *e, uint32_t epoch,
                                   uint64_t now) {
  atomic_uint *seen = (atomic_uint *)&e->emitted_epoch;
  _Atomic uint64_t *at = (_Atomic uint64_t *)&e->emitted_at;
  uint64_t last = atomic_load_explicit(at, memory_order_relaxed);
  if (atomic_load_explicit(seen, memory_order_relaxed) == epoch &&
      (int64_t)(now - last) < ht_intern_refresh)
    return false;
  if (!atomic_compare_exchange_strong_explicit(at, &last, now, memory_order_relaxed,
                                               memory_order_relaxed))
    return false; /* another thread writes it */
  atomic_store_explicit(seen, epoch, memory_order_relaxed);
  return true;
}

#endif /* HT_SHIM_INTERN_H */
