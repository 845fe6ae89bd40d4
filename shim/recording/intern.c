/* Intern tables: open addressing, at most half full, grown by doubling
 * under the mutex and published whole; readers probe without a lock.
 * Entries and outgrown tables stay allocated for the life of the process
 * (a reader may still be probing one).
 * Must never: free an entry or a table, or take the lock on a hit. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "recording/intern.h"

typedef struct table table;
struct table {
  table *outgrown; /* the previous table, kept for late readers */
  uint32_t mask;
  _Atomic(ht_intern_entry *) slots[];
};

typedef struct intern_set {
  _Atomic(table *) current;
  pthread_mutex_t lock;
  uint32_t count;
} intern_set;

static intern_set descs = {.lock = PTHREAD_MUTEX_INITIALIZER};
static intern_set peers = {.lock = PTHREAD_MUTEX_INITIALIZER};
static atomic_uint epoch;

typedef struct key {
  uint8_t kind;
  const char *name, *service, *endpoint;
} key;

static uint32_t fnv(uint32_t h, const char *s) {
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  return (h ^ 0xffu) * 16777619u; /* a terminator: "a","b" != "ab","" */
}

static uint32_t hash_of(const key *k) {
  uint32_t h = (2166136261u ^ k->kind) * 16777619u;
  return fnv(fnv(fnv(h, k->name), k->service), k->endpoint);
}

static bool same(const ht_intern_entry *e, uint32_t h, const key *k) {
  return e->hash == h && e->kind == k->kind && strcmp(e->name, k->name) == 0 &&
         strcmp(e->service, k->service) == 0 &&
         strcmp(e->endpoint, k->endpoint) == 0;
}

static const ht_intern_entry *find(const table *t, uint32_t h, const key *k) {
  if (t == NULL)
    return NULL;
  for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
    const ht_intern_entry *e =
        atomic_load_explicit(&t->slots[i], memory_order_acquire);
    if (e == NULL || same(e, h, k))
      return e;
  }
}

static void place(table *t, ht_intern_entry *e) {
  uint32_t i = e->hash & t->mask;
  while (atomic_load_explicit(&t->slots[i], memory_order_relaxed) != NULL)
    i = (i + 1) & t->mask;
  atomic_store_explicit(&t->slots[i], e, memory_order_release);
}

/* A table twice the size (64 at first) holding every entry of old. */
static table *grown(table *old) {
  uint32_t cap = old != NULL ? (old->mask + 1) * 2 : 64;
  table *t = calloc(1, sizeof(*t) + cap * sizeof(t->slots[0]));
  if (t == NULL)
    return NULL;
  t->mask = cap - 1;
  t->outgrown = old;
  for (uint32_t i = 0; old != NULL && i <= old->mask; i++) {
    ht_intern_entry *e = atomic_load_explicit(&old->slots[i], memory_order_relaxed);
    if (e != NULL)
      place(t, e);
  }
  return t;
}

static ht_intern_entry *new_entry(uint32_t id, uint32_t h, const key *k) {
  size_t n = strlen(k->name) + 1, s = strlen(k->service) + 1,
         p = strlen(k->endpoint) + 1;
  ht_intern_entry *e = malloc(sizeof(*e) + n + s + p);
  if (e == NULL)
    return NULL;
  char *text = (char *)(e + 1);
  memcpy(text, k->name, n);
  memcpy(text + n, k->service, s);
  memcpy(text + n + s, k->endpoint, p);
  e->id = id;
  e->hash = h;
  atomic_init(&e->emitted_epoch, 0);
  e->kind = k->kind;
  e->name = text;
  e->service = text + n;
  e->endpoint = text + n + s;
  return e;
}

static const ht_intern_entry *insert(intern_set *set, uint32_t h, const key *k) {
  pthread_mutex_lock(&set->lock);
  table *t = atomic_load_explicit(&set->current, memory_order_relaxed);
  const ht_intern_entry *found = find(t, h, k);
  ht_intern_entry *e = NULL;
  if (found == NULL && set->count < HT_INTERN_MAX) {
    if (t == NULL || (set->count + 1) * 2 > t->mask + 1) {
      table *bigger = grown(t);
      if (bigger != NULL)
        atomic_store_explicit(&set->current, bigger, memory_order_release);
      t = bigger;
    }
    e = t != NULL ? new_entry(set->count + 1, h, k) : NULL;
    if (e != NULL) {
      set->count++;
      place(t, e);
    }
  }
  pthread_mutex_unlock(&set->lock);
  return found != NULL ? found : e;
}

static const ht_intern_entry *lookup(intern_set *set, const key *k) {
  uint32_t h = hash_of(k);
  const ht_intern_entry *e =
      find(atomic_load_explicit(&set->current, memory_order_acquire), h, k);
  return e != NULL ? e : insert(set, h, k);
}

const ht_intern_entry *ht_intern_desc(uint8_t kind, const char *name,
                                      const char *service,
                                      const char *endpoint) {
  key k = {kind, name, service, endpoint};
  return lookup(&descs, &k);
}

const ht_intern_entry *ht_intern_peer(const char *peer) {
  key k = {0, peer, "", ""};
  return lookup(&peers, &k);
}

uint32_t ht_intern_epoch(void) {
  return atomic_load_explicit(&epoch, memory_order_relaxed);
}

uint32_t ht_intern_new_epoch(void) {
  return atomic_fetch_add_explicit(&epoch, 1, memory_order_relaxed) + 1;
}
