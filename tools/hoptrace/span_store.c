/* Span and trace memory: a bump allocator per trace over pooled chunks,
 * and the per-event updates of a span. Every string of an event is
 * copied (events' strings are borrowed). */
#include "span_store.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES 4096u
#define POOL_KEEP 4096u /* chunks kept for reuse (16 MiB) */

struct trace_chunk {
  trace_chunk *next;
  size_t cap, used;
  _Alignas(16) unsigned char data[];
};

struct chunk_pool {
  trace_chunk *free;
  size_t n_free;
};

chunk_pool *chunk_pool_new(void) { return calloc(1, sizeof(chunk_pool)); }

void chunk_pool_free(chunk_pool *pool) {
  if (pool == NULL)
    return;
  while (pool->free) {
    trace_chunk *next = pool->free->next;
    free(pool->free);
    pool->free = next;
  }
  free(pool);
}

static trace_chunk *chunk_get(chunk_pool *pool, size_t need) {
  trace_chunk *c;
  if (need <= CHUNK_BYTES && pool->free != NULL) {
    c = pool->free;
    pool->free = c->next;
    pool->n_free--;
  } else {
    size_t cap = need > CHUNK_BYTES ? need : CHUNK_BYTES;
    c = malloc(sizeof(*c) + cap);
    if (c == NULL)
      return NULL;
    c->cap = cap;
  }
  c->used = 0;
  c->next = NULL;
  return c;
}

static void chunk_put(chunk_pool *pool, trace_chunk *c) {
  if (c->cap == CHUNK_BYTES && pool->n_free < POOL_KEEP) {
    c->next = pool->free;
    pool->free = c;
    pool->n_free++;
  } else {
    free(c);
  }
}

void *trace_alloc(chunk_pool *pool, trace *t, size_t size) {
  size = (size + 15) & ~(size_t)15;
  trace_chunk *c = t->chunks;
  if (c == NULL || c->cap - c->used < size) {
    trace_chunk *fresh = chunk_get(pool, size);
    if (fresh == NULL)
      return NULL;
    fresh->next = c;
    t->chunks = c = fresh;
  }
  void *p = c->data + c->used;
  c->used += size;
  return p;
}

static char *copy_str(chunk_pool *pool, trace *t, const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = trace_alloc(pool, t, n);
  if (copy != NULL)
    memcpy(copy, s, n);
  return copy;
}

/* Grows an array held in the trace's chunks (the old space is left). */
static void *grow_array(chunk_pool *pool, trace *t, void *old, size_t *cap,
                        size_t elem) {
  size_t cap2 = *cap ? *cap * 2 : 4;
  void *fresh = trace_alloc(pool, t, cap2 * elem);
  if (fresh == NULL)
    return NULL;
  if (old != NULL)
    memcpy(fresh, old, *cap * elem);
  *cap = cap2;
  return fresh;
}

int64_t span_annotation_ns(const span *s, const char *value) {
  for (size_t i = 0; i < s->n_annotations; i++)
    if (strcmp(s->annotations[i].value, value) == 0)
      return s->annotations[i].ts_ns;
  return 0;
}

trace *trace_new(chunk_pool *pool, uint64_t hi, uint64_t lo) {
  trace_chunk *c = chunk_get(pool, sizeof(trace));
  if (c == NULL)
    return NULL;
  trace *t = (trace *)c->data;
  memset(t, 0, sizeof(*t));
  c->used = (sizeof(trace) + 15) & ~(size_t)15;
  t->chunks = c;
  t->trace_hi = hi;
  t->trace_lo = lo;
  return t;
}

void trace_free(chunk_pool *pool, trace *t) {
  if (t == NULL)
    return;
  trace_chunk *c = t->chunks; /* t itself lives in the last chunk */
  while (c != NULL) {
    trace_chunk *next = c->next;
    chunk_put(pool, c);
    c = next;
  }
}

span *trace_add_span(chunk_pool *pool, trace *t, uint64_t id, uint64_t parent_id) {
  if (t->n_spans == t->cap_spans) {
    span **grown = grow_array(pool, t, t->spans, &t->cap_spans, sizeof(span *));
    if (grown == NULL)
      return NULL;
    t->spans = grown;
  }
  span *s = trace_alloc(pool, t, sizeof(*s));
  if (s == NULL)
    return NULL;
  memset(s, 0, sizeof(*s));
  s->id = id;
  s->parent_id = parent_id;
  s->vpid = s->vtid = -1;
  t->spans[t->n_spans++] = s;
  return s;
}

/* Sets *field to a copy of value unless value is empty or unchanged. */
static int set_str(chunk_pool *pool, trace *t, char **field, const char *value) {
  if (value == NULL || value[0] == '\0' || (*field != NULL && strcmp(*field, value) == 0))
    return 0;
  char *copy = copy_str(pool, t, value);
  if (copy == NULL)
    return -1;
  *field = copy;
  return 0;
}

static int add_annotation(chunk_pool *pool, trace *t, span *s, int64_t ts, const char *value) {
  if (s->n_annotations == s->cap_annotations) {
    annotation *grown = grow_array(pool, t, s->annotations, &s->cap_annotations,
                                   sizeof(annotation));
    if (grown == NULL)
      return -1;
    s->annotations = grown;
  }
  char *copy = copy_str(pool, t, value ? value : "");
  if (copy == NULL)
    return -1;
  s->annotations[s->n_annotations++] = (annotation){ts, copy};
  return 0;
}

static int add_tag(chunk_pool *pool, trace *t, span *s, const char *key, bool is_int,
                   int64_t int_value, const char *str_value) {
  if (s->n_tags == s->cap_tags) {
    tag *grown = grow_array(pool, t, s->tags, &s->cap_tags, sizeof(tag));
    if (grown == NULL)
      return -1;
    s->tags = grown;
  }
  tag g = {copy_str(pool, t, key ? key : ""), is_int, int_value,
           is_int ? NULL : copy_str(pool, t, str_value ? str_value : "")};
  if (g.key == NULL || (!is_int && g.str_value == NULL))
    return -1;
  s->tags[s->n_tags++] = g;
  return 0;
}

static int apply_context(chunk_pool *pool, trace *t, span *s, const hop_event *ev) {
  if (s->vpid < 0 && ev->vpid >= 0) {
    s->vpid = ev->vpid;
    s->vtid = ev->vtid;
  }
  if (s->procname == NULL && set_str(pool, t, &s->procname, ev->procname) != 0)
    return -1;
  if (s->hostname == NULL && set_str(pool, t, &s->hostname, ev->hostname) != 0)
    return -1;
  return 0;
}

static int apply_start(chunk_pool *pool, trace *t, span *s, const hop_event *ev) {
  s->started = true;
  s->start_ns = ev->ts_ns;
  s->kind = ev->span_kind;
  s->flags = ev->flags;
  s->parent_id = ev->parent_id;
  if (set_str(pool, t, &s->name, ev->name) || set_str(pool, t, &s->service, ev->service) ||
      set_str(pool, t, &s->endpoint, ev->endpoint))
    return -1;
  return 0;
}

static void apply_end(span *s, const hop_event *ev) {
  s->ended = true;
  s->end_ns = ev->ts_ns;
  if (ev->status != 0)
    s->status = ev->status;
}

/* A message, and the annotation a folded event carries with it. */
static int apply_hop(chunk_pool *pool, trace *t, span *s, const hop_event *ev,
                     bool sent, const char *annotation) {
  if (annotation != NULL && annotation[0] != '\0' &&
      add_annotation(pool, t, s, ev->ts_ns, annotation) != 0)
    return -1;
  if (sent) {
    s->msgs_sent++;
    s->bytes_sent += ev->size;
  } else {
    s->msgs_received++;
    s->bytes_received += ev->size;
  }
  return set_str(pool, t, &s->peer, ev->peer);
}

int span_apply_event(chunk_pool *pool, trace *t, span *s, const hop_event *ev) {
  if (apply_context(pool, t, s, ev) != 0)
    return -1;
  switch (ev->kind) {
  case HOP_SPAN_START:
    return apply_start(pool, t, s, ev);
  case HOP_SPAN_END:
    apply_end(s, ev);
    return 0;
  case HOP_SPAN_START_SEND:
  case HOP_SPAN_START_RECV:
    /* one event for a span_start, an annotation and a message */
    if (apply_start(pool, t, s, ev) != 0)
      return -1;
    return apply_hop(pool, t, s, ev, ev->kind == HOP_SPAN_START_SEND, ev->annotation);
  case HOP_SPAN_END_SEND:
  case HOP_SPAN_END_RECV:
    apply_end(s, ev);
    return apply_hop(pool, t, s, ev, ev->kind == HOP_SPAN_END_SEND, ev->annotation);
  case HOP_ANNOTATION:
    return add_annotation(pool, t, s, ev->ts_ns, ev->name);
  case HOP_KV_STR:
    return add_tag(pool, t, s, ev->key, false, 0, ev->str_value);
  case HOP_KV_INT:
    return add_tag(pool, t, s, ev->key, true, ev->int_value, NULL);
  case HOP_KVS:
    for (size_t i = 0; i < ev->n_kvs; i++)
      if (add_tag(pool, t, s, ev->kvs[i].key, ev->kvs[i].is_int, ev->kvs[i].int_value,
                  ev->kvs[i].str_value) != 0)
        return -1;
    return 0;
  case HOP_STATUS:
    s->status = ev->status;
    return set_str(pool, t, &s->status_message, ev->message);
  case HOP_MSG_SEND:
  case HOP_MSG_RECV:
    return apply_hop(pool, t, s, ev, ev->kind == HOP_MSG_SEND, NULL);
  case HOP_HOP_SEND:
  case HOP_HOP_RECV:
    /* one event for an annotation and a message: both, as if apart */
    return apply_hop(pool, t, s, ev, ev->kind == HOP_HOP_SEND, ev->name);
  }
  return 0;
}
