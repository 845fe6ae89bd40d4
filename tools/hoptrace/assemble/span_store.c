/* Span and trace memory: a bump allocator per trace over pooled chunks,
 * and the per-event updates of a span. Events' strings are borrowed:
 * names are kept once in the name table, other text is copied into the
 * trace. */
#include "assemble/span_store.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/chunk_pool.h"
#include "read/limits.h"

span_mem *span_mem_new(void) {
  span_mem *mem = calloc(1, sizeof(*mem));
  if (mem == NULL)
    return NULL;
  mem->chunks = chunk_pool_new();
  mem->names = name_table_new();
  if (mem->chunks == NULL || mem->names == NULL) {
    span_mem_free(mem);
    return NULL;
  }
  return mem;
}

void span_mem_free(span_mem *mem) {
  if (mem == NULL)
    return;
  chunk_pool_free(mem->chunks);
  name_table_free(mem->names);
  free(mem);
}

void *trace_alloc(span_mem *mem, trace *t, size_t size) {
  size = (size + 15) & ~(size_t)15;
  trace_chunk *c = t->chunks;
  if (c == NULL || c->cap - c->used < size) {
    trace_chunk *fresh = chunk_get(mem->chunks, size);
    if (fresh == NULL)
      return NULL;
    fresh->next = c;
    t->chunks = c = fresh;
  }
  void *p = c->data + c->used;
  c->used += size;
  return p;
}

/* The first n bytes of s, copied in the trace. */
static char *copy_n(span_mem *mem, trace *t, const char *s, size_t n) {
  char *copy = trace_alloc(mem, t, n + 1);
  if (copy != NULL) {
    memcpy(copy, s, n);
    copy[n] = '\0';
  }
  return copy;
}

/* A copy in the trace, of at most ht_limits.string_bytes (cut where a
 * UTF-8 sequence starts, counted on the trace and the run). */
static char *copy_str(span_mem *mem, trace *t, const char *s) {
  size_t n = strnlen(s, ht_limits.string_bytes + 1);
  if (n > ht_limits.string_bytes) {
    n = ht_limits.string_bytes;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
      n--;
    ht_drops.strings++;
    t->strings_cut++;
  }
  return copy_n(mem, t, s, n);
}

/* Names shared by every span (name_table.h); a copy in the trace when
 * the table declines. */
static const char *share_str(span_mem *mem, trace *t, const char *s) {
  if (strnlen(s, ht_limits.string_bytes + 1) > ht_limits.string_bytes)
    return copy_str(mem, t, s); /* cut there */
  const char *shared = name_table_get(mem->names, s);
  return shared != NULL ? shared : copy_str(mem, t, s);
}

/* Grows an array held in the trace's chunks (the old space is left):
 * from `first` elements, then doubling. */
static void *grow_array(span_mem *mem, trace *t, void *old, size_t n, size_t *cap,
                        size_t first, size_t elem) {
  size_t cap2 = n ? n * 2 : first;
  void *fresh = trace_alloc(mem, t, cap2 * elem);
  if (fresh == NULL)
    return NULL;
  if (old != NULL)
    memcpy(fresh, old, n * elem);
  *cap = cap2;
  return fresh;
}

/* grow_array for a span's annotations and tags (32-bit counts): two to
 * start, as a hop's span has its send and receive annotations. */
static void *grow_span_array(span_mem *mem, trace *t, void *old, uint32_t n, uint32_t *cap,
                             size_t elem) {
  size_t grown;
  if (n == UINT32_MAX)
    return NULL;
  void *fresh = grow_array(mem, t, old, n, &grown, 2, elem);
  if (fresh != NULL)
    *cap = grown > UINT32_MAX ? UINT32_MAX : (uint32_t)grown;
  return fresh;
}

int64_t span_annotation_ns(const span *s, const char *value) {
  for (size_t i = 0; i < s->n_annotations; i++)
    if (strcmp(s->annotations[i].value, value) == 0)
      return s->annotations[i].ts_ns;
  return 0;
}

trace *trace_new(span_mem *mem, uint64_t hi, uint64_t lo) {
  trace_chunk *c = chunk_get(mem->chunks, sizeof(trace));
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

void trace_free(span_mem *mem, trace *t) {
  if (t == NULL)
    return;
  trace_chunk *c = t->chunks; /* t itself lives in the last chunk */
  while (c != NULL) {
    trace_chunk *next = c->next;
    chunk_put(mem->chunks, c);
    c = next;
  }
}

span *trace_add_span(span_mem *mem, trace *t, uint64_t id, uint64_t parent_id) {
  if (t->n_spans == t->cap_spans) {
    span **grown = grow_array(mem, t, t->spans, t->n_spans, &t->cap_spans, 4, sizeof(span *));
    if (grown == NULL)
      return NULL;
    t->spans = grown;
  }
  span *s = trace_alloc(mem, t, sizeof(*s));
  if (s == NULL)
    return NULL;
  memset(s, 0, sizeof(*s));
  s->id = id;
  s->parent_id = parent_id;
  s->vpid = s->vtid = -1;
  s->clock_bound_ns = -1;
  t->spans[t->n_spans++] = s;
  return s;
}

/* Sets *field to a copy of value (shared: a name) unless value is empty
 * or unchanged. */
static int set_str(span_mem *mem, trace *t, const char **field,
                   const char *value, bool shared) {
  if (value == NULL || value[0] == '\0' || (*field != NULL && strcmp(*field, value) == 0))
    return 0;
  const char *copy = shared ? share_str(mem, t, value) : copy_str(mem, t, value);
  if (copy == NULL)
    return -1;
  *field = copy;
  return 0;
}

static int add_annotation(span_mem *mem, trace *t, span *s, int64_t ts, const char *value) {
  if (s->n_annotations == s->cap_annotations) {
    annotation *grown = grow_span_array(mem, t, s->annotations, s->n_annotations,
                                        &s->cap_annotations, sizeof(annotation));
    if (grown == NULL)
      return -1;
    s->annotations = grown;
  }
  const char *copy = share_str(mem, t, value ? value : "");
  if (copy == NULL)
    return -1;
  s->annotations[s->n_annotations++] = (annotation){ts, copy};
  return 0;
}

static int add_tag(span_mem *mem, trace *t, span *s, const char *key, bool is_int,
                   int64_t int_value, const char *str_value) {
  if (s->n_tags == s->cap_tags) {
    tag *grown = grow_span_array(mem, t, s->tags, s->n_tags, &s->cap_tags, sizeof(tag));
    if (grown == NULL)
      return -1;
    s->tags = grown;
  }
  tag g = {share_str(mem, t, key ? key : ""), is_int, int_value,
           is_int ? NULL : copy_str(mem, t, str_value ? str_value : "")};
  if (g.key == NULL || (!is_int && g.str_value == NULL))
    return -1;
  s->tags[s->n_tags++] = g;
  return 0;
}

const char *trace_str(span_mem *mem, trace *t, const char *s) {
  return share_str(mem, t, s != NULL ? s : "");
}

int span_add_tag(span_mem *mem, trace *t, span *s, const char *key, bool is_int,
                 int64_t int_value, const char *str_value) {
  /* the assembler's own texts, not input: whole whatever --max-string
   * (a flag's key cut short is no flag) */
  const char *value = str_value != NULL ? str_value : "";
  const char *shared = name_table_get(mem->names, key);
  const char *k = shared != NULL ? shared : copy_n(mem, t, key, strlen(key));
  const char *v = is_int ? NULL : copy_n(mem, t, value, strlen(value));
  if (k == NULL || (!is_int && v == NULL) || add_tag(mem, t, s, "", true, 0, NULL) != 0)
    return -1;
  s->tags[s->n_tags - 1] = (tag){k, is_int, int_value, v};
  return 0;
}

static int apply_context(span_mem *mem, trace *t, span *s, const hop_event *ev) {
  if (s->vpid < 0 && ev->vpid >= 0) { /* Linux ids fit 32 bits; clamp a corrupt one */
    s->vpid = ev->vpid > INT32_MAX ? INT32_MAX : (int32_t)ev->vpid;
    s->vtid = ev->vtid > INT32_MAX ? INT32_MAX : ev->vtid < -1 ? -1 : (int32_t)ev->vtid;
  }
  if (s->procname == NULL && set_str(mem, t, &s->procname, ev->procname, true) != 0)
    return -1;
  if (s->hostname == NULL && set_str(mem, t, &s->hostname, ev->hostname, true) != 0)
    return -1;
  return 0;
}

static int apply_start(span_mem *mem, trace *t, span *s, const hop_event *ev) {
  s->started = true;
  s->start_ns = ev->ts_ns;
  s->kind = (int8_t)(ev->span_kind >= INT8_MIN && ev->span_kind <= INT8_MAX ? ev->span_kind : -1);
  s->flags = ev->flags;
  s->parent_id = ev->parent_id;
  if (set_str(mem, t, &s->name, ev->name, true) || set_str(mem, t, &s->service, ev->service, true) ||
      set_str(mem, t, &s->endpoint, ev->endpoint, true))
    return -1;
  return 0;
}

static void apply_end(span *s, const hop_event *ev) {
  s->ended = true;
  s->end_ns = ev->ts_ns;
  if (ev->status != 0)
    s->status = ev->status;
}

/* A message, and the annotation a folded event carries with it. The
 * message's type, sequence and size are not kept: no output shows them. */
static int apply_hop(span_mem *mem, trace *t, span *s, const hop_event *ev,
                     const char *annotation) {
  if (annotation != NULL && annotation[0] != '\0' &&
      add_annotation(mem, t, s, ev->ts_ns, annotation) != 0)
    return -1;
  return set_str(mem, t, &s->peer, ev->peer, true);
}

/* Annotations by time: a span side's start annotation and marks arrive
 * with its end, after the annotations (notes) recorded while it ran. */
static void sort_annotations(span *s) {
  for (size_t i = 1; i < s->n_annotations; i++) {
    annotation a = s->annotations[i];
    size_t j = i;
    for (; j > 0 && s->annotations[j - 1].ts_ns > a.ts_ns; j--)
      s->annotations[j] = s->annotations[j - 1];
    s->annotations[j] = a;
  }
}

static const char *const mark_names[4] = {"cs", "sr", "ss", "cr"};

/* A whole span side (schema 2): start, frames, marks, end. */
static int apply_side(span_mem *mem, trace *t, span *s, const hop_event *ev) {
  if (ev->named_apart) { /* kind and names came with its HOP_SPAN_NAMES */
    s->started = true;
    s->flags = ev->flags;
    s->parent_id = ev->parent_id;
  } else if (apply_start(mem, t, s, ev) != 0) {
    return -1;
  }
  s->start_ns = ev->start_ns;
  if (ev->root_prob != 0 && !trace_root_prob_invalid(t)) /* an impossible p stays flagged */
    t->root_prob = ev->root_prob;
  if (ev->annotation != NULL && ev->annotation[0] != '\0' &&
      add_annotation(mem, t, s, ev->start_ns, ev->annotation) != 0)
    return -1;
  for (int k = 0; k < 4; k++)
    if (ev->marks_ns[k] != 0 &&
        add_annotation(mem, t, s, ev->marks_ns[k], mark_names[k]) != 0)
      return -1;
  if (ev->key != NULL && add_tag(mem, t, s, ev->key, true, ev->int_value, NULL) != 0)
    return -1; /* a span_k's key-value */
  hop_event at_end = *ev; /* a span_r's end is not its event's time */
  if (ev->end_ns != 0)
    at_end.ts_ns = ev->end_ns;
  apply_end(s, &at_end);
  if (apply_hop(mem, t, s, &at_end, ev->end_annotation) != 0)
    return -1;
  /* its start's annotation and marks came after the notes it wrote */
  sort_annotations(s);
  return 0;
}

int span_apply_event(span_mem *mem, trace *t, span *s, const hop_event *ev) {
  if (apply_context(mem, t, s, ev) != 0)
    return -1;
  switch (ev->kind) {
  case HOP_SPAN_START:
    return apply_start(mem, t, s, ev);
  case HOP_SPAN_END:
    apply_end(s, ev);
    return 0;
  case HOP_SPAN_START_SEND:
  case HOP_SPAN_START_RECV:
    /* one event for a span_start, an annotation and a message */
    if (apply_start(mem, t, s, ev) != 0)
      return -1;
    return apply_hop(mem, t, s, ev, ev->annotation);
  case HOP_SPAN_END_SEND:
  case HOP_SPAN_END_RECV:
    apply_end(s, ev);
    return apply_hop(mem, t, s, ev, ev->annotation);
  case HOP_ANNOTATION:
    return add_annotation(mem, t, s, ev->ts_ns, ev->name);
  case HOP_KV_STR:
    return add_tag(mem, t, s, ev->key, false, 0, ev->str_value);
  case HOP_KV_INT:
    return add_tag(mem, t, s, ev->key, true, ev->int_value, NULL);
  case HOP_KVS:
    for (size_t i = 0; i < ev->n_kvs; i++)
      if (add_tag(mem, t, s, ev->kvs[i].key, ev->kvs[i].is_int, ev->kvs[i].int_value,
                  ev->kvs[i].str_value) != 0)
        return -1;
    return 0;
  case HOP_STATUS:
    s->status = ev->status;
    return set_str(mem, t, &s->status_message, ev->message, false);
  case HOP_MSG_SEND:
  case HOP_MSG_RECV:
    return apply_hop(mem, t, s, ev, NULL);
  case HOP_SPAN_SIDE: /* a start, an end and their frames in one */
    return apply_side(mem, t, s, ev);
  case HOP_SPAN_NAMES: /* a span API span's start, names not interned */
    return apply_start(mem, t, s, ev);
  case HOP_PROCESS:
  case HOP_DESC:
  case HOP_PEER:
    return 0; /* tables: read/names.h keeps them, they never get here */
  case HOP_CAPTURE:
  case HOP_MALFORMED:
    return 0; /* the trace's, not a span's: assemble.c keeps it */
  case HOP_HOP_SEND:
  case HOP_HOP_RECV:
    /* one event for an annotation and a message: both, as if apart */
    return apply_hop(mem, t, s, ev, ev->name);
  }
  return 0;
}
