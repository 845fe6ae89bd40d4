/* Adaptive capture thresholds (capture.h, slow-client=p99.9): per
 * operation, the last minute's latencies and their 99.9th percentile.
 * Internal to libhoptrace. */
#ifndef HT_SHIM_TRACED_ADAPTIVE_H
#define HT_SHIM_TRACED_ADAPTIVE_H

#include <stdbool.h>
#include <stdint.h>

/* Operations followed (by their names' reference: desc); past that, an
 * operation never fires an adaptive capture (counted in misses). */
#define HT_ADAPTIVE_OPS 64
/* An operation fires only once this many of its spans ended in the last
 * minute: a percentile of fewer says nothing. */
#define HT_ADAPTIVE_MIN_SPANS 1000

/* A span of operation `key` (non-NULL: its names' reference) took
 * took_ns, ending at now_ns (tracer clock): counted; true when it is
 * slower than the operation's last-minute p99.9, which goes to
 * *threshold. */
bool ht_shim_adaptive_slow(const void *key, uint64_t took_ns, uint64_t now_ns,
                           uint64_t *threshold);

/* Forgets every operation's latencies (a policy change). */
void ht_shim_adaptive_reset(void);

#endif /* HT_SHIM_TRACED_ADAPTIVE_H */
