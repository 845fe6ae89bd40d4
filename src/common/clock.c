/* The tracer's clock (clock.h). One atomic function pointer, set once. */
#include <stdatomic.h>
#include <time.h>

#include "common/clock.h"

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Atomic(ht_clock_fn) clock_read = monotonic_ns;

uint64_t ht_clock_now(void) {
  return atomic_load_explicit(&clock_read, memory_order_relaxed)();
}

void ht_clock_use(ht_clock_fn read) {
  atomic_store_explicit(&clock_read, read != NULL ? read : monotonic_ns,
                        memory_order_relaxed);
}
