/* Flight mode's per-thread rings (flight_ring.h). The data words are
 * read and written as relaxed atomics: a reader may copy a slot while its
 * writer overwrites it (the sequence word then tells it to drop the
 * copy), and that must not be a data race in C11's terms. On x86-64 they
 * are plain moves. */
#include "recording/flight_ring.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/tls_hot.h"
#include "hoptrace/error.h"

#define FR_DEFAULT_SLOTS 8192u
#define FR_MIN_SLOTS 64u

/* 128 bytes: seq, meta (type << 8 | n), trace id, payload. */
typedef struct fr_slot {
  _Atomic uint32_t seq; /* FR_WRITING, FR_TAKEN, a count of 4s; 0: never written */
  uint32_t meta;
  uint64_t hi, lo;
  uint64_t w[HT_FR_WORDS];
} fr_slot;
_Static_assert(sizeof(fr_slot) == 128, "a slot is two cache lines");
/* seq's low bits: the writer's mark, and ht_fr_take's (set by a CAS from
 * the whole record's seq, so a record is taken once, and a write under
 * way makes the CAS fail); a write clears both. */
#define FR_WRITING 1u
#define FR_TAKEN 2u
#define FR_FLAGS (FR_WRITING | FR_TAKEN)

typedef struct fr_ring {
  struct fr_ring *next; /* set before the ring is listed, then fixed */
  _Atomic bool owned;   /* a live thread writes it */
  _Atomic bool stale;   /* a fork's parent wrote it: not read, cleared when taken */
  uint32_t mask;
  uint64_t head; /* the owner's only */
  fr_slot *slots;
} fr_ring;

/* No lock: rings are never freed and only added at the front, so a scan
 * walks the list from the head it loads, and a fork finds no lock held
 * for its child (a scan used to hold one throughout, and a child forked
 * meanwhile hung at its first new thread's record and in exit). */
static _Atomic(fr_ring *) fr_rings;
static _Atomic size_t fr_ring_count;
static _Atomic uint32_t fr_slots = FR_DEFAULT_SLOTS;
static _Atomic uint64_t fr_lost;
static HT_TLS_HOT fr_ring *fr_mine; /* read for every record */
static pthread_key_t fr_key;
static pthread_once_t fr_key_once = PTHREAD_ONCE_INIT;

/* A thread exits: its ring goes to the next new thread (its records stay
 * until overwritten). fr_mine is cleared too: a later key's destructor
 * that records then takes a ring again (setspecific brings this
 * destructor back for it) rather than write one a new thread may own. */
static void fr_release(void *ring) {
  fr_mine = NULL;
  atomic_store_explicit(&((fr_ring *)ring)->owned, false, memory_order_release);
}

/* A fork's child: the parent's threads are gone, and the records every
 * ring holds are the parent's (the forking thread's too), for the
 * parent to replay. Each ring is freed for the child's threads and not
 * read until one takes it; the child is one thread here. */
static void fr_forget_parent(void) {
  for (fr_ring *r = atomic_load(&fr_rings); r != NULL; r = r->next) {
    atomic_store(&r->stale, true);
    atomic_store(&r->owned, false);
  }
  fr_mine = NULL;
  (void)pthread_setspecific(fr_key, NULL);
}

static void fr_init(void) {
  if (pthread_key_create(&fr_key, fr_release) == 0)
    (void)pthread_atfork(NULL, NULL, fr_forget_parent);
}

void ht_fr_set_slots(uint32_t slots) {
  uint32_t s = FR_MIN_SLOTS;
  while (s < slots && s < (1u << 24))
    s <<= 1;
  atomic_store_explicit(&fr_slots, slots == 0 ? FR_DEFAULT_SLOTS : s, memory_order_relaxed);
}

static void fr_clear(fr_ring *g) {
  for (uint32_t i = 0; i <= g->mask; i++)
    atomic_store_explicit(&g->slots[i].seq, 0, memory_order_relaxed);
}

/* A released ring of the current size, else a new one (listed at the
 * front); NULL when out of memory. */
static fr_ring *fr_take(uint32_t slots) {
  for (fr_ring *r = atomic_load_explicit(&fr_rings, memory_order_acquire); r != NULL;
       r = r->next) {
    bool was = false;
    if (r->mask + 1 == slots &&
        atomic_compare_exchange_strong_explicit(&r->owned, &was, true, memory_order_acquire,
                                                memory_order_relaxed)) {
      if (atomic_load_explicit(&r->stale, memory_order_relaxed)) {
        fr_clear(r);
        atomic_store_explicit(&r->stale, false, memory_order_release);
      }
      return r;
    }
  }
  fr_ring *g = calloc(1, sizeof(*g));
  if (g == NULL || (g->slots = aligned_alloc(64, (size_t)slots * sizeof(fr_slot))) == NULL) {
    free(g);
    return NULL;
  }
  g->mask = slots - 1;
  for (uint32_t i = 0; i < slots; i++)
    atomic_init(&g->slots[i].seq, 0);
  atomic_init(&g->owned, true);
  atomic_init(&g->stale, false);
  g->next = atomic_load_explicit(&fr_rings, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(&fr_rings, &g->next, g, memory_order_release,
                                                memory_order_relaxed)) {
  }
  atomic_fetch_add_explicit(&fr_ring_count, 1, memory_order_relaxed);
  return g;
}

/* The calling thread's ring, made its own; NULL when out of memory. */
__attribute__((noinline, cold)) static fr_ring *fr_acquire(void) {
  pthread_once(&fr_key_once, fr_init);
  fr_ring *g = fr_take(atomic_load_explicit(&fr_slots, memory_order_relaxed));
  if (g != NULL) {
    g->head = 0;
    (void)pthread_setspecific(fr_key, g);
    fr_mine = g;
  }
  return g;
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

int ht_fr_write(const ht_fr_record *r) {
  if (r->n > HT_FR_WORDS)
    return HT_EINVAL;
  fr_ring *g = fr_mine;
  if (__builtin_expect(g == NULL, 0) && (g = fr_acquire()) == NULL) {
    atomic_fetch_add_explicit(&fr_lost, 1, memory_order_relaxed);
    return HT_ENOMEM;
  }
  fr_slot *s = &g->slots[g->head++ & g->mask];
  uint32_t q = atomic_load_explicit(&s->seq, memory_order_relaxed) & ~FR_FLAGS;
  atomic_store_explicit(&s->seq, q + FR_WRITING, memory_order_relaxed);
  atomic_thread_fence(memory_order_release); /* odd before any data */
  STORE(&s->meta, r->type << 8 | r->n);
  STORE(&s->hi, r->trace_hi);
  STORE(&s->lo, r->trace_lo);
  /* every word, used or not (a reader copies only n): a loop of a known
   * length unrolls to moves, where one to r->n reloaded it each word
   * (126 -> 52 instructions a record, callgrind) */
#pragma GCC unroll 13
  for (uint32_t i = 0; i < HT_FR_WORDS; i++)
    STORE(&s->w[i], r->w[i]);
  atomic_store_explicit(&s->seq, q + 4, memory_order_release);
  return 0;
}

/* Slot s's record into out when want says its trace is wanted and it is
 * whole; take: and not taken before, then marked taken. */
static bool fr_copy(fr_slot *s, bool (*want)(uint64_t, uint64_t, void *), void *arg,
                    bool take, ht_fr_record *out) {
  uint32_t q = atomic_load_explicit(&s->seq, memory_order_acquire);
  if (q == 0 || (q & FR_WRITING) || (take && (q & FR_TAKEN)))
    return false;
  uint64_t hi = LOAD(&s->hi), lo = LOAD(&s->lo);
  if (!want(hi, lo, arg))
    return false;
  uint32_t meta = LOAD(&s->meta);
  out->trace_hi = hi;
  out->trace_lo = lo;
  out->type = meta >> 8;
  out->n = meta & 0xff;
  if (out->n > HT_FR_WORDS)
    return false; /* torn: the check below drops it anyway */
  for (uint32_t i = 0; i < out->n; i++)
    out->w[i] = LOAD(&s->w[i]);
  atomic_thread_fence(memory_order_acquire); /* the data before the recheck */
  if (take)
    return atomic_compare_exchange_strong_explicit(&s->seq, &q, q | FR_TAKEN,
                                                   memory_order_relaxed, memory_order_relaxed);
  /* a taker's mark meanwhile leaves the record whole */
  return (atomic_load_explicit(&s->seq, memory_order_relaxed) & ~FR_TAKEN) == (q & ~FR_TAKEN);
}

static size_t fr_scan(bool (*want)(uint64_t hi, uint64_t lo, void *arg),
                      void (*emit)(const ht_fr_record *r, void *arg), void *arg, bool take) {
  size_t found = 0;
  ht_fr_record rec;
  for (fr_ring *g = atomic_load_explicit(&fr_rings, memory_order_acquire); g != NULL;
       g = g->next) {
    if (atomic_load_explicit(&g->stale, memory_order_acquire))
      continue;
    for (uint32_t i = 0; i <= g->mask; i++)
      if (fr_copy(&g->slots[i], want, arg, take, &rec)) {
        emit(&rec, arg);
        found++;
      }
  }
  return found;
}

size_t ht_fr_scan(bool (*want)(uint64_t hi, uint64_t lo, void *arg),
                  void (*emit)(const ht_fr_record *r, void *arg), void *arg) {
  return fr_scan(want, emit, arg, false);
}

size_t ht_fr_take(bool (*want)(uint64_t hi, uint64_t lo, void *arg),
                  void (*emit)(const ht_fr_record *r, void *arg), void *arg) {
  return fr_scan(want, emit, arg, true);
}

typedef struct fr_one {
  uint64_t hi, lo;
  void (*emit)(const ht_fr_record *r, void *arg);
  void *arg;
} fr_one;

static bool fr_one_want(uint64_t hi, uint64_t lo, void *arg) {
  const fr_one *o = arg;
  return hi == o->hi && lo == o->lo;
}

static void fr_one_emit(const ht_fr_record *r, void *arg) {
  const fr_one *o = arg;
  o->emit(r, o->arg);
}

size_t ht_fr_collect(uint64_t hi, uint64_t lo,
                     void (*emit)(const ht_fr_record *r, void *arg), void *arg) {
  fr_one o = {hi, lo, emit, arg};
  return ht_fr_scan(fr_one_want, fr_one_emit, &o);
}

uint64_t ht_fr_lost(void) { return atomic_load_explicit(&fr_lost, memory_order_relaxed); }

size_t ht_fr_rings(void) {
  return atomic_load_explicit(&fr_ring_count, memory_order_relaxed);
}
