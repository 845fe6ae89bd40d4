/* The process-wide counters of every layer, in one mechanism: each thread
 * adds to a block of its own (no shared cache line, no atomic
 * read-modify-write on the hot path); a read sums the live blocks and
 * what exited threads left. Internal to libhoptrace. */
#ifndef HT_COMMON_COUNTERS_H
#define HT_COMMON_COUNTERS_H

#include <stdint.h>

typedef enum ht_counter {
  /* propagate: sampling decisions (started/received are sums) */
  HT_CTR_ROOT_SAMPLED,
  HT_CTR_ROOT_DROPPED,
  HT_CTR_REMOTE_SAMPLED,
  HT_CTR_REMOTE_DROPPED,
  HT_CTR_DEBUG_FORCED,
  HT_CTR_DEBUG_HONOURED,
  HT_CTR_DEBUG_REFUSED,
  HT_CTR_CONFIG_CHANGES,
  /* shim: the traced messenger's messages */
  HT_CTR_MSGS_SENT,
  HT_CTR_MSGS_RECEIVED,
  HT_CTR_BYTES_SENT,
  HT_CTR_BYTES_RECEIVED,
  HT_CTR_MSGS_SENT_SAMPLED,
  HT_CTR_MSGS_RECEIVED_SAMPLED,
  HT_CTR_REQUESTS_FAILED,
  HT_CTR_COUNT
} ht_counter;

/* Adds n to the calling thread's counter c. Never locks after the
 * thread's first call (which allocates its block once). */
void ht_counter_add(ht_counter c, uint64_t n);
/* Two counters at once (one look-up of the thread's block). */
void ht_counter_add2(ht_counter a, uint64_t na, ht_counter b, uint64_t nb);

/* Sums of counters first..first+n-1 into out[0..n-1] (a consistent view
 * per counter, not across counters). */
void ht_counters_read(ht_counter first, int n, uint64_t *out);

#endif /* HT_COMMON_COUNTERS_H */
