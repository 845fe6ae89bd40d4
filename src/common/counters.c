/* Per-thread counter blocks, summed on read; a thread's counts are
 * folded into `retired` when it exits.
 * Must never: lock or allocate on an add once the thread has its block,
 * or lose a count (a thread whose block cannot be allocated adds to a
 * shared fallback block: racy between such threads, never dropped). */
#include "common/counters.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "common/tls_hot.h"

typedef ht_counter_block block;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static block reg = {.prev = &reg, .next = &reg};
static uint64_t retired[HT_CTR_COUNT];
static pthread_key_t reg_key;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
HT_TLS_HOT ht_counter_block *ht_counter_mine;
static block fallback;

static void retire(void *arg) {
  block *b = arg;
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < HT_CTR_COUNT; i++)
    retired[i] += atomic_load_explicit(&b->v[i], memory_order_relaxed);
  b->prev->next = b->next;
  b->next->prev = b->prev;
  pthread_mutex_unlock(&reg_lock);
  free(b);
}

static void make_key(void) { pthread_key_create(&reg_key, retire); }

static block *mine(void) {
  block *b = ht_counter_mine;
  if (b != NULL)
    return b;
  pthread_once(&reg_once, make_key);
  b = aligned_alloc(_Alignof(block), sizeof(*b));
  if (b == NULL)
    return &fallback;
  memset(b, 0, sizeof(*b));
  pthread_mutex_lock(&reg_lock);
  b->next = reg.next;
  b->prev = &reg;
  reg.next->prev = b;
  reg.next = b;
  pthread_mutex_unlock(&reg_lock);
  pthread_setspecific(reg_key, b);
  ht_counter_mine = b;
  return b;
}

void ht_counter_add_slow(ht_counter c, uint64_t n) {
  block *b = mine();
  if (b == &fallback) /* shared: an atomic add, never a lost count */
    atomic_fetch_add_explicit(&b->v[c], n, memory_order_relaxed);
  else
    ht_counter_add(c, n);
}

void ht_counter_add2_slow(ht_counter a, uint64_t na, ht_counter b,
                          uint64_t nb) {
  ht_counter_add_slow(a, na);
  ht_counter_add_slow(b, nb);
}

void ht_counters_read(ht_counter first, int n, uint64_t *out) {
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < n; i++) {
    int c = (int)first + i;
    out[i] = retired[c] +
             atomic_load_explicit(&fallback.v[c], memory_order_relaxed);
    for (block *b = reg.next; b != &reg; b = b->next)
      out[i] += atomic_load_explicit(&b->v[c], memory_order_relaxed);
  }
  pthread_mutex_unlock(&reg_lock);
}
