/* Event message -> hop_event. Field names come from the provider header
 * src/provider/hoptrace_tp.h; an event class is mapped once (names -> indices) so
 * the per-event work is index lookups. Must never trust a field to exist:
 * a trace from another hoptrace version may lack some. */
#include "read/bt_decode.h"
#include "read/schema2.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

#define PROVIDER_PREFIX "hoptrace:"
#define MAX_KVS 256

/* Payload fields the tool knows, by name. */
enum field_slot {
  F_TRACE_HI, F_TRACE_LO, F_SPAN, F_PARENT, F_FLAGS, F_KIND, F_NAME,
  F_SERVICE, F_ENDPOINT, F_STATUS, F_KEY, F_VALUE, F_COUNT, F_KEYS,
  F_TYPES, F_INTS, F_STRS, F_CODE, F_MESSAGE, F_TYPE, F_SEQ, F_SIZE,
  F_PEER, F_ANNOTATION, F_SLOTS
};
static const char *const slot_names[F_SLOTS] = {
    "trace_id_hi", "trace_id_lo", "span_id", "parent_span_id", "flags",
    "kind", "name", "service", "endpoint", "status", "key", "value",
    "count", "keys", "types", "ints", "strs", "code", "message", "type",
    "seq", "size", "peer", "annotation"};

enum context_slot { C_VPID, C_VTID, C_PROCNAME, C_SLOTS };
static const char *const context_names[C_SLOTS] = {"vpid", "vtid", "procname"};

/* A member's type, fixed by its event class: looked up once, so that the
 * per-event work is no type query. */
enum { T_NONE, T_UNSIGNED, T_SIGNED, T_STRING, T_ARRAY };

typedef struct class_map {
  const bt_event_class *cls;
  int hop;                 /* 0: not ours; 2: schema 2 (schema2.h) */
  int s2_event;
  int64_t s2_members[SCHEMA2_MAX_FIELDS];
  hop_event_kind kind;
  bool has_clock;          /* its stream class has a default clock */
  int64_t field[F_SLOTS];  /* member index, -1 absent */
  int64_t context[C_SLOTS];
  uint8_t field_type[F_SLOTS]; /* T_* */
  uint8_t context_type[C_SLOTS];
} class_map;

struct bt_decoder {
  class_map *maps;
  size_t n_maps, cap_maps;
  const bt_trace *last_trace;
  const char *last_hostname;
  hop_kv kvs[MAX_KVS];
  char *kv_text;  /* keys and string values split in place */
  size_t kv_text_cap;
  char span_key[SCHEMA2_KEY_BYTES]; /* a span_k's key, unpacked */
};

static const struct {
  const char *name;
  hop_event_kind kind;
} event_names[] = {
    {"span_start", HOP_SPAN_START}, {"span_end", HOP_SPAN_END},
    {"annotation", HOP_ANNOTATION}, {"kv_str", HOP_KV_STR},
    {"kv_int", HOP_KV_INT},         {"kvs", HOP_KVS},
    {"status", HOP_STATUS},         {"msg_send", HOP_MSG_SEND},
    {"msg_recv", HOP_MSG_RECV},     {"hop_send", HOP_HOP_SEND},
    {"hop_recv", HOP_HOP_RECV},     {"span_start_send", HOP_SPAN_START_SEND},
    {"span_start_recv", HOP_SPAN_START_RECV},
    {"span_end_send", HOP_SPAN_END_SEND},
    {"span_end_recv", HOP_SPAN_END_RECV},
};

bt_decoder *bt_decoder_new(void) { return calloc(1, sizeof(bt_decoder)); }

void bt_decoder_free(bt_decoder *decoder) {
  if (decoder == NULL)
    return;
  for (size_t i = 0; i < decoder->n_maps; i++)
    bt_event_class_put_ref(decoder->maps[i].cls);
  bt_trace_put_ref(decoder->last_trace);
  free(decoder->maps);
  free(decoder->kv_text);
  free(decoder);
}

int bt_snapshot_ns(const bt_clock_snapshot *snapshot, int64_t *ns) {
  *ns = 0;
  if (snapshot == NULL)
    return -1;
  if (bt_clock_snapshot_get_ns_from_origin(snapshot, ns) ==
      BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
    return 0;
  /* past int64 ns: libbabeltrace2 left an error on the thread, and the
   * next bt_graph_run_once() aborts the process unless it is cleared */
  bt_current_thread_clear_error();
  *ns = 0;
  return -1;
}

static uint8_t type_of(const bt_field_class *fc) {
  bt_field_class_type type = bt_field_class_get_type(fc);
  if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
    return T_UNSIGNED;
  if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
    return T_SIGNED;
  if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_ARRAY))
    return T_ARRAY;
  return type == BT_FIELD_CLASS_TYPE_STRING ? T_STRING : T_NONE;
}

static void index_struct(const bt_field_class *fc, const char *const *names,
                         size_t n, int64_t *out, uint8_t *types) {
  for (size_t i = 0; i < n; i++) {
    out[i] = -1;
    types[i] = T_NONE;
  }
  if (fc == NULL || bt_field_class_get_type(fc) != BT_FIELD_CLASS_TYPE_STRUCTURE)
    return;
  uint64_t members = bt_field_class_structure_get_member_count(fc);
  for (uint64_t m = 0; m < members; m++) {
    const bt_field_class_structure_member *member =
        bt_field_class_structure_borrow_member_by_index_const(fc, m);
    const char *name = bt_field_class_structure_member_get_name(member);
    /* LTTng may prefix context field names with '_' in CTF 1.8 */
    if (name[0] == '_')
      name++;
    for (size_t i = 0; i < n; i++)
      if (strcmp(name, names[i]) == 0) {
        out[i] = (int64_t)m;
        types[i] = type_of(bt_field_class_structure_member_borrow_field_class_const(member));
      }
  }
}

static class_map *map_class(bt_decoder *d, const bt_event_class *cls) {
  for (size_t i = 0; i < d->n_maps; i++)
    if (d->maps[i].cls == cls)
      return &d->maps[i];
  if (ht_grow(&d->maps, &d->cap_maps, d->n_maps + 1, sizeof(class_map), 16) != 0)
    return NULL;
  class_map *map = &d->maps[d->n_maps++];
  /* The reference keeps the class alive, so its address cannot be reused
   * by another class while it is a key here (live sessions come and go). */
  bt_event_class_get_ref(cls);
  *map = (class_map){.cls = cls};
  const char *name = bt_event_class_get_name(cls);
  if (name == NULL || strncmp(name, PROVIDER_PREFIX, strlen(PROVIDER_PREFIX)) != 0)
    return map;
  name += strlen(PROVIDER_PREFIX);
  for (size_t i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++) {
    if (strcmp(name, event_names[i].name) == 0) {
      map->hop = 1;
      map->kind = event_names[i].kind;
    }
  }
  const bt_field_class *payload = bt_event_class_borrow_payload_field_class_const(cls);
  map->s2_event = schema2_event(name);
  if (map->s2_event >= 0) {
    map->hop = 2;
    map->s2_event = schema2_map(map->s2_event, payload, map->s2_members);
  }
  index_struct(payload, slot_names, F_SLOTS, map->field, map->field_type);
  const bt_stream_class *sc = bt_event_class_borrow_stream_class_const(cls);
  index_struct(bt_stream_class_borrow_event_common_context_field_class_const(sc),
               context_names, C_SLOTS, map->context, map->context_type);
  map->has_clock = bt_stream_class_borrow_default_clock_class_const(sc) != NULL;
  return map;
}

static const bt_field *member(const bt_field *st, int64_t index) {
  if (st == NULL || index < 0)
    return NULL;
  return bt_field_structure_borrow_member_field_by_index_const(st, (uint64_t)index);
}

static int field_int(const bt_field *f, int64_t *out) {
  if (f == NULL)
    return 0;
  bt_field_class_type type = bt_field_get_class_type(f);
  if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
    *out = (int64_t)bt_field_integer_unsigned_get_value(f);
  else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
    *out = bt_field_integer_signed_get_value(f);
  else
    return 0;
  return 1;
}

/* Member `index` of st read with its cached type; 0 / NULL when absent or
 * of another type. */
static int typed_int(const bt_field *st, int64_t index, uint8_t type, int64_t *out) {
  const bt_field *f = member(st, index);
  if (f == NULL)
    return 0;
  if (type == T_UNSIGNED)
    *out = (int64_t)bt_field_integer_unsigned_get_value(f);
  else if (type == T_SIGNED)
    *out = bt_field_integer_signed_get_value(f);
  else
    return 0;
  return 1;
}

static const char *typed_str(const bt_field *st, int64_t index, uint8_t type) {
  const bt_field *f = type == T_STRING ? member(st, index) : NULL;
  return f != NULL ? bt_field_string_get_value(f) : NULL;
}

#define FIELD_INT(st, m, slot, out) typed_int(st, (m)->field[slot], (m)->field_type[slot], out)
#define FIELD_STR(st, m, slot) typed_str(st, (m)->field[slot], (m)->field_type[slot])
#define FIELD_ARRAY(st, m, slot) \
  ((m)->field_type[slot] == T_ARRAY ? member(st, (m)->field[slot]) : NULL)
#define CONTEXT_INT(st, m, slot, out) \
  typed_int(st, (m)->context[slot], (m)->context_type[slot], out)

static int get_u64(const bt_field *st, const class_map *m, int slot, uint64_t *out) {
  int64_t v;
  if (!FIELD_INT(st, m, slot, &v))
    return 0;
  *out = (uint64_t)v;
  return 1;
}

static const char *get_str(const bt_field *st, const class_map *m, int slot) {
  const char *s = FIELD_STR(st, m, slot);
  return s != NULL ? s : "";
}

/* "kvs": keys and string values are 0x1f-separated texts, types and ints
 * are arrays of `count` entries. The array calls check nothing in a
 * release libbabeltrace2: another field type there is read as an array
 * (a crash), so it makes the event malformed. */
static int decode_kvs(bt_decoder *d, const bt_field *st, const class_map *m,
                      hop_event *out) {
  const char *keys = FIELD_STR(st, m, F_KEYS);
  const char *strs = FIELD_STR(st, m, F_STRS);
  const bt_field *types = FIELD_ARRAY(st, m, F_TYPES);
  const bt_field *ints = FIELD_ARRAY(st, m, F_INTS);
  if (keys == NULL || strs == NULL || types == NULL || ints == NULL)
    return -1;
  uint64_t n = bt_field_array_get_length(types);
  if (n > MAX_KVS || bt_field_array_get_length(ints) != n)
    return -1;
  size_t need = strlen(keys) + strlen(strs) + 2;
  if (need > d->kv_text_cap) {
    char *grown = realloc(d->kv_text, need);
    if (grown == NULL)
      return -1;
    d->kv_text = grown;
    d->kv_text_cap = need;
  }
  char *key_text = d->kv_text;
  char *str_text = key_text + strlen(keys) + 1;
  strcpy(key_text, keys);
  strcpy(str_text, strs);
  for (uint64_t i = 0; i < n; i++) {
    int64_t type = 0, value = 0;
    field_int(bt_field_array_borrow_element_field_by_index_const(types, i), &type);
    field_int(bt_field_array_borrow_element_field_by_index_const(ints, i), &value);
    char *key_end = strchr(key_text, 0x1f);
    char *str_end = strchr(str_text, 0x1f);
    if (key_end != NULL)
      *key_end = '\0';
    if (str_end != NULL)
      *str_end = '\0';
    d->kvs[i] = (hop_kv){.key = key_text, .is_int = type == 1,
                         .int_value = value, .str_value = str_text};
    key_text = key_end != NULL ? key_end + 1 : key_text + strlen(key_text);
    str_text = str_end != NULL ? str_end + 1 : str_text + strlen(str_text);
  }
  out->kvs = d->kvs;
  out->n_kvs = (size_t)n;
  return 0;
}

static const char *hostname_of(bt_decoder *d, const bt_event *event) {
  const bt_trace *trace = bt_stream_borrow_trace_const(bt_event_borrow_stream_const(event));
  if (trace != d->last_trace) {
    const bt_value *v = bt_trace_borrow_environment_entry_value_by_name_const(trace, "hostname");
    bt_trace_get_ref(trace); /* keeps the hostname string alive */
    bt_trace_put_ref(d->last_trace);
    d->last_trace = trace;
    d->last_hostname = v != NULL && bt_value_is_string(v) ? bt_value_string_get(v) : "";
  }
  return d->last_hostname;
}

static void decode_context(bt_decoder *d, const bt_event *event,
                           const class_map *m, hop_event *out) {
  const bt_field *ctx = bt_event_borrow_common_context_field_const(event);
  out->vpid = -1;
  out->vtid = -1;
  CONTEXT_INT(ctx, m, C_VPID, &out->vpid);
  CONTEXT_INT(ctx, m, C_VTID, &out->vtid);
  const char *procname = typed_str(ctx, m->context[C_PROCNAME], m->context_type[C_PROCNAME]);
  out->hostname = hostname_of(d, event);
  out->procname = procname != NULL ? procname : "";
}

static void decode_msg_fields(const bt_field *st, const class_map *m,
                              hop_event *out) {
  int64_t v = 0;
  FIELD_INT(st, m, F_TYPE, &v);
  out->msg_type = (int)v;
  get_u64(st, m, F_SEQ, &out->seq);
  get_u64(st, m, F_SIZE, &out->size);
  out->peer = get_str(st, m, F_PEER);
}

static void decode_start_fields(const bt_field *st, const class_map *m,
                                hop_event *out) {
  int64_t v = 0;
  FIELD_INT(st, m, F_FLAGS, &v);
  out->flags = (uint32_t)v;
  v = 0;
  FIELD_INT(st, m, F_KIND, &v);
  out->span_kind = (int)v;
  out->name = get_str(st, m, F_NAME);
  out->service = get_str(st, m, F_SERVICE);
  out->endpoint = get_str(st, m, F_ENDPOINT);
}

static int decode_kind_fields(bt_decoder *d, const bt_field *st,
                              const class_map *m, hop_event *out) {
  int64_t v = 0;
  switch (m->kind) {
  case HOP_SPAN_START_SEND:
  case HOP_SPAN_START_RECV:
    decode_start_fields(st, m, out);
    out->annotation = get_str(st, m, F_ANNOTATION);
    decode_msg_fields(st, m, out);
    return 0;
  case HOP_SPAN_END_SEND:
  case HOP_SPAN_END_RECV:
    FIELD_INT(st, m, F_STATUS, &v);
    out->status = (int32_t)v;
    out->annotation = get_str(st, m, F_ANNOTATION);
    decode_msg_fields(st, m, out);
    return 0;
  case HOP_SPAN_START:
    decode_start_fields(st, m, out);
    return 0;
  case HOP_SPAN_END:
    FIELD_INT(st, m, F_STATUS, &v);
    out->status = (int32_t)v;
    return 0;
  case HOP_ANNOTATION:
    out->name = get_str(st, m, F_NAME);
    return 0;
  case HOP_KV_STR:
  case HOP_KV_INT:
    out->key = get_str(st, m, F_KEY);
    out->str_value = FIELD_STR(st, m, F_VALUE);
    if (out->str_value == NULL) {
      out->kind = HOP_KV_INT;
      FIELD_INT(st, m, F_VALUE, &out->int_value);
    } else {
      out->kind = HOP_KV_STR;
    }
    return 0;
  case HOP_KVS:
    return decode_kvs(d, st, m, out);
  case HOP_STATUS:
    FIELD_INT(st, m, F_CODE, &v);
    out->status = (int32_t)v;
    out->message = get_str(st, m, F_MESSAGE);
    return 0;
  case HOP_HOP_SEND:
  case HOP_HOP_RECV:
    out->name = get_str(st, m, F_NAME);
    decode_msg_fields(st, m, out);
    return 0;
  case HOP_MSG_SEND:
  case HOP_MSG_RECV:
    decode_msg_fields(st, m, out);
    return 0;
  case HOP_SPAN_SIDE: /* schema 2: schema2.c */
  case HOP_SPAN_NAMES:
  case HOP_PROCESS:
  case HOP_DESC:
  case HOP_PEER:
  case HOP_CAPTURE:
  case HOP_MALFORMED:
    return -1;
  }
  return -1;
}

static int decode(bt_decoder *d, const bt_message *msg, hop_event *out) {
  const bt_event *event = bt_message_event_borrow_event_const(msg);
  class_map *m = map_class(d, bt_event_borrow_class_const(event));
  if (m == NULL) {
    *out = (hop_event){0};
    return -1;
  }
  if (!m->hop)
    return 0;
  const bt_field *st = bt_event_borrow_payload_field_const(event);
  *out = (hop_event){.kind = m->kind};
  if (m->hop == 2) {
    decode_context(d, event, m, out);
    int64_t writer = out->vpid; /* LTTng's vpid context: who wrote it */
    const bt_clock_snapshot *snap =
        m->has_clock ? bt_message_event_borrow_default_clock_snapshot_const(msg) : NULL;
    int64_t ns = 0;
    bool timeless = snap != NULL && bt_snapshot_ns(snap, &ns) != 0;
    int rc = schema2_decode(m->s2_event, m->s2_members, st,
                            snap != NULL ? bt_clock_snapshot_borrow_clock_class_const(snap) : NULL,
                            ns, d->span_key, out);
    if (timeless) /* its ids were read: its trace is told */
      return -1;
    if (rc == 1 && out->kind == HOP_SPAN_SIDE &&
        ((out->trace_hi | out->trace_lo) == 0 || out->span_id == 0))
      return -1;
    /* a process names its own ids only: the field is what the writer
     * claims, the context what LTTng saw */
    if (rc == 1 && writer >= 0 && out->vpid != writer &&
        (out->kind == HOP_DESC || out->kind == HOP_PEER || out->kind == HOP_PROCESS))
      return BT_DECODE_FOREIGN_NAME;
    return rc;
  }
  bool timeless =
      m->has_clock &&
      bt_snapshot_ns(bt_message_event_borrow_default_clock_snapshot_const(msg), &out->ts_ns) != 0;
  decode_context(d, event, m, out);
  if (!get_u64(st, m, F_TRACE_HI, &out->trace_hi) ||
      !get_u64(st, m, F_TRACE_LO, &out->trace_lo) ||
      !get_u64(st, m, F_SPAN, &out->span_id) ||
      !get_u64(st, m, F_PARENT, &out->parent_id))
    return -1;
  if ((out->trace_hi | out->trace_lo) == 0 || out->span_id == 0 || timeless)
    return -1;
  return decode_kind_fields(d, st, m, out) == 0 ? 1 : -1;
}

int bt_decoder_decode(bt_decoder *d, const bt_message *msg, hop_event *out) {
  int rc = decode(d, msg, out);
  if (rc != -1)
    return rc;
  /* what was read of it may be anything but its ids, time and origin */
  hop_event dropped = {.kind = HOP_MALFORMED, .ts_ns = out->ts_ns,
                       .trace_hi = out->trace_hi, .trace_lo = out->trace_lo,
                       .span_id = out->span_id, .parent_id = out->parent_id,
                       .vpid = out->vpid, .vtid = out->vtid,
                       .procname = out->procname != NULL ? out->procname : "",
                       .hostname = out->hostname != NULL ? out->hostname : ""};
  if ((dropped.trace_hi | dropped.trace_lo) == 0)
    dropped = (hop_event){0};
  *out = dropped;
  return -1;
}
