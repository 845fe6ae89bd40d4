/* Latency samples (see latency.h). Never: allocate per sample. */
#include "latency.h"

#include <stdlib.h>

void sim_latency_add(sim_latency *l, uint64_t ns) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 4096;
    uint32_t *p = realloc(l->us, cap * sizeof(*p));
    if (p == NULL) {
      l->lost++;
      return;
    }
    l->us = p;
    l->cap = cap;
  }
  uint64_t us = ns / 1000;
  l->us[l->n++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

void sim_latency_sort(sim_latency *l) {
  if (l->n > 1)
    qsort(l->us, l->n, sizeof(*l->us), cmp_u32);
}

uint32_t sim_latency_pct(const sim_latency *l, double p) {
  if (l->n == 0)
    return 0;
  size_t i = (size_t)(p / 100.0 * (double)(l->n - 1) + 0.5);
  return l->us[i < l->n ? i : l->n - 1];
}

void sim_latency_free(sim_latency *l) {
  free(l->us);
  l->us = NULL;
  l->n = l->cap = 0;
}
