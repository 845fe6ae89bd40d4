/* Packing hop events into blocks and restoring them (event_block.h). */
#include "read/event_block.h"

#include <string.h>

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)
#define FIRST_RECORD ALIGN16(sizeof(event_block))

/* Every string field of a hop_event, for packing and restoring alike. */
#define HOP_STRINGS(X)                                                      \
  X(procname) X(hostname) X(name) X(service) X(endpoint) X(message) X(key) \
  X(str_value) X(annotation) X(end_annotation) X(peer)

void event_block_init(event_block *b) {
  b->n_records = 0;
  b->used = (uint32_t)FIRST_RECORD;
}

static size_t str_bytes(const char *s) { return s != NULL ? strlen(s) + 1 : 0; }

#define N_STRINGS 11
#define X(f) +1
_Static_assert(0 HOP_STRINGS(X) == N_STRINGS, "N_STRINGS counts HOP_STRINGS");
#undef X

/* Record size; the string lengths (+ 1, 0 for NULL) in len[] when given. */
static size_t record_size(const hop_event *ev, size_t *len) {
  size_t n = sizeof(event_record) + sizeof(hop_event) + 1; /* + a closing 0 */
  size_t scratch[N_STRINGS], k = 0;
  if (len == NULL)
    len = scratch;
#define X(f) n += (len[k++] = str_bytes(ev->f));
  HOP_STRINGS(X)
#undef X
  n += ev->n_kvs * sizeof(hop_kv);
  for (size_t i = 0; i < ev->n_kvs; i++)
    n += str_bytes(ev->kvs[i].key) + str_bytes(ev->kvs[i].str_value);
  return ALIGN16(n);
}

size_t event_record_size(const hop_event *ev) { return record_size(ev, NULL); }

/* Copies s (n bytes with its 0, none for NULL) to base + *at; its offset,
 * disguised as a pointer (NULL: 0). */
static const char *put_str(unsigned char *base, size_t *at, const char *s, size_t n) {
  if (s == NULL)
    return NULL;
  memcpy(base + *at, s, n);
  const char *off = (const char *)(uintptr_t)*at;
  *at += n;
  return off;
}

static event_record *reserve(event_block *b, size_t cap, size_t size) {
  if (b->used > cap || cap - b->used < size || size > UINT32_MAX - b->used)
    return NULL;
  return (event_record *)((unsigned char *)b + b->used);
}

static void commit(event_block *b, event_record *r) {
  b->used += r->size;
  b->n_records++;
}

static int put_record(event_block *b, size_t cap, const hop_event *ev, uint32_t type,
                      uint64_t count, int64_t end_ns) {
  size_t len[N_STRINGS];
  size_t size = record_size(ev, len);
  event_record *r = reserve(b, cap, size);
  if (r == NULL)
    return -1;
  unsigned char *base = (unsigned char *)b;
  size_t start = b->used;
  *r = (event_record){.size = (uint32_t)size, .type = type, .ts_ns = ev->ts_ns,
                      .count = count, .end_ns = end_ns};
  hop_event *e = (hop_event *)(r + 1);
  *e = *ev;
  size_t at = start + sizeof(*r) + sizeof(*e);
  if (ev->n_kvs > 0) {
    hop_kv *kv = (hop_kv *)(base + at);
    e->kvs = (const hop_kv *)(uintptr_t)at;
    at += ev->n_kvs * sizeof(hop_kv);
    for (size_t i = 0; i < ev->n_kvs; i++) {
      kv[i] = ev->kvs[i];
      kv[i].key = put_str(base, &at, ev->kvs[i].key, str_bytes(ev->kvs[i].key));
      kv[i].str_value =
          put_str(base, &at, ev->kvs[i].str_value, str_bytes(ev->kvs[i].str_value));
    }
  } else {
    e->kvs = NULL;
  }
  size_t k = 0;
#define X(f) e->f = put_str(base, &at, ev->f, len[k++]);
  HOP_STRINGS(X)
#undef X
  memset(base + at, 0, start + size - at);
  commit(b, r);
  return 0;
}

int event_block_put_event(event_block *b, size_t cap, const hop_event *ev) {
  return put_record(b, cap, ev, EVENT_RECORD_EVENT, 0, 0);
}

int event_block_put_discarded(event_block *b, size_t cap, const hop_loss *loss) {
  hop_event carrier = {.ts_ns = loss->begin_ns, .hostname = loss->hostname,
                       .seq = loss->packets};
  return put_record(b, cap, &carrier, EVENT_RECORD_DISCARDED, loss->events, loss->end_ns);
}

hop_loss event_block_loss(const event_record *r, const hop_event *ev) {
  return (hop_loss){.hostname = ev->hostname != NULL ? ev->hostname : "",
                    .events = r->count, .packets = ev->seq,
                    .begin_ns = r->ts_ns, .end_ns = r->end_ns};
}

/* An offset-disguised pointer back to a pointer into [lo, hi) of base;
 * 0 on an offset outside (a string there ends by hi: the record's last
 * byte is 0). */
static int restore(unsigned char *base, const char **p, size_t lo, size_t hi) {
  uintptr_t off = (uintptr_t)*p;
  if (off == 0)
    return 1;
  if (off < lo || off >= hi)
    return 0;
  *p = (const char *)(base + off);
  return 1;
}

static int restore_event(unsigned char *base, hop_event *e, size_t lo, size_t end) {
  uintptr_t kvs = (uintptr_t)e->kvs;
  if (e->n_kvs > 0) {
    if (kvs < lo || kvs > end || kvs % _Alignof(hop_kv) != 0 ||
        (end - kvs) / sizeof(hop_kv) < e->n_kvs)
      return 0;
    hop_kv *kv = (hop_kv *)(base + kvs);
    for (size_t i = 0; i < e->n_kvs; i++)
      if (!restore(base, &kv[i].key, lo, end) || !restore(base, &kv[i].str_value, lo, end))
        return 0;
    e->kvs = kv;
  } else {
    e->kvs = NULL;
  }
#define X(f) if (!restore(base, &e->f, lo, end)) return 0;
  HOP_STRINGS(X)
#undef X
  return 1;
}

const event_record *event_block_next(event_block *b, uint32_t *at,
                                     const hop_event **ev) {
  unsigned char *base = (unsigned char *)b;
  if (*at < FIRST_RECORD)
    *at = (uint32_t)FIRST_RECORD;
  if (*at >= b->used || b->used - *at < sizeof(event_record))
    return NULL;
  event_record *r = (event_record *)(base + *at);
  size_t start = *at;
  if (r->size < sizeof(*r) || r->size > b->used - start || r->size % 16 != 0)
    return NULL;
  size_t end = start + r->size;
  if (r->type == EVENT_RECORD_EVENT || r->type == EVENT_RECORD_DISCARDED) {
    size_t lo = start + sizeof(*r) + sizeof(hop_event);
    if (r->size < sizeof(*r) + sizeof(hop_event) + 1 || base[end - 1] != 0)
      return NULL;
    hop_event *e = (hop_event *)(r + 1);
    if (!restore_event(base, e, lo, end))
      return NULL;
    *ev = e;
  } else {
    return NULL;
  }
  *at = (uint32_t)end;
  return r;
}
