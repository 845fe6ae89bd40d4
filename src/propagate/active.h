/* Decisions against the process-wide sampling configuration, counted in
 * the process statistics. Used by span.c; lock-free; any thread. */
#ifndef HT_PROPAGATE_ACTIVE_H
#define HT_PROPAGATE_ACTIVE_H

#include <stdint.h>

#include "hoptrace/sampler.h"

/* A root's flags, and the decision's probability when it records the
 * trace (ht_sampler_root_probability), else 0. Returned by value: two
 * registers, no pointer to keep across the decision's calls. */
typedef struct ht_root_decision {
  uint64_t prob;
  uint32_t flags;
} ht_root_decision;
ht_root_decision ht_active_decide_root(uint64_t hi, uint64_t lo, ht_sample_hint hint);
uint32_t ht_active_decide_remote(uint64_t hi, uint64_t lo, uint32_t flags);

/* Makes the environment's configuration (HT_SAMPLER, HT_SAMPLE_*) active
 * unless one already is, reading the environment once per process.
 * Returns the variable whose bad value was ignored (the default applied),
 * NULL when none was: the caller reports it (this layer does no I/O). */
const char *ht_active_init_from_env(void);

#endif /* HT_PROPAGATE_ACTIVE_H */
