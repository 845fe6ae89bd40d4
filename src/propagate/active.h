/* Decisions against the process-wide sampling configuration, counted in
 * the process statistics. Used by span.c; lock-free; any thread. The
 * clock-free samplers (always, never, ratio, parent) decide inline from
 * one published word (inline: span_path.h); the others call active.c,
 * whose functions are declared here. */
#ifndef HT_PROPAGATE_ACTIVE_H
#define HT_PROPAGATE_ACTIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/counters.h"
#include "common/tls_hot.h"
#include "hoptrace/sampler.h"
#include "propagate/sampler_impl.h"

/* A root's flags, and the decision's probability when it records the
 * trace (ht_sampler_root_probability), else 0. Returned by value: two
 * registers, no pointer to keep across the decision's calls. */
typedef struct ht_root_decision {
  uint64_t prob;
  uint32_t flags;
} ht_root_decision;

/* The decisions of the sampler itself (a hint, remote DEBUG, a rate
 * bucket, a configuration being changed). */
ht_root_decision ht_active_decide_root_slow(uint64_t hi, uint64_t lo,
                                            ht_sample_hint hint);
uint32_t ht_active_decide_remote_slow(uint64_t hi, uint64_t lo,
                                      uint32_t flags);

/* Makes the environment's configuration (HT_SAMPLER, HT_SAMPLE_*) active
 * unless one already is, reading the environment once per process.
 * Returns the variable whose bad value was ignored (the default applied),
 * NULL when none was: the caller reports it (this layer does no I/O). */
const char *ht_active_init_from_env(void);

#endif /* HT_PROPAGATE_ACTIVE_H */
