/* Intern tables: open addressing, at most half full, grown by doubling
 * under the mutex and published whole; readers probe without a lock.
 * Entries and outgrown tables stay allocated for the life of the process
 * (a reader may still be probing one).
 * Must never: free an entry or a table, or take the lock on a hit. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "recording/intern.h"

int64_t ht_intern_refresh = HT_INTERN_REFRESH_DEFAULT;

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
  size_t name_len, service_len, endpoint_len;
} key;

/* 8 bytes at a time (the tail zero-padded): names are short, so a few
 * multiplies, where a byte-wise hash took one per byte. */
static uint64_t mix(uint64_t h, const char *s, size_t n) {
  for (; n >= 8; s += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15u;
    h ^= h >> 29;
  }
  uint64_t w = 0;
  memcpy(&w, s, n);
  h = (h ^ w ^ ((uint64_t)n << 56)) * 0x9e3779b97f4a7c15u;
  return h ^ (h >> 29);
}

static uint32_t hash_of(const key *k) {
  uint64_t h = mix(0xcbf29ce484222325u ^ k->kind, k->name, k->name_len);
  h = mix(h, k->service, k->service_len);
  h = mix(h, k->endpoint, k->endpoint_len);
  return (uint32_t)(h ^ (h >> 32));
}

static bool same(const ht_intern_entry *e, uint32_t h, const key *k) {
  return e->hash == h && e->kind == k->kind && e->name_len == k->name_len &&
         e->service_len == k->service_len && e->endpoint_len == k->endpoint_len &&
         memcmp(e->name, k->name, k->name_len) == 0 &&
         memcmp(e->service, k->service, k->service_len) == 0 &&
         memcmp(e->endpoint, k->endpoint, k->endpoint_len) == 0;
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
  size_t n = k->name_len + 1, s = k->service_len + 1, p = k->endpoint_len + 1;
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
  atomic_init(&e->emitted_at, 0);
  e->kind = k->kind;
  e->name_len = (uint32_t)k->name_len;
  e->service_len = (uint32_t)k->service_len;
  e->endpoint_len = (uint32_t)k->endpoint_len;
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

/* The descriptions this thread looked up last, by the addresses of their
 * strings (an operation given as a literal, a messenger's service name,
 * a frame buffer's position), checked by content, as the caller may have
 * written other text there since: a few short compares where hashing
 * three strings costs more. */
typedef struct desc_memo {
  const char *name, *service, *endpoint;
  const ht_intern_entry *e; /* NULL: empty */
} desc_memo;

static _Thread_local desc_memo recent_descs[8];

/* The lookup by text and the memo's refill, out of line. A NULL string
 * reads as "" and is not memoized. */
__attribute__((noinline)) static const ht_intern_entry *
desc_miss(desc_memo *m, uint8_t kind, const char *name, const char *service,
          const char *endpoint) {
  key k = {kind, name ? name : "", service ? service : "", endpoint ? endpoint : "", 0, 0, 0};
  k.name_len = strlen(k.name);
  k.service_len = strlen(k.service);
  k.endpoint_len = strlen(k.endpoint);
  const ht_intern_entry *e = lookup(&descs, &k);
  bool some_null = name == NULL || service == NULL || endpoint == NULL;
  *m = (desc_memo){name, service, endpoint, some_null ? NULL : e};
  return e;
}

/* The string at s is t, n bytes long: an empty one (an endpoint often)
 * is a byte's check, where strcmp costs about 27 instructions. */
static inline bool has_text(const char *s, const char *t, uint32_t n) {
  return n == 0 ? s[0] == '\0' : strcmp(s, t) == 0;
}

const ht_intern_entry *ht_intern_desc(uint8_t kind, const char *name,
                                      const char *service,
                                      const char *endpoint) {
  desc_memo *m = &recent_descs[(((uintptr_t)name >> 3) ^ ((uintptr_t)service >> 5) ^ kind) & 7u];
  const ht_intern_entry *e = m->e;
  if (m->name == name && m->service == service && m->endpoint == endpoint &&
      e != NULL && e->kind == kind && has_text(name, e->name, e->name_len) &&
      has_text(service, e->service, e->service_len) &&
      has_text(endpoint, e->endpoint, e->endpoint_len))
    return e;
  return desc_miss(m, kind, name, service, endpoint);
}

/* ht_span_info_intern's copies, in one region reserved once (untouched
 * pages cost nothing): a start knows one by its address alone, and each
 * carries its entry. A slot is 64 bytes so that an address inside the
 * region that is no slot's start is told by a mask. Slots are filled
 * under info_lock and never change afterwards. */
#define INFOS_MAX 4096
typedef struct interned_info {
  _Alignas(64) ht_span_info info; /* first: the address handed out */
  _Atomic(const ht_intern_entry *) e;
} interned_info;

static interned_info infos[INFOS_MAX];
static unsigned infos_used;
static pthread_mutex_t info_lock = PTHREAD_MUTEX_INITIALIZER;

const ht_intern_entry *ht_intern_info_desc(const ht_span_info *i) {
  uintptr_t off = (uintptr_t)i - (uintptr_t)infos;
  if (off < sizeof(infos) && off % sizeof(infos[0]) == 0) {
    const ht_intern_entry *e =
        atomic_load_explicit(&((const interned_info *)i)->e, memory_order_acquire);
    if (e != NULL)
      return e;
  }
  return ht_intern_desc((uint8_t)i->kind, i->name, i->service, i->endpoint);
}

int ht_span_info_intern(const ht_span_info *info, const ht_span_info **out) {
  if (info == NULL || out == NULL)
    return HT_EINVAL;
  const ht_intern_entry *e =
      ht_intern_desc((uint8_t)info->kind, info->name, info->service, info->endpoint);
  if (e == NULL) {
    pthread_mutex_lock(&descs.lock);
    bool full = descs.count >= HT_INTERN_MAX;
    pthread_mutex_unlock(&descs.lock);
    return full ? HT_ENAMESFULL : HT_ENOMEM;
  }
  int rc = HT_ENAMESFULL;
  pthread_mutex_lock(&info_lock);
  unsigned i = 0;
  while (i < infos_used && atomic_load_explicit(&infos[i].e, memory_order_relaxed) != e)
    i++; /* an equal info interned before: the same copy */
  if (i < INFOS_MAX) {
    if (i == infos_used) {
      infos[i].info = (ht_span_info){e->name, info->kind, e->service, e->endpoint};
      atomic_store_explicit(&infos[i].e, e, memory_order_release);
      infos_used++;
    }
    *out = &infos[i].info;
    rc = 0;
  }
  pthread_mutex_unlock(&info_lock);
  return rc;
}

/* The peers this thread looked up last, by address: a connection's name
 * stays put while it lives, and the text is compared anyway (an address
 * reused by another connection's name). */
static _Thread_local struct {
  const char *at;
  const ht_intern_entry *e;
} recent_peers[4];

const ht_intern_entry *ht_intern_peer(const char *peer) {
  unsigned i = (unsigned)((uintptr_t)peer >> 4) & 3u;
  const ht_intern_entry *e = recent_peers[i].e;
  if (recent_peers[i].at == peer && e != NULL && strcmp(e->name, peer) == 0)
    return e;
  key k = {0, peer, "", "", strlen(peer), 0, 0};
  e = lookup(&peers, &k);
  recent_peers[i].at = peer;
  recent_peers[i].e = e;
  return e;
}

uint32_t ht_intern_epoch(void) {
  return atomic_load_explicit(&epoch, memory_order_relaxed);
}

uint32_t ht_intern_new_epoch(void) {
  return atomic_fetch_add_explicit(&epoch, 1, memory_order_relaxed) + 1;
}
