/* Latency distribution in bounded memory, for `hoptrace report`: exact
 * count, minimum and maximum; quantiles within 0.4 % of the exact
 * sample's value (log-linear buckets: every value below 128 ns on its
 * own, then 128 buckets per power of two). At most 57 KiB however many
 * samples arrive (1 KiB per power of two actually seen), where keeping
 * every sample cost 8 bytes each and grew with the input. */
#ifndef HT_TOOL_LATENCY_HIST_H
#define HT_TOOL_LATENCY_HIST_H

#include <stdint.h>

#define LATENCY_HIST_SUB 128
#define LATENCY_HIST_GROUPS 57 /* values 0..127, then 2^7 .. 2^63 */

typedef struct latency_hist {
  uint64_t count;
  int64_t min, max;
  uint64_t *groups[LATENCY_HIST_GROUPS]; /* LATENCY_HIST_SUB counters, lazily */
} latency_hist;

/* A zeroed latency_hist is empty and ready. */
void latency_hist_free(latency_hist *h);
/* Adds v (ns, >= 0; negative values are ignored: 1). 0, or -1 when out
 * of memory (the sample is then not counted). */
int latency_hist_add(latency_hist *h, int64_t v);
/* The value at rank round(p * (count - 1)) of the sorted samples, within
 * 0.4 % (exact below 128 ns and at p = 0 and 1); 0 when empty. */
int64_t latency_hist_quantile(const latency_hist *h, double p);

#endif
