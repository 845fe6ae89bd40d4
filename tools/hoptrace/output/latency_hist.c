/* Group 0 holds 0..127 exactly; group g >= 1 holds [2^(g+6), 2^(g+7)) in
 * 128 equal buckets of 2^(g-1). */
#include "output/latency_hist.h"

#include <stdlib.h>

static int group_of(uint64_t v) {
  if (v < LATENCY_HIST_SUB)
    return 0;
  return (63 - __builtin_clzll(v)) - 6;
}

static unsigned bucket_of(uint64_t v, int g) {
  return g == 0 ? (unsigned)v : (unsigned)((v >> (g - 1)) & (LATENCY_HIST_SUB - 1));
}

/* The middle of bucket b of group g (its only value in group 0). */
static uint64_t value_of(int g, unsigned b) {
  if (g == 0)
    return b;
  uint64_t width = (uint64_t)1 << (g - 1);
  return ((uint64_t)1 << (g + 6)) + b * width + width / 2;
}

void latency_hist_free(latency_hist *h) {
  for (int g = 0; g < LATENCY_HIST_GROUPS; g++) {
    free(h->groups[g]);
    h->groups[g] = NULL;
  }
  h->count = 0;
}

int latency_hist_add(latency_hist *h, int64_t v) {
  if (v < 0)
    return 1;
  int g = group_of((uint64_t)v);
  if (h->groups[g] == NULL &&
      (h->groups[g] = calloc(LATENCY_HIST_SUB, sizeof(uint64_t))) == NULL)
    return -1;
  h->groups[g][bucket_of((uint64_t)v, g)]++;
  if (h->count == 0 || v < h->min)
    h->min = v;
  if (h->count == 0 || v > h->max)
    h->max = v;
  h->count++;
  return 0;
}

int64_t latency_hist_quantile(const latency_hist *h, double p) {
  if (h->count == 0)
    return 0;
  if (p <= 0)
    return h->min;
  if (p >= 1)
    return h->max;
  uint64_t rank = (uint64_t)(p * (double)(h->count - 1) + 0.5);
  uint64_t seen = 0;
  for (int g = 0; g < LATENCY_HIST_GROUPS; g++) {
    if (h->groups[g] == NULL)
      continue;
    for (unsigned b = 0; b < LATENCY_HIST_SUB; b++) {
      seen += h->groups[g][b];
      if (seen > rank) {
        int64_t v = (int64_t)value_of(g, b);
        return v < h->min ? h->min : v > h->max ? h->max : v;
      }
    }
  }
  return h->max;
}
