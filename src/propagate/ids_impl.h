/* The per-thread id generator (xoshiro256**) as inline functions, so the
 * span starts draw a root's two words or a child's one without a call
 * each and with one fork check per span (ids.c: seeding, fork safety,
 * the public ht_id_*). Internal to libhoptrace. */
#ifndef HT_PROPAGATE_IDS_IMPL_H
#define HT_PROPAGATE_IDS_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include "common/tls_hot.h"

typedef struct ht_id_state {
  uint64_t s[4];
  bool seeded; /* false: never, or the thread forked since (ids.c) */
} ht_id_state;

extern HT_TLS_HOT ht_id_state ht_ids_mine_;
void ht_ids_reseed(ht_id_state *st);

/* The calling thread's generator, seeded for this process. */
static inline ht_id_state *ht_ids_state(void) {
  ht_id_state *st = &ht_ids_mine_;
  if (__builtin_expect(!st->seeded, 0))
    ht_ids_reseed(st);
  return st;
}

static inline uint64_t ht_ids_rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

/* n draws into out, the state loaded and stored once (in registers
 * between draws). */
static inline void ht_ids_draw(ht_id_state *st, uint64_t *out, unsigned n) {
  uint64_t s0 = st->s[0], s1 = st->s[1], s2 = st->s[2], s3 = st->s[3];
#pragma GCC unroll 3 /* n is a constant at every call */
  for (unsigned i = 0; i < n; i++) {
    out[i] = ht_ids_rotl(s1 * 5, 7) * 9;
    const uint64_t t = s1 << 17;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = ht_ids_rotl(s3, 45);
  }
  st->s[0] = s0;
  st->s[1] = s1;
  st->s[2] = s2;
  st->s[3] = s3;
}

/* A draw as a span id or a trace id's low half, which are never 0: 0
 * (one draw in 2^64) becomes 1, no retry loop to keep the state in
 * memory for. */
static inline uint64_t ht_ids_nonzero(uint64_t x) { return x != 0 ? x : 1; }

#endif /* HT_PROPAGATE_IDS_IMPL_H */
