/* Epoch-based reclamation (see epoch.h).
 *
 * Each thread owns a record holding the global epoch it entered at (0 when
 * outside a read section). Records live in a lock-free list that only
 * grows; a record whose thread exited is reused by a new thread, so the
 * list is bounded by the peak number of live threads. Records are
 * reachable from a global for the whole process (not leaks).
 * Must never: free a record, block a reader, or let a reader see a freed
 * object.
 */
#include "propagate/epoch.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "common/tls_hot.h"

/* One cache line each: every read section stores into its record, and
 * two threads' records sharing a line would bounce it between cores. */
struct ht_epoch_reader {
  _Alignas(64) _Atomic uint64_t active; /* epoch at entry, 0 = quiescent */
  atomic_int in_use;       /* owned by a live thread */
  struct ht_epoch_reader *next;
};

static _Atomic(ht_epoch_reader *) readers;
static _Atomic uint64_t global_epoch = 1;
static HT_TLS_HOT ht_epoch_reader *tls_reader;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* Readers without a record (malloc failed) are counted here instead; a
 * writer waits for the count to drop to zero. */
static ht_epoch_reader shared_fallback;
static atomic_uint fallback_users;

/* Thread exit (pthread key destructor, on the exiting thread). A later
 * read section in this thread (another destructor) claims a fresh record,
 * never this one, which another thread may already own. */
static void release_reader(void *p) {
  ht_epoch_reader *r = p;
  tls_reader = NULL;
  atomic_store(&r->active, 0);
  atomic_store_explicit(&r->in_use, 0, memory_order_release);
}

/* In a fork child only the forking thread exists, and it is not inside a
 * read section: every other record is free and quiescent. */
static void on_fork_child(void) {
  for (ht_epoch_reader *r = atomic_load(&readers); r; r = r->next) {
    if (r == tls_reader)
      continue;
    atomic_store(&r->active, 0);
    atomic_store(&r->in_use, 0);
  }
  atomic_store(&fallback_users, 0);
}

static void make_key(void) {
  (void)pthread_key_create(&exit_key, release_reader);
  (void)pthread_atfork(NULL, NULL, on_fork_child);
}

static ht_epoch_reader *claim_reader(void) {
  for (ht_epoch_reader *r = atomic_load(&readers); r; r = r->next) {
    int free_slot = 0;
    if (atomic_compare_exchange_strong(&r->in_use, &free_slot, 1))
      return r;
  }
  ht_epoch_reader *r = aligned_alloc(_Alignof(ht_epoch_reader), sizeof(*r));
  if (!r)
    return NULL;
  atomic_init(&r->active, 0);
  atomic_init(&r->in_use, 1);
  ht_epoch_reader *head = atomic_load(&readers);
  do
    r->next = head;
  while (!atomic_compare_exchange_weak(&readers, &head, r));
  return r;
}

static ht_epoch_reader *this_reader(void) {
  if (__builtin_expect(tls_reader != NULL, 1))
    return tls_reader;
  pthread_once(&key_once, make_key);
  ht_epoch_reader *r = claim_reader();
  if (!r)
    return NULL;
  tls_reader = r;
  (void)pthread_setspecific(exit_key, r);
  return r;
}

ht_epoch_reader *ht_epoch_enter(void) {
  ht_epoch_reader *r = this_reader();
  if (!r) {
    atomic_fetch_add(&fallback_users, 1);
    return &shared_fallback;
  }
  /* seq_cst store, then the caller's seq_cst load of the pointer: a
   * writer that swapped after our load sees us active. */
  atomic_store(&r->active, atomic_load(&global_epoch));
  return r;
}

void ht_epoch_exit(ht_epoch_reader *r) {
  if (r == &shared_fallback) {
    atomic_fetch_sub(&fallback_users, 1);
    return;
  }
  atomic_store_explicit(&r->active, 0, memory_order_release);
}

static int fallback_busy(void) { return atomic_load(&fallback_users) != 0; }

void ht_epoch_synchronize(void) {
  uint64_t target = atomic_fetch_add(&global_epoch, 1) + 1;
  for (ht_epoch_reader *r = atomic_load(&readers); r; r = r->next) {
    for (;;) {
      uint64_t a = atomic_load(&r->active);
      if (a == 0 || a >= target)
        break;
      sched_yield();
    }
  }
  while (fallback_busy())
    sched_yield();
}
