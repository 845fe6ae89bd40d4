/* Seeded, reproducible pseudo-random numbers for tests (splitmix64).
 * Tests print their seed so a failure can be replayed. */
#ifndef HT_TEST_RNG_H
#define HT_TEST_RNG_H

#include <stdint.h>

typedef struct test_rng {
  uint64_t state;
} test_rng;

static inline uint64_t test_rng_next(test_rng *rng) {
  uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [0, bound), bound > 0. */
static inline uint64_t test_rng_below(test_rng *rng, uint64_t bound) {
  return test_rng_next(rng) % bound;
}

#endif
