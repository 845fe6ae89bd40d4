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

typedef struct block {
  /* written by the owner, read by anyone; on lines of their own */
  _Alignas(64) atomic_uint_fast64_t v[HT_CTR_COUNT];
  struct block *prev, *next;
} block;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static block reg = {.prev = &reg, .next = &reg};
static uint64_t retired[HT_CTR_COUNT];
static pthread_key_t reg_key;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static _Thread_local block *tl_block;
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
  block *b = tl_block;
  if (__builtin_expect(b != NULL, 1))
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
  tl_block = b;
  return b;
}

static void add(block *b, ht_counter c, uint64_t n) {
  if (__builtin_expect(b == &fallback, 0)) {
    atomic_fetch_add_explicit(&b->v[c], n, memory_order_relaxed);
    return;
  }
  /* only this thread writes its block: a plain load and store suffice */
  atomic_store_explicit(
      &b->v[c], atomic_load_explicit(&b->v[c], memory_order_relaxed) + n,
      memory_order_relaxed);
}

void ht_counter_add(ht_counter c, uint64_t n) { add(mine(), c, n); }

void ht_counter_add2(ht_counter a, uint64_t na, ht_counter b, uint64_t nb) {
  block *blk = mine();
  add(blk, a, na);
  add(blk, b, nb);
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
