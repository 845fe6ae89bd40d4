/* Copies of events from overlapping snapshots (dedupe.h). Must never drop
 * an event that is not an exact copy: the hash covers every field a
 * hop_event carries, the time included, and the time is compared too. An
 * event not remembered (the limit, no memory) counts as forgotten, so
 * that a copy of it passing is counted, never silent. */
#include "read/dedupe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/limits.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t mix(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * FNV_PRIME;
  return h;
}

static uint64_t mix_u64(uint64_t h, uint64_t v) { return mix(h, &v, sizeof(v)); }

/* NULL and "" apart, and each string ended, so fields cannot run together. */
static uint64_t mix_str(uint64_t h, const char *s) {
  if (s == NULL)
    return mix_u64(h, 0x9e3779b97f4a7c15ull);
  return mix(h, s, strlen(s) + 1);
}

uint64_t event_dedupe_hash(const hop_event *e) {
  uint64_t h = FNV_OFFSET;
  h = mix_u64(h, (uint64_t)e->kind);
  h = mix_u64(h, (uint64_t)e->ts_ns);
  h = mix_u64(h, (uint64_t)e->end_ns);
  h = mix_u64(h, e->trace_hi);
  h = mix_u64(h, e->trace_lo);
  h = mix_u64(h, e->span_id);
  h = mix_u64(h, e->parent_id);
  h = mix_u64(h, (uint64_t)e->vpid);
  h = mix_u64(h, (uint64_t)e->vtid);
  h = mix_str(h, e->procname);
  h = mix_str(h, e->hostname);
  h = mix_u64(h, e->flags);
  h = mix_u64(h, (uint64_t)e->span_kind);
  h = mix_str(h, e->name);
  /* A capture notice's origin is "" as the library writes it, and
   * babeltrace2 2.0.4 decodes an empty string as the string of an event
   * read before it at times (fixed upstream after 2.0): one notice read
   * from several snapshots came with as many origins (3,727 notices of a
   * 6 s run). Its other fields say which event it is; no output shows a
   * notice's origin. */
  if (e->kind != HOP_CAPTURE || e->capture_hops == 0)
    h = mix_str(h, e->service);
  h = mix_str(h, e->endpoint);
  h = mix_u64(h, (uint64_t)e->status);
  h = mix_str(h, e->message);
  h = mix_str(h, e->key);
  h = mix_str(h, e->str_value);
  h = mix_u64(h, (uint64_t)e->int_value);
  for (size_t i = 0; i < e->n_kvs && e->kvs != NULL; i++) {
    h = mix_str(h, e->kvs[i].key);
    h = mix_u64(h, e->kvs[i].is_int);
    h = mix_u64(h, (uint64_t)e->kvs[i].int_value);
    h = mix_str(h, e->kvs[i].str_value);
  }
  h = mix_u64(h, e->n_kvs);
  h = mix_str(h, e->annotation);
  h = mix_u64(h, (uint64_t)e->start_ns);
  h = mix_str(h, e->end_annotation);
  h = mix_u64(h, e->frames);
  h = mix_u64(h, e->root_prob);
  for (int i = 0; i < 4; i++)
    h = mix_u64(h, (uint64_t)e->marks_ns[i]);
  h = mix_u64(h, e->named_apart);
  h = mix_u64(h, e->desc_id);
  h = mix_u64(h, e->peer_id);
  h = mix_u64(h, (uint64_t)e->msg_type);
  h = mix_u64(h, e->seq);
  h = mix_u64(h, e->size);
  h = mix_str(h, e->peer);
  h = mix_u64(h, e->capture_why);
  h = mix_u64(h, e->capture_hops);
  h = mix_u64(h, e->capture_threshold);
  h = mix_u64(h, e->capture_value);
  return h;
}

#define MIN_SLOTS 1024

static size_t slot_of(const event_dedupe *d, int64_t ts, uint64_t hash) {
  size_t mask = d->cap - 1, i = (size_t)hash & mask;
  while (d->slots[i].hash != 0 && (d->slots[i].hash != hash || d->slots[i].ts != ts))
    i = (i + 1) & mask;
  return i;
}

static void forgotten(event_dedupe *d, int64_t ts) {
  if (!d->forgot || ts > d->forgot_upto)
    d->forgot_upto = ts;
  d->forgot = true;
}

/* Into a table of cap slots (kept under 3/4 full by the callers); with
 * evict, the events older than now or no later than upto left out. */
static int rehash(event_dedupe *d, size_t cap, bool evict, int64_t now, int64_t upto) {
  dedupe_slot *old = d->slots;
  size_t old_cap = d->cap;
  dedupe_slot *slots = calloc(cap, sizeof(*slots));
  if (slots == NULL)
    return -1;
  d->slots = slots;
  d->cap = cap;
  d->n = 0;
  for (size_t i = 0; i < old_cap; i++) {
    const dedupe_slot *e = &old[i];
    if (e->hash == 0)
      continue;
    if (evict && (e->ts < now || e->ts <= upto)) {
      forgotten(d, e->ts);
      continue;
    }
    d->slots[slot_of(d, e->ts, e->hash)] = *e;
    d->n++;
  }
  free(old);
  return 0;
}

static int by_time(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Full: every event older than now goes (while the merged time goes on,
 * none of their copies can come), and at least the oldest half, so that
 * forgetting stays rare whatever the times. */
static void forget(event_dedupe *d, int64_t now) {
  int64_t median = INT64_MAX; /* its times unknown (no memory): all go */
  int64_t *times = malloc(d->n * sizeof(*times));
  if (times != NULL) {
    size_t k = 0;
    for (size_t i = 0; i < d->cap; i++)
      if (d->slots[i].hash != 0)
        times[k++] = d->slots[i].ts;
    qsort(times, k, sizeof(*times), by_time);
    median = times[k / 2];
    free(times);
  }
  if (rehash(d, d->cap, true, now, median) != 0) { /* no memory: forget all */
    for (size_t i = 0; i < d->cap; i++)
      if (d->slots[i].hash != 0)
        forgotten(d, d->slots[i].ts);
    memset(d->slots, 0, d->cap * sizeof(*d->slots));
    d->n = 0;
  }
}

static void remember(event_dedupe *d, int64_t ts, uint64_t hash) {
  uint64_t limit = ht_limits.open_spans;
  if (d->n > 0 && d->n >= limit)
    forget(d, ts);
  if ((d->n + 1) * 4 > d->cap * 3) {
    size_t cap = d->cap ? d->cap * 2 : MIN_SLOTS;
    if (cap > SIZE_MAX / sizeof(dedupe_slot) || rehash(d, cap, false, 0, 0) != 0) {
      if (d->n == 0) { /* not even a first table */
        forgotten(d, ts);
        return;
      }
      forget(d, ts);
    }
  }
  d->slots[slot_of(d, ts, hash)] = (dedupe_slot){ts, hash};
  d->n++;
}

bool event_dedupe_is_copy(event_dedupe *d, const hop_event *ev) {
  uint64_t hash = event_dedupe_hash(ev);
  hash += hash == 0; /* 0 marks an empty slot */
  if (d->cap > 0 && d->slots[slot_of(d, ev->ts_ns, hash)].hash != 0) {
    d->duplicates++;
    return true;
  }
  if (d->forgot && ev->ts_ns <= d->forgot_upto) {
    d->unsure++;
    ht_drops.dedupe_unsure++;
  }
  remember(d, ev->ts_ns, hash);
  return false;
}

void event_dedupe_free(event_dedupe *d) {
  free(d->slots);
  *d = (event_dedupe){0};
}
