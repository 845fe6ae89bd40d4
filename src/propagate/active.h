/* Decisions against the process-wide sampling configuration, counted in
 * the process statistics. Used by span.c; lock-free; any thread. */
#ifndef HT_PROPAGATE_ACTIVE_H
#define HT_PROPAGATE_ACTIVE_H

#include <stdint.h>

#include "hoptrace/sampler.h"

uint32_t ht_active_decide_root(uint64_t hi, uint64_t lo, ht_sample_hint hint);
uint32_t ht_active_decide_remote(uint64_t hi, uint64_t lo, uint32_t flags);

#endif /* HT_PROPAGATE_ACTIVE_H */
