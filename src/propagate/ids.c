/* Per-thread id generator: xoshiro256** seeded from getrandom(2).
 *
 * Fork safety: a pthread_atfork child handler marks the forking thread's
 * state unseeded (the child's only thread: the others' states did not
 * survive the fork), so the child reseeds before its next id and never
 * continues its parent's sequence; the hot path tests its own state only.
 * Must never: return 0, take a lock on the hot path, or fail.
 */
#include "hoptrace/ids.h"
#include "propagate/span_path.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "common/tls_hot.h"

HT_TLS_HOT ht_id_state ht_ids_mine_;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void) { ht_ids_mine_.seeded = false; }

static void register_atfork(void) {
  (void)pthread_atfork(NULL, NULL, on_fork_child);
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Kernel entropy; if getrandom is unavailable (very old kernel, early
 * boot), a mix of clocks, pid, thread address and a counter: still unique
 * per thread and per fork, just not unpredictable. */
static void fill_seed(uint64_t seed[4]) {
  size_t got = 0;
  unsigned char *p = (unsigned char *)seed;
  while (got < 4 * sizeof(uint64_t)) {
    ssize_t n = getrandom(p + got, 4 * sizeof(uint64_t) - got, GRND_NONBLOCK);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  if (got == 4 * sizeof(uint64_t))
    return;
  static atomic_uint_fast64_t fallback_counter;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  clock_gettime(CLOCK_REALTIME, &ts);
  x ^= ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)getpid() << 40;
  x ^= (uint64_t)(uintptr_t)&ht_ids_mine_;
  x ^= atomic_fetch_add(&fallback_counter, 1) * 0xd1342543de82ef95ull;
  for (int i = 0; i < 4; i++)
    seed[i] ^= splitmix64(&x);
}

void ht_ids_reseed(ht_id_state *st) {
  pthread_once(&atfork_once, register_atfork);
  uint64_t seed[4] = {0, 0, 0, 0};
  fill_seed(seed);
  /* xoshiro must not start from all zeros. */
  if ((seed[0] | seed[1] | seed[2] | seed[3]) == 0)
    seed[0] = 0x9e3779b97f4a7c15ull;
  memcpy(st->s, seed, sizeof(st->s));
  st->seeded = true;
}

uint64_t ht_id_span(void) {
  uint64_t id;
  ht_ids_draw(ht_ids_state(), &id, 1);
  return ht_ids_nonzero(id);
}

void ht_id_trace(uint64_t *hi, uint64_t *lo) {
  uint64_t w[2];
  ht_ids_draw(ht_ids_state(), w, 2);
  *hi = w[0];
  *lo = ht_ids_nonzero(w[1]);
}
