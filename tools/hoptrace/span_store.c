/* Span and trace memory: creation, the per-event updates, and freeing.
 * Every string is copied (events' strings are borrowed). */
#include "span_store.h"

#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s != NULL ? strdup(s) : NULL; }

static void replace(char **field, const char *value) {
  if (value == NULL || value[0] == '\0' ||
      (*field != NULL && strcmp(*field, value) == 0))
    return;
  free(*field);
  *field = strdup(value);
}

int64_t span_annotation_ns(const span *s, const char *value) {
  for (size_t i = 0; i < s->n_annotations; i++)
    if (strcmp(s->annotations[i].value, value) == 0)
      return s->annotations[i].ts_ns;
  return 0;
}

trace *trace_new(uint64_t hi, uint64_t lo) {
  trace *t = calloc(1, sizeof(*t));
  if (t != NULL) {
    t->trace_hi = hi;
    t->trace_lo = lo;
  }
  return t;
}

span *trace_add_span(trace *t, uint64_t id, uint64_t parent_id) {
  if (t->n_spans == t->cap_spans) {
    size_t cap = t->cap_spans ? t->cap_spans * 2 : 4;
    span **grown = realloc(t->spans, cap * sizeof(*grown));
    if (grown == NULL)
      return NULL;
    t->spans = grown;
    t->cap_spans = cap;
  }
  span *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return NULL;
  s->id = id;
  s->parent_id = parent_id;
  s->vpid = s->vtid = -1;
  t->spans[t->n_spans++] = s;
  return s;
}

static void free_span(span *s) {
  free(s->name);
  free(s->service);
  free(s->endpoint);
  free(s->peer);
  free(s->procname);
  free(s->hostname);
  free(s->status_message);
  for (size_t i = 0; i < s->n_annotations; i++)
    free(s->annotations[i].value);
  free(s->annotations);
  for (size_t i = 0; i < s->n_tags; i++) {
    free(s->tags[i].key);
    free(s->tags[i].str_value);
  }
  free(s->tags);
  free(s->children);
  free(s);
}

void trace_free(trace *t) {
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->n_spans; i++)
    free_span(t->spans[i]);
  free(t->spans);
  free(t->roots);
  free(t);
}

int span_add_annotation(span *s, int64_t ts_ns, const char *value) {
  if (s->n_annotations == s->cap_annotations) {
    size_t cap = s->cap_annotations ? s->cap_annotations * 2 : 4;
    annotation *grown = realloc(s->annotations, cap * sizeof(*grown));
    if (grown == NULL)
      return -1;
    s->annotations = grown;
    s->cap_annotations = cap;
  }
  char *copy = strdup(value);
  if (copy == NULL)
    return -1;
  s->annotations[s->n_annotations++] = (annotation){ts_ns, copy};
  return 0;
}

int span_add_tag(span *s, const char *key, bool is_int, int64_t int_value,
                 const char *str_value) {
  if (s->n_tags == s->cap_tags) {
    size_t cap = s->cap_tags ? s->cap_tags * 2 : 4;
    tag *grown = realloc(s->tags, cap * sizeof(*grown));
    if (grown == NULL)
      return -1;
    s->tags = grown;
    s->cap_tags = cap;
  }
  tag t = {strdup(key), is_int, int_value, is_int ? NULL : dup_or_null(str_value)};
  if (t.key == NULL || (!is_int && t.str_value == NULL)) {
    free(t.key);
    free(t.str_value);
    return -1;
  }
  s->tags[s->n_tags++] = t;
  return 0;
}

int span_apply_event(span *s, const hop_event *ev) {
  if (s->vpid < 0 && ev->vpid >= 0) {
    s->vpid = ev->vpid;
    s->vtid = ev->vtid;
  }
  if (s->procname == NULL && ev->procname != NULL && ev->procname[0])
    s->procname = strdup(ev->procname);
  if (s->hostname == NULL && ev->hostname != NULL && ev->hostname[0])
    s->hostname = strdup(ev->hostname);
  switch (ev->kind) {
  case HOP_SPAN_START:
    s->started = true;
    s->start_ns = ev->ts_ns;
    s->kind = ev->span_kind;
    s->flags = ev->flags;
    s->parent_id = ev->parent_id;
    replace(&s->name, ev->name);
    replace(&s->service, ev->service);
    replace(&s->endpoint, ev->endpoint);
    return 0;
  case HOP_SPAN_END:
    s->ended = true;
    s->end_ns = ev->ts_ns;
    if (ev->status != 0)
      s->status = ev->status;
    return 0;
  case HOP_ANNOTATION:
    return span_add_annotation(s, ev->ts_ns, ev->name);
  case HOP_KV_STR:
    return span_add_tag(s, ev->key, false, 0, ev->str_value);
  case HOP_KV_INT:
    return span_add_tag(s, ev->key, true, ev->int_value, NULL);
  case HOP_KVS:
    for (size_t i = 0; i < ev->n_kvs; i++)
      if (span_add_tag(s, ev->kvs[i].key, ev->kvs[i].is_int,
                       ev->kvs[i].int_value, ev->kvs[i].str_value) != 0)
        return -1;
    return 0;
  case HOP_STATUS:
    s->status = ev->status;
    replace(&s->status_message, ev->message);
    return 0;
  case HOP_MSG_SEND:
  case HOP_MSG_RECV:
    if (ev->kind == HOP_MSG_SEND) {
      s->msgs_sent++;
      s->bytes_sent += ev->size;
    } else {
      s->msgs_received++;
      s->bytes_received += ev->size;
    }
    if (ev->peer != NULL && ev->peer[0])
      replace(&s->peer, ev->peer);
    return 0;
  }
  return 0;
}
