/* Copies of events from overlapping snapshots (dedupe.h). Must never drop
 * an event that is not an exact copy: the hash covers every field a
 * hop_event carries, the time included, keyed (keyed_hash.h) so that no
 * trace can make two events collide, and the time is compared too. An
 * event not remembered (the limit, no memory) counts as forgotten, so
 * that a copy of it passing is counted, never silent. */
#include "read/dedupe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/keyed_hash.h"
#include "read/limits.h"

/* NULL and "" apart (a tag byte), and each string ended by its NUL, so
 * that fields cannot run together. */
static void mix_str(keyed_hash *h, const char *s) {
  keyed_hash_add(h, s != NULL ? "\1" : "", 1);
  if (s != NULL)
    keyed_hash_add(h, s, strlen(s) + 1);
}

uint64_t event_dedupe_hash(const hop_event *e) {
  const uint64_t numbers[] = {
      (uint64_t)e->kind, (uint64_t)e->ts_ns, (uint64_t)e->end_ns, e->trace_hi, e->trace_lo,
      e->span_id, e->parent_id, (uint64_t)e->vpid, (uint64_t)e->vtid, e->flags,
      (uint64_t)e->span_kind, (uint64_t)e->status, (uint64_t)e->int_value, e->n_kvs,
      (uint64_t)e->start_ns, e->frames, e->root_prob, (uint64_t)e->marks_ns[0],
      (uint64_t)e->marks_ns[1], (uint64_t)e->marks_ns[2], (uint64_t)e->marks_ns[3],
      e->named_apart, e->desc_id, e->peer_id, (uint64_t)e->msg_type, e->seq, e->size,
      e->capture_why, e->capture_hops, e->capture_threshold, e->capture_value};
  /* A capture notice's origin is "" as the library writes it, and
   * babeltrace2 2.0.4 decodes an empty string as the string of an event
   * read before it at times (fixed upstream after 2.0): one notice read
   * from several snapshots came with as many origins (3,727 notices of a
   * 6 s run). Its other fields say which event it is; no output shows a
   * notice's origin. */
  bool notice = e->kind == HOP_CAPTURE && e->capture_hops != 0;
  const char *strings[] = {e->procname,  e->hostname,   notice ? "" : e->service,
                           e->name,      e->endpoint,   e->message,
                           e->key,       e->str_value,  e->annotation,
                           e->end_annotation, e->peer};
  keyed_hash h;
  keyed_hash_init(&h, NULL);
  keyed_hash_add(&h, numbers, sizeof(numbers));
  for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
    mix_str(&h, strings[i]);
  for (size_t i = 0; i < e->n_kvs && e->kvs != NULL; i++) {
    const hop_kv *kv = &e->kvs[i];
    const uint64_t kv_numbers[] = {kv->is_int, (uint64_t)kv->int_value};
    keyed_hash_add(&h, kv_numbers, sizeof(kv_numbers));
    mix_str(&h, kv->key);
    mix_str(&h, kv->str_value);
  }
  return keyed_hash_end(&h);
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
