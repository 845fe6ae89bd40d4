/* Internal sampler layout and decision outcomes, shared by sampler.c and
 * active.c (the process-wide configuration). Never exposed publicly. */
#ifndef HT_PROPAGATE_SAMPLER_IMPL_H
#define HT_PROPAGATE_SAMPLER_IMPL_H

#include <stdatomic.h>
#include <stdint.h>

#include "hoptrace/context.h"
#include "hoptrace/sampler.h"

/* Generic cell-rate algorithm: a token bucket in one atomic word (the
 * theoretical arrival time). Lock-free: one CAS per admitted event. */
typedef struct ht_bucket {
  _Atomic uint64_t tat_ns; /* next time the bucket is "empty"; 0 = full */
  uint64_t interval_ns;    /* 1e9 / rate; 0 = rate 0 (admit nothing) */
  uint64_t tolerance_ns;   /* (burst - 1) * interval */
  int unlimited;           /* rate so high it never limits */
} ht_bucket;

void ht_bucket_init(ht_bucket *b, double rate, double burst);
/* 1 when a token was taken at time now_ns. */
int ht_bucket_take(ht_bucket *b, uint64_t now_ns);

/* The decisions that need no clock and no state, one mode per side
 * (root, remote): the one implementation of ALWAYS, NEVER, RATIO and
 * PARENT, used by ht_sampler_*_ex and by the process-wide configuration's
 * lock-free fast path (active.c). STATEFUL: a RATE bucket decides. */
enum {
  HT_PLAIN_STATEFUL = 0,
  HT_PLAIN_NEVER,
  HT_PLAIN_ALWAYS,
  HT_PLAIN_RATIO,
  HT_PLAIN_PARENT
};

/* The fast path's one published word (active.h) holds a RATIO threshold
 * and both modes: the threshold's low 8 bits are always 0 (a ratio's
 * threshold is rounded down to a multiple of 256, at least 256 when the
 * ratio is not 0: a probability off by under 2^-56), the root mode is in
 * bits 0-3, the remote mode in bits 4-7. */
#define HT_FAST_MODE_BITS 0xffu
#define HT_FAST_WORD(threshold, root, remote)                                  \
  ((threshold) | (uint64_t)(root) | (uint64_t)(remote) << 4)
#define HT_FAST_ROOT(w) ((unsigned)(w) & 0xfu)
#define HT_FAST_REMOTE(w) ((unsigned)((w) >> 4) & 0xfu)
#define HT_FAST_THRESHOLD(w) ((w) & ~(uint64_t)HT_FAST_MODE_BITS)
_Static_assert(HT_PLAIN_PARENT < 16, "a plain mode fits in 4 bits");

/* The flags a receiver decides anew; the others (HT_FLAG_RANDOM, reserved
 * bits) pass from the remote context to its child unchanged. */
#define HT_DECISION_FLAGS (HT_FLAG_SAMPLED | HT_FLAG_DEBUG)

/* Deterministic 64-bit hash of a trace id (same in every process). */
uint64_t ht_trace_id_hash(uint64_t hi, uint64_t lo);

struct ht_sampler {
  ht_sampling_config cfg;
  unsigned root_mode;       /* HT_PLAIN_* for local roots (and refused DEBUG) */
  unsigned remote_mode;     /* HT_PLAIN_* for remote contexts */
  uint64_t ratio_threshold; /* RATIO: sample when hash < threshold */
  ht_bucket rate_bucket;    /* RATE (also root RATE) */
  ht_bucket debug_bucket;   /* remote DEBUG */
};

/* Why a decision came out as it did (for the process counters). */
typedef enum ht_outcome {
  HT_OUT_DROPPED = 0,
  HT_OUT_SAMPLED,
  HT_OUT_FORCED,        /* local DEBUG hint or YES/NO hint */
  HT_OUT_DEBUG_HONOURED,
  HT_OUT_DEBUG_REFUSED_SAMPLED, /* refused, then the root sampler said yes */
  HT_OUT_DEBUG_REFUSED_DROPPED
} ht_outcome;

uint32_t ht_sampler_root_ex(ht_sampler *s, uint64_t hi, uint64_t lo,
                            ht_sample_hint hint, uint64_t now_ns,
                            ht_outcome *out);
uint32_t ht_sampler_remote_ex(ht_sampler *s, uint64_t hi, uint64_t lo,
                              uint32_t flags, uint64_t now_ns,
                              ht_outcome *out);

/* The smallest config a caller may give: 2.0's, pinned to its last
 * field so that appending one does not move it. */
#define HT_SAMPLING_CONFIG_SIZE_MIN                                            \
  (offsetof(ht_sampling_config, remote_debug_rate) + sizeof(double))

/* A caller's config (its size checked) as this library's whole struct:
 * fields its size does not cover get their defaults. */
void ht_sampling_config_read(const ht_sampling_config *in,
                             ht_sampling_config *out);


/* Initialises *s from a checked cfg (no allocation). */
void ht_sampler_init(ht_sampler *s, const ht_sampling_config *cfg);
/* 1 when a decision may read the clock. */
int ht_sampler_needs_clock(const ht_sampler *s, int remote_debug);

/* CLOCK_MONOTONIC in ns. */
uint64_t ht_now_ns(void);

#endif /* HT_PROPAGATE_SAMPLER_IMPL_H */
