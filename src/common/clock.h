/* The tracer's clock, which span sides are timed with: the one LTTng-UST
 * timestamps events with (CLOCK_MONOTONIC in nanoseconds, or a clock
 * plugin's), so a span's start read here and its end stamped by LTTng are
 * on one clock. Until the provider is loaded: CLOCK_MONOTONIC.
 * Internal to libhoptrace. */
#ifndef HT_COMMON_CLOCK_H
#define HT_COMMON_CLOCK_H

#include <stdint.h>

typedef uint64_t (*ht_clock_fn)(void);

/* Now, in the tracer's clock's units (cycles of its frequency). */
uint64_t ht_clock_now(void);

/* The tracer's clock from now on (the loader, once the provider and its
 * clock plugin are loaded, before any span is timed). */
void ht_clock_use(ht_clock_fn read);

#endif /* HT_COMMON_CLOCK_H */
