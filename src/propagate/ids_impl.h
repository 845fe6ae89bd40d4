/* The per-thread id generator (xoshiro256**) as inline functions, so the
 * span starts draw a root's three words or a child's one without a call
 * each and with one fork check per span (ids.c: seeding, fork safety,
 * the public ht_id_*). Internal to libhoptrace. */
#ifndef HT_PROPAGATE_IDS_IMPL_H
#define HT_PROPAGATE_IDS_IMPL_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct ht_id_state {
  uint64_t s[4];
  unsigned generation; /* 0: never seeded */
} ht_id_state;

extern _Thread_local ht_id_state ht_ids_mine_;
/* Bumped in a forked child: older states reseed before their next id. */
extern atomic_uint ht_ids_fork_generation;

void ht_ids_reseed(ht_id_state *st, unsigned generation);

/* The calling thread's generator, seeded for this process. */
static inline ht_id_state *ht_ids_state(void) {
  ht_id_state *st = &ht_ids_mine_;
  unsigned gen =
      atomic_load_explicit(&ht_ids_fork_generation, memory_order_relaxed);
  if (__builtin_expect(st->generation != gen, 0))
    ht_ids_reseed(st, gen);
  return st;
}

static inline uint64_t ht_ids_rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

static inline uint64_t ht_ids_next(ht_id_state *st) {
  uint64_t *s = st->s;
  const uint64_t result = ht_ids_rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = ht_ids_rotl(s[3], 45);
  return result;
}

/* A span id, or a trace id's low half: never 0. */
static inline uint64_t ht_ids_nonzero(ht_id_state *st) {
  uint64_t id;
  do
    id = ht_ids_next(st);
  while (__builtin_expect(id == 0, 0));
  return id;
}

#endif /* HT_PROPAGATE_IDS_IMPL_H */
