/* Latency samples of one run and their percentiles. One thread.
 * Never: lose a sample silently (an allocation failure is counted). */
#ifndef SIM_LATENCY_H
#define SIM_LATENCY_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_latency {
  uint32_t *us;
  size_t n, cap;
  size_t lost; /* samples not kept (out of memory) */
} sim_latency;

void sim_latency_add(sim_latency *l, uint64_t ns);
/* Sorts the samples; then sim_latency_pct may be called. */
void sim_latency_sort(sim_latency *l);
/* p in 0..100; 0 when there are no samples. */
uint32_t sim_latency_pct(const sim_latency *l, double p);
void sim_latency_free(sim_latency *l);

#endif
