/* Decisions against the process-wide sampling configuration, counted in
 * the process statistics. Used by span.c; lock-free; any thread. The
 * clock-free samplers (always, never, ratio, parent) decide inline from
 * two published words; the others call active.c. */
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

/* What a clock-free sampler decides, published by active.c under a
 * sequence counter (odd while being written). */
extern HT_HOT_DATA _Atomic uint64_t ht_active_fast_seq;
extern HT_HOT_DATA _Atomic uint32_t ht_active_fast_modes; /* root | remote << 8 */
extern HT_HOT_DATA _Atomic uint64_t ht_active_fast_threshold; /* RATIO */

/* The published words, or false while a writer is changing them. */
static inline bool ht_active_read_fast(unsigned *modes, uint64_t *threshold) {
  uint64_t seq = atomic_load_explicit(&ht_active_fast_seq, memory_order_acquire);
  *modes = atomic_load_explicit(&ht_active_fast_modes, memory_order_relaxed);
  *threshold =
      atomic_load_explicit(&ht_active_fast_threshold, memory_order_relaxed);
  atomic_thread_fence(memory_order_acquire);
  return (seq & 1) == 0 &&
         atomic_load_explicit(&ht_active_fast_seq, memory_order_relaxed) == seq;
}

/* The decisions of the sampler itself (a hint, remote DEBUG, a rate
 * bucket, a configuration being changed). */
ht_root_decision ht_active_decide_root_slow(uint64_t hi, uint64_t lo,
                                            ht_sample_hint hint);
uint32_t ht_active_decide_remote_slow(uint64_t hi, uint64_t lo,
                                      uint32_t flags);

static inline ht_root_decision ht_active_decide_root(uint64_t hi, uint64_t lo,
                                                     ht_sample_hint hint) {
  unsigned modes;
  uint64_t threshold;
  if (hint == HT_SAMPLE_DEFAULT && ht_active_read_fast(&modes, &threshold)) {
    int yes = ht_plain_decide(modes & 0xff, threshold, hi, lo, 0);
    if (yes >= 0) {
      ht_counter_add(yes ? HT_CTR_ROOT_SAMPLED : HT_CTR_ROOT_DROPPED, 1);
      return (ht_root_decision){
          yes ? ht_plain_prob(modes & 0xff, threshold) : 0,
          yes ? HT_FLAG_SAMPLED : 0};
    }
  }
  return ht_active_decide_root_slow(hi, lo, hint);
}

static inline uint32_t ht_active_decide_remote(uint64_t hi, uint64_t lo,
                                               uint32_t flags) {
  unsigned modes;
  uint64_t threshold;
  if (!(flags & HT_FLAG_DEBUG) && ht_active_read_fast(&modes, &threshold)) {
    int yes = ht_plain_decide(modes >> 8, threshold, hi, lo, flags);
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
