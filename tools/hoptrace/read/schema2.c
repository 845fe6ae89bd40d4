/* Schema 2 and 3 decoding (schema2.h). Each event's fields are read, in
 * schema order, into the library's own ht_rec_* struct by readers
 * generated from the schema's X-macro lists (the events written, and the
 * read-only ones earlier schemas wrote). Must never: trust a field's type
 * or range, or resolve an id (names.c does, after the merge). */
#include "read/schema2.h"

#include <stdlib.h>
#include <string.h>

#include "hoptrace_schema.h"

#define EVENT_ENUM(event, fields) S2_##event,
enum {
  HT_SCHEMA_EVENTS(EVENT_ENUM) HT_SCHEMA_READ_ONLY_EVENTS(EVENT_ENUM) S2_EVENTS
};
#undef EVENT_ENUM

#define FIELD_NAME(type, name) #name,
#define EVENT_NAMES(event, fields)                                             \
  static const char *const names_##event[] = {fields(FIELD_NAME)};
HT_SCHEMA_EVENTS(EVENT_NAMES)
HT_SCHEMA_READ_ONLY_EVENTS(EVENT_NAMES)
#undef EVENT_NAMES

#define EVENT_DESCR(event, fields)                                             \
  {#event, names_##event, sizeof(names_##event) / sizeof(names_##event[0])},
static const struct {
  const char *name; /* a read-only NAME_v2: event NAME's older layout */
  const char *const *fields;
  size_t n_fields;
} events[S2_EVENTS] = {HT_SCHEMA_EVENTS(EVENT_DESCR)
                           HT_SCHEMA_READ_ONLY_EVENTS(EVENT_DESCR)};
#undef EVENT_DESCR
static const char v2_suffix[] = "_v2";
_Static_assert(sizeof(names_span_s) / sizeof(names_span_s[0]) <= SCHEMA2_MAX_FIELDS,
               "SCHEMA2_MAX_FIELDS holds every event's fields");

/* --- field readers: the value, or -1 for an absent or ill-typed member */

static const bt_field *member(const bt_field *st, int64_t i) {
  return i < 0 ? NULL
               : bt_field_structure_borrow_member_field_by_index_const(st, (uint64_t)i);
}

/* An unsigned integer field's value (a non-negative signed one too). */
static int integer_u64(const bt_field *f, uint64_t *v) {
  bt_field_class_type t = bt_field_get_class_type(f);
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
    *v = bt_field_integer_unsigned_get_value(f);
    return 0;
  }
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER) &&
      bt_field_integer_signed_get_value(f) >= 0) {
    *v = (uint64_t)bt_field_integer_signed_get_value(f);
    return 0;
  }
  return -1;
}

static int read_U64(const bt_field *st, int64_t i, uint64_t *v) {
  const bt_field *f = member(st, i);
  return f == NULL ? -1 : integer_u64(f, v);
}
#define read_X64 read_U64

/* A fixed array of exactly n unsigned integers, each at most max. */
static int read_array(const bt_field *st, int64_t i, uint64_t *v, uint64_t n,
                      uint64_t max) {
  const bt_field *f = member(st, i);
  if (f == NULL || !bt_field_class_type_is(bt_field_get_class_type(f),
                                           BT_FIELD_CLASS_TYPE_ARRAY) ||
      bt_field_array_get_length(f) != n)
    return -1;
  for (uint64_t k = 0; k < n; k++)
    if (integer_u64(bt_field_array_borrow_element_field_by_index_const(f, k), &v[k]) != 0 ||
        v[k] > max)
      return -1;
  return 0;
}

#define ARRAY_READER(type, max, n)                                             \
  static int read_##type##x##n(const bt_field *st, int64_t i, type##_t *v) {   \
    uint64_t u[n];                                                             \
    if (read_array(st, i, u, n, max) != 0)                                     \
      return -1;                                                               \
    for (int k = 0; k < (n); k++)                                              \
      v[k] = (type##_t)u[k];                                                   \
    return 0;                                                                  \
  }
ARRAY_READER(uint64, UINT64_MAX, 4)
ARRAY_READER(uint64, UINT64_MAX, 5)
ARRAY_READER(uint64, UINT64_MAX, 7)
ARRAY_READER(uint64, UINT64_MAX, 12)
ARRAY_READER(uint64, UINT64_MAX, 13)
ARRAY_READER(uint32, UINT32_MAX, 3)
ARRAY_READER(uint32, UINT32_MAX, 4)
#undef ARRAY_READER
#define read_X64x4 read_uint64x4
#define read_X64x5 read_uint64x5
#define read_X64x7 read_uint64x7
#define read_X64x12 read_uint64x12
#define read_X64x13 read_uint64x13
#define read_U64x4 read_uint64x4
#define read_U32x3 read_uint32x3
#define read_U32x4 read_uint32x4

/* What a reader takes: a scalar's address, an array's first element. */
#define FIELD_ADDR_X64(x) &(x)
#define FIELD_ADDR_U64(x) &(x)
#define FIELD_ADDR_U32(x) &(x)
#define FIELD_ADDR_U8(x) &(x)
#define FIELD_ADDR_I32(x) &(x)
#define FIELD_ADDR_I64(x) &(x)
#define FIELD_ADDR_STR(x) &(x)
#define FIELD_ADDR_X64x4(x) (x)
#define FIELD_ADDR_X64x5(x) (x)
#define FIELD_ADDR_X64x7(x) (x)
#define FIELD_ADDR_X64x12(x) (x)
#define FIELD_ADDR_X64x13(x) (x)
#define FIELD_ADDR_U64x4(x) (x)
#define FIELD_ADDR_U32x3(x) (x)
#define FIELD_ADDR_U32x4(x) (x)

static int read_U32(const bt_field *st, int64_t i, uint32_t *v) {
  uint64_t u;
  if (read_U64(st, i, &u) != 0 || u > UINT32_MAX)
    return -1;
  *v = (uint32_t)u;
  return 0;
}

static int read_U8(const bt_field *st, int64_t i, uint8_t *v) {
  uint64_t u;
  if (read_U64(st, i, &u) != 0 || u > UINT8_MAX)
    return -1;
  *v = (uint8_t)u;
  return 0;
}

static int read_I32(const bt_field *st, int64_t i, int32_t *v) {
  const bt_field *f = member(st, i);
  if (f == NULL)
    return -1;
  int64_t s;
  bt_field_class_type t = bt_field_get_class_type(f);
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
    s = bt_field_integer_signed_get_value(f);
  else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER) &&
           bt_field_integer_unsigned_get_value(f) <= INT32_MAX)
    s = (int64_t)bt_field_integer_unsigned_get_value(f);
  else
    return -1;
  if (s < INT32_MIN || s > INT32_MAX)
    return -1;
  *v = (int32_t)s;
  return 0;
}

static int read_I64(const bt_field *st, int64_t i, int64_t *v) {
  const bt_field *f = member(st, i);
  if (f == NULL)
    return -1;
  bt_field_class_type t = bt_field_get_class_type(f);
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
    *v = bt_field_integer_signed_get_value(f);
  else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER) &&
           bt_field_integer_unsigned_get_value(f) <= INT64_MAX)
    *v = (int64_t)bt_field_integer_unsigned_get_value(f);
  else
    return -1;
  return 0;
}

static int read_STR(const bt_field *st, int64_t i, const char **v) {
  const bt_field *f = member(st, i);
  if (f == NULL || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING)
    return -1;
  *v = bt_field_string_get_value(f);
  return 0;
}

#define READ_FIELD(type, name)                                                 \
  if (read_##type(st, m[i++], FIELD_ADDR_##type(r->name)) != 0)                \
    return -1;
#define EVENT_READER(event, fields)                                            \
  static int read_##event(const bt_field *st, const int64_t *m,               \
                          ht_rec_##event *r) {                                 \
    size_t i = 0;                                                              \
    fields(READ_FIELD) return 0;                                               \
  }
HT_SCHEMA_EVENTS(EVENT_READER)
HT_SCHEMA_READ_ONLY_EVENTS(EVENT_READER)
#undef EVENT_READER
#undef READ_FIELD

/* --- decoding */

/* Whether `name` in a trace is event e of the schema: its own name, or
 * for a read-only NAME_v2, NAME. */
static bool names_event(const char *name, int e) {
  const char *own = events[e].name;
  size_t n = strlen(own), v2 = sizeof(v2_suffix) - 1;
  if (n > v2 && strcmp(own + n - v2, v2_suffix) == 0)
    n -= v2;
  return strncmp(name, own, n) == 0 && name[n] == '\0';
}

int schema2_event(const char *name) {
  for (int i = 0; i < S2_EVENTS; i++)
    if (names_event(name, i))
      return i;
  return -1;
}

static void unmapped(int64_t *members) {
  for (size_t i = 0; i < SCHEMA2_MAX_FIELDS; i++)
    members[i] = -1;
}

/* How many of event e's fields the payload holds, mapped into members. */
static size_t map_fields(int e, const bt_field_class *payload, int64_t *members) {
  size_t found = 0;
  unmapped(members);
  uint64_t n = bt_field_class_structure_get_member_count(payload);
  for (uint64_t m = 0; m < n; m++) {
    const char *name = bt_field_class_structure_member_get_name(
        bt_field_class_structure_borrow_member_by_index_const(payload, m));
    for (size_t i = 0; i < events[e].n_fields; i++)
      if (members[i] < 0 && strcmp(name, events[e].fields[i]) == 0) {
        members[i] = (int64_t)m;
        found++;
      }
  }
  return found;
}

int schema2_map(int event, const bt_field_class *payload, int64_t *members) {
  if (payload == NULL ||
      bt_field_class_get_type(payload) != BT_FIELD_CLASS_TYPE_STRUCTURE) {
    unmapped(members);
    return event; /* malformed: decoding says so */
  }
  /* the layout of that name whose fields the payload all holds, the one
   * with the most fields when several do (span_k's current `rec` is in
   * its older layout too); else the current one, as far as it maps
   * (missing fields: malformed, decoding says so) */
  int best = -1;
  for (int e = event; e < S2_EVENTS; e++)
    if ((e == event || names_event(events[event].name, e)) &&
        map_fields(e, payload, members) == events[e].n_fields &&
        (best < 0 || events[e].n_fields > events[best].n_fields))
      best = e;
  best = best >= 0 ? best : event;
  map_fields(best, payload, members);
  return best;
}

/* cycles of the event's clock in ns since the origin; -1 when it cannot
 * be converted (a damaged or hostile value overflows). libbabeltrace2
 * then leaves an error on the thread, which must be cleared: the next
 * bt_graph_run_once() aborts the process otherwise. */
static int clock_ns(const bt_clock_class *clock, uint64_t cycles, int64_t *ns) {
  if (clock == NULL)
    return -1;
  if (bt_clock_class_cycles_to_ns_from_origin(clock, cycles, ns) ==
      BT_CLOCK_CLASS_CYCLES_TO_NS_FROM_ORIGIN_STATUS_OK)
    return 0;
  bt_current_thread_clear_error();
  return -1;
}

/* A mark's time in ns, 0 for cycles 0 ("none"), the event's own time
 * (end_ns, the span's end) for HT_SCHEMA_MARK_AT_END. */
static int mark_ns(const bt_clock_class *clock, uint64_t cycles, int64_t end_ns,
                   int64_t *ns) {
  *ns = cycles == HT_SCHEMA_MARK_AT_END ? end_ns : 0;
  return cycles == 0 || cycles == HT_SCHEMA_MARK_AT_END ? 0 : clock_ns(clock, cycles, ns);
}

/* The ids every event about a span starts with (an `ids` or `at`). */
static void ids(hop_event *out, hop_event_kind kind, const uint64_t *at) {
  out->kind = kind;
  out->trace_hi = at[HT_AT_TRACE_HI];
  out->trace_lo = at[HT_AT_TRACE_LO];
  out->span_id = at[HT_AT_SPAN];
  out->parent_id = at[HT_AT_PARENT];
}

/* The parts every span side has, whichever event carried it (side's
 * words, the status 0 if it has none); -1 when its start is not a time of
 * the event's clock. */
static int side(hop_event *out, const uint64_t *at, const uint32_t *sd,
                size_t n_sd, const bt_clock_class *clock, int64_t ts_ns) {
  uint32_t flags = HT_SIDE_FLAGS_IN(sd[HT_SIDE_VTID_FLAGS]);
  /* a negative status is written as its two's complement */
  int32_t status = n_sd > HT_SIDE_STATUS ? (int32_t)sd[HT_SIDE_STATUS] : 0;
  ids(out, HOP_SPAN_SIDE, at);
  out->desc_id = HT_SIDE_DESC_IN(sd[HT_SIDE_NAMES]);
  out->peer_id = HT_SIDE_PEER_IN(sd[HT_SIDE_NAMES]);
  out->vpid = sd[HT_SIDE_VPID]; /* the event's own, not a context's */
  out->vtid = HT_SIDE_VTID_IN(sd[HT_SIDE_VTID_FLAGS]);
  out->flags = flags & 0x0fu;
  if (flags & HT_SCHEMA_FLAG_ROOT_P) { /* a root: its p, not a parent */
    /* p = 0 is impossible, not unknown: kept apart (model.h) */
    out->root_prob = at[HT_AT_PARENT] != 0 ? at[HT_AT_PARENT] : UINT64_MAX;
    out->parent_id = 0;
  }
  out->status = status;
  out->ts_ns = ts_ns;
  out->frames = (uint8_t)(((flags & HT_SCHEMA_FLAG_START_FRAME) ? 1 : 0) |
                          ((flags & HT_SCHEMA_FLAG_END_FRAME) ? 2 : 0));
  return clock_ns(clock, at[HT_AT_START], &out->start_ns);
}
#define IDS_OF(kind, r) ids(out, (kind), (r).ids)

/* A span side from span's (or span_k's) `rec`: side's words packed in
 * two, then at. */
static int rec_side(hop_event *out, const uint64_t *rec, const bt_clock_class *clock,
                    int64_t ts_ns) {
  uint64_t w0 = rec[HT_REC_NAMES_VPID], w1 = rec[HT_REC_VTID_FLAGS_STATUS];
  uint32_t sd[] = {HT_REC_LOW(w0), HT_REC_HIGH(w0), HT_REC_LOW(w1), HT_REC_HIGH(w1)};
  return side(out, rec + HT_REC_AT, sd, 4, clock, ts_ns);
}

_Static_assert(SCHEMA2_KEY_BYTES == HT_REC_KV_KEY_BYTES, "a span_k key fits the buffer");

/* span_k's key from its words (hoptrace_schema.h: little-endian bytes),
 * into key; false when it is not NUL-terminated within them (hostile or
 * damaged: the event is malformed). */
static bool unpack_key(const uint64_t *w, char *key) {
  for (unsigned i = 0; i < HT_REC_KV_KEY_BYTES; i++)
    if ((key[i] = (char)(w[i / 8] >> 8 * (i % 8))) == '\0')
      return true;
  return false;
}

/* A span side's common part from its `at` and `side` arrays. */
#define SIDE_OF(r)                                                             \
  side(out, (r).at, (r).side, sizeof((r).side) / sizeof((r).side[0]), clock, ts_ns)

int schema2_decode(int event, const int64_t *m, const bt_field *st,
                   const bt_clock_class *clock, int64_t ts_ns, char *key,
                   hop_event *out) {
  out->ts_ns = ts_ns; /* every event's time, tables' too (the merge's key) */
  switch (event) {
  case S2_span: {
    ht_rec_span r;
    return read_span(st, m, &r) != 0 || rec_side(out, r.rec, clock, ts_ns) != 0 ? -1 : 1;
  }
  case S2_span_k: { /* and its one integer key-value, in rec */
    ht_rec_span_k r;
    if (read_span_k(st, m, &r) != 0 || rec_side(out, r.rec, clock, ts_ns) != 0 ||
        !unpack_key(r.rec + HT_REC_KV_KEY, key))
      return -1;
    out->key = key;
    out->int_value = (int64_t)r.rec[HT_REC_KV_VALUE];
    return 1;
  }
  case S2_span_r: { /* span_k's words and the side's end: written after it */
    ht_rec_span_r r;
    int64_t end_ns;
    if (read_span_r(st, m, &r) != 0 || clock_ns(clock, r.rec[HT_REC_R_END], &end_ns) != 0 ||
        rec_side(out, r.rec, clock, ts_ns) != 0 || !unpack_key(r.rec + HT_REC_KV_KEY, key))
      return -1;
    out->end_ns = end_ns != 0 ? end_ns : 1; /* 0 would read as ts_ns */
    if (key[0] != '\0') { /* all NUL: no key-value */
      out->key = key;
      out->int_value = (int64_t)r.rec[HT_REC_KV_VALUE];
    }
    return 1;
  }
  case S2_span_k_v2: { /* its key and value fields of their own */
    ht_rec_span_k_v2 r;
    if (read_span_k_v2(st, m, &r) != 0 || rec_side(out, r.rec, clock, ts_ns) != 0)
      return -1;
    out->key = r.key;
    out->int_value = r.value;
    return 1;
  }
  case S2_span_v2: {
    ht_rec_span_v2 r;
    return read_span_v2(st, m, &r) != 0 || SIDE_OF(r) != 0 ? -1 : 1;
  }
  case S2_span_x: {
    ht_rec_span_x r;
    return read_span_x(st, m, &r) != 0 || SIDE_OF(r) != 0 ? -1 : 1;
  }
  case S2_span_s: {
    ht_rec_span_s r;
    if (read_span_s(st, m, &r) != 0 || SIDE_OF(r) != 0)
      return -1;
    out->span_kind = r.kind;
    out->name = r.name;
    out->service = r.service;
    out->endpoint = r.endpoint;
    out->peer = r.peer_text;
    return 1;
  }
  case S2_span_a: {
    ht_rec_span_a r;
    if (read_span_a(st, m, &r) != 0 || SIDE_OF(r) != 0 ||
        mark_ns(clock, r.marks[HT_MARKS_CS], ts_ns, &out->marks_ns[0]) != 0 ||
        mark_ns(clock, r.marks[HT_MARKS_SR], ts_ns, &out->marks_ns[1]) != 0 ||
        mark_ns(clock, r.marks[HT_MARKS_SS], ts_ns, &out->marks_ns[2]) != 0 ||
        mark_ns(clock, r.marks[HT_MARKS_CR], ts_ns, &out->marks_ns[3]) != 0)
      return -1;
    out->named_apart = HT_SIDE_DESC_IN(r.side[HT_SIDE_NAMES]) == 0; /* by its span_n */
    return 1;
  }
  case S2_span_n: {
    ht_rec_span_n r;
    if (read_span_n(st, m, &r) != 0)
      return -1;
    IDS_OF(HOP_SPAN_NAMES, r);
    out->span_kind = r.kind;
    out->name = r.name;
    out->service = r.service;
    out->endpoint = r.endpoint;
    return 1;
  }
  case S2_note: {
    ht_rec_note r;
    if (read_note(st, m, &r) != 0)
      return -1;
    IDS_OF(HOP_ANNOTATION, r);
    out->name = r.text;
    return 1;
  }
  case S2_tag_i: {
    ht_rec_tag_i r;
    if (read_tag_i(st, m, &r) != 0)
      return -1;
    IDS_OF(HOP_KV_INT, r);
    out->key = r.key;
    out->int_value = r.value;
    return 1;
  }
  case S2_tag_s: {
    ht_rec_tag_s r;
    if (read_tag_s(st, m, &r) != 0)
      return -1;
    IDS_OF(HOP_KV_STR, r);
    out->key = r.key;
    out->str_value = r.value;
    return 1;
  }
  case S2_error: {
    ht_rec_error r;
    if (read_error(st, m, &r) != 0)
      return -1;
    IDS_OF(HOP_STATUS, r);
    out->status = r.code;
    out->message = r.message;
    return 1;
  }
  case S2_frame: {
    ht_rec_frame r;
    if (read_frame(st, m, &r) != 0)
      return -1;
    IDS_OF(r.dir == 0 ? HOP_HOP_SEND : HOP_HOP_RECV, r);
    out->name = r.annotation; /* "" for none */
    out->msg_type = (int)r.type;
    out->seq = r.seq;
    out->size = r.size;
    out->peer = r.peer_text;
    return 1;
  }
  case S2_process: {
    ht_rec_process r;
    if (m[2] < 0) { /* no vpid field (hoptrace_schema.h): the context's */
      if (read_U32(st, m[0], &r.schema) != 0 || read_STR(st, m[1], &r.procname) != 0)
        return -1;
    } else if (read_process(st, m, &r) != 0) {
      return -1;
    } else {
      out->vpid = r.vpid;
    }
    out->kind = HOP_PROCESS;
    out->seq = r.schema;
    out->procname = r.procname;
    return 1;
  }
  case S2_desc: {
    ht_rec_desc r;
    if (read_desc(st, m, &r) != 0)
      return -1;
    out->kind = HOP_DESC;
    out->vpid = r.vpid;
    out->desc_id = r.id;
    out->span_kind = r.kind;
    out->name = r.name;
    out->service = r.service;
    out->endpoint = r.endpoint;
    return 1;
  }
  case S2_peer: {
    ht_rec_peer r;
    if (read_peer(st, m, &r) != 0)
      return -1;
    out->kind = HOP_PEER;
    out->vpid = r.vpid;
    out->peer_id = r.id;
    out->peer = r.text;
    return 1;
  }
  case S2_capture: {
    ht_rec_capture r;
    if (read_capture(st, m, &r) != 0)
      return -1;
    IDS_OF(HOP_CAPTURE, r);
    out->vpid = r.vpid;
    out->capture_why = r.why;
    out->capture_hops = r.hops;
    out->capture_threshold = r.threshold;
    out->capture_value = r.value;
    out->service = r.origin;
    return 1;
  }
  }
  return -1;
}
