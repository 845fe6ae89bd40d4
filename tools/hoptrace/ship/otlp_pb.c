/* OTLP protobuf encoding of a batch (otlp_pb.h). Spans become
 * protobuf-c structs in the batch's arena; resources are found by
 * otlp_map's identity; pb_batch_take lays the request out and packs it. */
#include "ship/otlp_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp.pb-c.h"
#include "output/otlp_map.h"
#include "output/utf8.h"
#include "ship/arena.h"
#include "util/grow.h"

typedef Hoptrace__Otlp__KeyValue pb_kv;
typedef Hoptrace__Otlp__Span pb_span;

typedef struct resource_group {
  span ident;        /* service, host, process: copies in the arena */
  uint64_t hash;
  Hoptrace__Otlp__Resource *resource;
  size_t n_spans;
} resource_group;

struct pb_batch {
  arena mem;
  pb_span **spans;
  size_t *group_of;
  size_t n_spans, cap_spans;
  resource_group *groups;
  size_t n_groups, cap_groups;
  pb_kv **scratch; /* one span's attributes while it is mapped */
  size_t n_scratch, cap_scratch;
  int failed;
  uint64_t replaced; /* invalid UTF-8 sequences written as U+FFFD */
};

pb_batch *pb_batch_new(void) { return calloc(1, sizeof(pb_batch)); }

void pb_batch_free(pb_batch *b) {
  if (b == NULL)
    return;
  arena_reset(&b->mem);
  free(b->spans);
  free(b->group_of);
  free(b->groups);
  free(b->scratch);
  free(b);
}

/* A trace's string as a `string` field wants it: valid UTF-8 (a strict
 * decoder refuses the whole request for one bad byte). */
static char *pb_str(pb_batch *b, const char *s) {
  size_t bad = utf8_invalid(s);
  if (bad == 0)
    return arena_strdup(&b->mem, s);
  char *d = arena_alloc(&b->mem, strlen(s) + 2 * bad + 1);
  if (d != NULL) {
    utf8_repair(d, s);
    b->replaced += bad;
  }
  return d;
}

static void collect_attr(void *arg, const otlp_attr *a) {
  pb_batch *b = arg;
  if (ht_grow(&b->scratch, &b->cap_scratch, b->n_scratch + 1, sizeof(pb_kv *), 32) != 0) {
    b->failed = 1;
    return;
  }
  pb_kv *kv = arena_alloc(&b->mem, sizeof(*kv));
  Hoptrace__Otlp__AnyValue *v = arena_alloc(&b->mem, sizeof(*v));
  if (kv == NULL || v == NULL) {
    b->failed = 1;
    return;
  }
  hoptrace__otlp__key_value__init(kv);
  hoptrace__otlp__any_value__init(v);
  if ((kv->key = pb_str(b, a->key)) == NULL)
    b->failed = 1;
  if (a->is_int) {
    v->value_case = HOPTRACE__OTLP__ANY_VALUE__VALUE_INT_VALUE;
    v->int_value = a->int_value;
  } else {
    v->value_case = HOPTRACE__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
    if ((v->string_value = pb_str(b, a->str_value ? a->str_value : "")) == NULL)
      b->failed = 1;
  }
  kv->value = v;
  b->scratch[b->n_scratch++] = kv;
}

/* The attributes collected so far, as an arena array. */
static pb_kv **take_attrs(pb_batch *b, size_t *n) {
  *n = b->n_scratch;
  pb_kv **out = arena_alloc(&b->mem, (b->n_scratch ? b->n_scratch : 1) * sizeof(*out));
  if (out == NULL)
    b->failed = 1;
  else
    memcpy(out, b->scratch, b->n_scratch * sizeof(*out));
  b->n_scratch = 0;
  return out;
}

static ProtobufCBinaryData id_bytes(pb_batch *b, uint64_t hi, uint64_t lo, size_t len) {
  ProtobufCBinaryData d = {0, NULL};
  uint8_t *p = arena_alloc(&b->mem, len);
  if (p == NULL) {
    b->failed = 1;
    return d;
  }
  for (size_t i = 0; i < 8; i++) { /* big endian: the hex the JSON shows */
    if (len == 16)
      p[i] = (uint8_t)(hi >> (56 - 8 * i));
    p[len - 8 + i] = (uint8_t)(lo >> (56 - 8 * i));
  }
  d.data = p;
  d.len = len;
  return d;
}

static long find_group(pb_batch *b, const span *s) {
  uint64_t h = otlp_resource_hash(s);
  for (size_t i = 0; i < b->n_groups; i++)
    if (b->groups[i].hash == h && otlp_same_resource(&b->groups[i].ident, s))
      return (long)i;
  if (ht_grow(&b->groups, &b->cap_groups, b->n_groups + 1, sizeof(resource_group), 8) != 0)
    return -1;
  resource_group *g = &b->groups[b->n_groups];
  memset(g, 0, sizeof(*g));
  g->hash = h;
  g->ident.vpid = s->vpid;
  g->ident.service = arena_strdup(&b->mem, s->service);
  g->ident.hostname = arena_strdup(&b->mem, s->hostname);
  g->ident.procname = arena_strdup(&b->mem, s->procname);
  g->resource = arena_alloc(&b->mem, sizeof(*g->resource));
  if (g->resource == NULL)
    return -1;
  hoptrace__otlp__resource__init(g->resource);
  b->n_scratch = 0;
  otlp_resource_attrs(s, collect_attr, b);
  g->resource->attributes = take_attrs(b, &g->resource->n_attributes);
  if (b->failed)
    return -1;
  return (long)b->n_groups++;
}

static pb_span *map_span(pb_batch *b, const trace *t, const span *s) {
  pb_span *p = arena_alloc(&b->mem, sizeof(*p));
  Hoptrace__Otlp__Status *st = arena_alloc(&b->mem, sizeof(*st));
  if (p == NULL || st == NULL)
    return NULL;
  hoptrace__otlp__span__init(p);
  hoptrace__otlp__status__init(st);
  otlp_span_fields f;
  otlp_span_fields_get(s, &f);
  p->trace_id = id_bytes(b, t->trace_hi, t->trace_lo, 16);
  p->span_id = id_bytes(b, 0, s->id, 8);
  if (s->parent_id)
    p->parent_span_id = id_bytes(b, 0, s->parent_id, 8);
  p->name = pb_str(b, s->name ? s->name : "unknown");
  p->kind = f.kind;
  p->start_time_unix_nano = (uint64_t)f.start_ns;
  p->end_time_unix_nano = (uint64_t)f.end_ns;
  b->n_scratch = 0;
  otlp_span_attrs(t, s, collect_attr, b);
  p->attributes = take_attrs(b, &p->n_attributes);
  p->events = arena_alloc(&b->mem, (s->n_annotations ? s->n_annotations : 1) * sizeof(*p->events));
  if (p->name == NULL || p->events == NULL)
    return NULL;
  for (size_t i = 0; i < s->n_annotations; i++) {
    Hoptrace__Otlp__Event *e = arena_alloc(&b->mem, sizeof(*e));
    if (e == NULL)
      return NULL;
    hoptrace__otlp__event__init(e);
    e->time_unix_nano = (uint64_t)s->annotations[i].ts_ns;
    if ((e->name = pb_str(b, s->annotations[i].value ? s->annotations[i].value : "")) == NULL)
      return NULL;
    p->events[p->n_events++] = e;
  }
  st->code = f.status_code;
  if (f.status_message && (st->message = pb_str(b, f.status_message)) == NULL)
    return NULL;
  p->status = st;
  return b->failed ? NULL : p;
}

int pb_batch_add(pb_batch *b, const trace *t, const span *s) {
  if (b->n_spans == b->cap_spans) {
    size_t cap = b->cap_spans ? 2 * b->cap_spans : 512;
    pb_span **sp = realloc(b->spans, cap * sizeof(*sp));
    if (sp != NULL)
      b->spans = sp;
    size_t *go = sp ? realloc(b->group_of, cap * sizeof(*go)) : NULL;
    if (go == NULL)
      return -1;
    b->group_of = go;
    b->cap_spans = cap;
  }
  b->failed = 0;
  long g = find_group(b, s);
  pb_span *p = g >= 0 ? map_span(b, t, s) : NULL;
  if (p == NULL)
    return -1; /* what it took stays in the arena until the batch goes */
  b->spans[b->n_spans] = p;
  b->group_of[b->n_spans++] = (size_t)g;
  b->groups[g].n_spans++;
  return 0;
}

size_t pb_batch_spans(const pb_batch *b) { return b->n_spans; }

size_t pb_batch_bytes(const pb_batch *b) { return b->mem.bytes; }

uint64_t pb_batch_replaced(const pb_batch *b) { return b->replaced; }

static uint8_t *pack(pb_batch *b, size_t *len) {
  Hoptrace__Otlp__ExportTraceServiceRequest req = HOPTRACE__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
  Hoptrace__Otlp__InstrumentationScope scope = HOPTRACE__OTLP__INSTRUMENTATION_SCOPE__INIT;
  scope.name = (char *)OTLP_SCOPE_NAME;
  size_t ng = b->n_groups;
  Hoptrace__Otlp__ResourceSpans *rs = calloc(ng ? ng : 1, sizeof(*rs));
  Hoptrace__Otlp__ScopeSpans *ss = calloc(ng ? ng : 1, sizeof(*ss));
  Hoptrace__Otlp__ResourceSpans **rsp = calloc(ng ? ng : 1, sizeof(*rsp));
  Hoptrace__Otlp__ScopeSpans **ssp = calloc(ng ? ng : 1, sizeof(*ssp));
  pb_span **order = calloc(b->n_spans ? b->n_spans : 1, sizeof(*order));
  uint8_t *out = NULL;
  if (rs && ss && rsp && ssp && order) {
    size_t at = 0;
    for (size_t g = 0; g < ng; g++) { /* each group's spans, in batch order */
      hoptrace__otlp__resource_spans__init(&rs[g]);
      hoptrace__otlp__scope_spans__init(&ss[g]);
      ss[g].scope = &scope;
      ss[g].spans = order + at;
      at += b->groups[g].n_spans;
      ssp[g] = &ss[g];
      rs[g].resource = b->groups[g].resource;
      rs[g].n_scope_spans = 1;
      rs[g].scope_spans = &ssp[g];
      rsp[g] = &rs[g];
    }
    for (size_t i = 0; i < b->n_spans; i++) {
      Hoptrace__Otlp__ScopeSpans *s = &ss[b->group_of[i]];
      s->spans[s->n_spans++] = b->spans[i];
    }
    req.n_resource_spans = ng;
    req.resource_spans = rsp;
    *len = hoptrace__otlp__export_trace_service_request__get_packed_size(&req);
    if ((out = malloc(*len ? *len : 1)) != NULL)
      hoptrace__otlp__export_trace_service_request__pack(&req, out);
  }
  free(rs);
  free(ss);
  free(rsp);
  free(ssp);
  free(order);
  return out;
}

uint8_t *pb_batch_take(pb_batch *b, size_t *len) {
  *len = 0;
  uint8_t *out = pack(b, len);
  arena_reset(&b->mem);
  b->n_spans = 0;
  b->n_groups = 0;
  b->replaced = 0;
  return out;
}

int pb_response_parse(const uint8_t *data, size_t len, int64_t *rejected, char *message,
                      size_t cap) {
  *rejected = 0;
  if (cap)
    message[0] = '\0';
  Hoptrace__Otlp__ExportTraceServiceResponse *r =
      hoptrace__otlp__export_trace_service_response__unpack(NULL, len, data);
  if (r == NULL)
    return -1;
  if (r->partial_success != NULL) {
    *rejected = r->partial_success->rejected_spans;
    if (cap && r->partial_success->error_message)
      snprintf(message, cap, "%s", r->partial_success->error_message);
  }
  hoptrace__otlp__export_trace_service_response__free_unpacked(r, NULL);
  return 0;
}
