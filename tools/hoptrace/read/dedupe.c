/* Copies of events from overlapping snapshots (dedupe.h). Must never drop
 * an event that is not an exact copy: the hash covers every field a
 * hop_event carries, the time included, and only events of the same time
 * are compared (the merged stream puts every copy at its original's time). */
#include "read/dedupe.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

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

bool event_dedupe_is_copy(event_dedupe *d, const hop_event *ev) {
  if (d->n > 0 && ev->ts_ns != d->ts_ns)
    d->n = 0; /* a new time: the copies of older events are behind us */
  d->ts_ns = ev->ts_ns;
  uint64_t h = event_dedupe_hash(ev);
  for (size_t i = 0; i < d->n; i++)
    if (d->seen[i] == h) {
      d->duplicates++;
      return true;
    }
  if (d->n == DEDUPE_MAX_AT_ONCE)
    return false;
  if (ht_grow(&d->seen, &d->cap, d->n + 1, sizeof(uint64_t), 16) != 0)
    return false;
  d->seen[d->n++] = h;
  return false;
}

void event_dedupe_free(event_dedupe *d) {
  free(d->seen);
  d->seen = NULL;
  d->n = d->cap = 0;
}
