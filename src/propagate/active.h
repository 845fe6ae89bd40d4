/* Decisions against the process-wide sampling configuration, counted in
 * the process statistics. Used by span.c; lock-free; any thread. The
 * clock-free samplers (always, never, ratio, parent) decide inline from
 * one published word; the others call active.c. */
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

/* What a clock-free sampler decides, published by active.c as one word
 * (sampler_impl.h HT_FAST_*: threshold and both modes), so a reader needs
 * one load and no sequence check. 0 (STATEFUL) before the first
 * configuration: the slow path, which makes one. */
extern HT_HOT_DATA _Atomic uint64_t ht_active_fast;

static inline uint64_t ht_active_fast_word(void) {
  return atomic_load_explicit(&ht_active_fast, memory_order_relaxed);
}

/* The decisions of the sampler itself (a hint, remote DEBUG, a rate
 * bucket, a configuration being changed). */
ht_root_decision ht_active_decide_root_slow(uint64_t hi, uint64_t lo,
                                            ht_sample_hint hint);
uint32_t ht_active_decide_remote_slow(uint64_t hi, uint64_t lo,
                                      uint32_t flags);

static inline ht_root_decision ht_active_decide_root(uint64_t hi, uint64_t lo,
                                                     ht_sample_hint hint) {
  if (hint == HT_SAMPLE_DEFAULT) {
    uint64_t w = ht_active_fast_word();
    int yes = ht_plain_decide(HT_FAST_ROOT(w), HT_FAST_THRESHOLD(w), hi, lo, 0);
    if (yes >= 0) {
      ht_counter_add(yes ? HT_CTR_ROOT_SAMPLED : HT_CTR_ROOT_DROPPED, 1);
      return (ht_root_decision){
          yes ? ht_plain_prob(HT_FAST_ROOT(w), HT_FAST_THRESHOLD(w)) : 0,
          yes ? HT_FLAG_SAMPLED : 0};
    }
  }
  return ht_active_decide_root_slow(hi, lo, hint);
}

static inline uint32_t ht_active_decide_remote(uint64_t hi, uint64_t lo,
                                               uint32_t flags) {
  if (!(flags & HT_FLAG_DEBUG)) {
    uint64_t w = ht_active_fast_word();
    int yes = ht_plain_decide(HT_FAST_REMOTE(w), HT_FAST_THRESHOLD(w), hi, lo,
                              flags);
    if (yes >= 0) {
      ht_counter_add(yes ? HT_CTR_REMOTE_SAMPLED : HT_CTR_REMOTE_DROPPED, 1);
      return (flags & ~HT_DECISION_FLAGS) | (yes ? HT_FLAG_SAMPLED : 0u);
    }
  }
  return ht_active_decide_remote_slow(hi, lo, flags);
}

/* Makes the environment's configuration (HT_SAMPLER, HT_SAMPLE_*) active
 * unless one already is, reading the environment once per process.
 * Returns the variable whose bad value was ignored (the default applied),
 * NULL when none was: the caller reports it (this layer does no I/O). */
const char *ht_active_init_from_env(void);

#endif /* HT_PROPAGATE_ACTIVE_H */
