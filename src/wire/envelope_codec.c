/* Envelope <-> protobuf-c. Encoding writes the header only and never
 * touches the payload bytes; decoding allocates only from the arena. */
#include "envelope_codec.h"

#include <limits.h>
#include <string.h>

#include "envelope_scan.h"
#include "hoptrace.pb-c.h"
#include "hoptrace/error.h"

#define PAYLOAD_TAG ((15u << 3) | 2u) /* field 15, length-delimited */

static size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static size_t put_varint(uint8_t *out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

static int type_is_known(int type) {
  return type >= HT_MSG_REQUEST && type <= HT_MSG_CONTROL;
}

/* The encoder is written by hand for speed and writes exactly what
 * protobuf-c's pack would (fields in number order, zero values left out;
 * tests/wire/test_envelope.c compares the two byte for byte), then the
 * payload tag and length. Decoders may rely on that order: trace context
 * and payload come last. */
enum {
  TAG_VERSION = 0x08, TAG_TYPE = 0x10, TAG_SEQUENCE = 0x18,
  TAG_OPERATION = 0x22, TAG_STATUS = 0x28, TAG_TRACE = 0x32,
  TAG_TRACE_HI = 0x09, TAG_TRACE_LO = 0x11, TAG_SPAN = 0x19,
  TAG_PARENT = 0x21, TAG_FLAGS = 0x28
};

static uint32_t zigzag32(int32_t v) {
  return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}

static size_t fixed64_field_size(uint64_t v) { return v != 0 ? 9 : 0; }

static size_t trace_body_size(const ht_trace_context *t) {
  return fixed64_field_size(t->trace_id_hi) + fixed64_field_size(t->trace_id_lo) +
         fixed64_field_size(t->span_id) + fixed64_field_size(t->parent_span_id) +
         (t->flags != 0 ? 1 + varint_size(t->flags) : 0);
}

typedef struct header_plan {
  uint32_t version;
  size_t operation_len;
  size_t trace_len;   /* trace body, 0 without context */
  size_t fields_len;  /* envelope without payload */
  size_t payload_hdr; /* tag + length varint, 0 without payload */
  size_t body_len;    /* what the length prefix says */
} header_plan;

static int plan_header(const ht_envelope *env, header_plan *plan) {
  if (env == NULL || !type_is_known((int)env->type))
    return HT_EINVAL;
  if (env->payload_len > 0 && env->payload == NULL)
    return HT_EINVAL;
  if (env->has_trace && ht_context_validate(&env->trace) != 0)
    return HT_EBADCONTEXT;
  if (env->payload_len > HT_FRAME_HARD_MAX)
    return HT_EFRAMETOOBIG;
  plan->version = env->version != 0 ? env->version : HT_WIRE_VERSION;
  plan->operation_len = env->operation != NULL ? strlen(env->operation) : 0;
  if (plan->operation_len > HT_FRAME_HARD_MAX)
    return HT_EFRAMETOOBIG;
  size_t n = 1 + varint_size(plan->version) + 1 + varint_size((uint32_t)env->type);
  if (env->sequence != 0)
    n += 1 + varint_size(env->sequence);
  if (plan->operation_len != 0)
    n += 1 + varint_size(plan->operation_len) + plan->operation_len;
  if (env->status != 0)
    n += 1 + varint_size(zigzag32(env->status));
  plan->trace_len = env->has_trace ? trace_body_size(&env->trace) : 0;
  if (env->has_trace)
    n += 1 + varint_size(plan->trace_len) + plan->trace_len;
  plan->fields_len = n;
  plan->payload_hdr = env->payload_len > 0 ? 1 + varint_size(env->payload_len) : 0;
  plan->body_len = plan->fields_len + plan->payload_hdr + env->payload_len;
  if (plan->body_len > HT_FRAME_HARD_MAX)
    return HT_EFRAMETOOBIG;
  return 0;
}

static uint8_t *put_fixed64_field(uint8_t *p, uint8_t tag, uint64_t v) {
  if (v == 0)
    return p;
  *p++ = tag;
  for (int i = 0; i < 8; i++)
    *p++ = (uint8_t)(v >> (8 * i));
  return p;
}

static uint8_t *put_fields(const ht_envelope *env, const header_plan *plan, uint8_t *p) {
  *p++ = TAG_VERSION;
  p += put_varint(p, plan->version);
  *p++ = TAG_TYPE;
  p += put_varint(p, (uint32_t)env->type);
  if (env->sequence != 0) {
    *p++ = TAG_SEQUENCE;
    p += put_varint(p, env->sequence);
  }
  if (plan->operation_len != 0) {
    *p++ = TAG_OPERATION;
    p += put_varint(p, plan->operation_len);
    memcpy(p, env->operation, plan->operation_len);
    p += plan->operation_len;
  }
  if (env->status != 0) {
    *p++ = TAG_STATUS;
    p += put_varint(p, zigzag32(env->status));
  }
  if (env->has_trace) {
    const ht_trace_context *t = &env->trace;
    *p++ = TAG_TRACE;
    p += put_varint(p, plan->trace_len);
    p = put_fixed64_field(p, TAG_TRACE_HI, t->trace_id_hi);
    p = put_fixed64_field(p, TAG_TRACE_LO, t->trace_id_lo);
    p = put_fixed64_field(p, TAG_SPAN, t->span_id);
    p = put_fixed64_field(p, TAG_PARENT, t->parent_span_id);
    if (t->flags != 0) {
      *p++ = TAG_FLAGS;
      p += put_varint(p, t->flags);
    }
  }
  return p;
}

size_t ht_frame_header_size(const ht_envelope *env) {
  header_plan plan;
  if (plan_header(env, &plan) != 0)
    return 0;
  return HT_FRAME_PREFIX_LEN + plan.fields_len + plan.payload_hdr;
}

int ht_frame_encode_header(const ht_envelope *env, uint8_t *header,
                           size_t cap, size_t *header_len) {
  if (env == NULL || header == NULL || header_len == NULL)
    return HT_EINVAL;
  header_plan plan;
  int rc = plan_header(env, &plan);
  if (rc != 0)
    return rc;
  size_t need = HT_FRAME_PREFIX_LEN + plan.fields_len + plan.payload_hdr;
  if (cap < need)
    return HT_ENOSPC;
  uint32_t body = (uint32_t)plan.body_len;
  header[0] = (uint8_t)(body >> 24);
  header[1] = (uint8_t)(body >> 16);
  header[2] = (uint8_t)(body >> 8);
  header[3] = (uint8_t)body;
  uint8_t *p = put_fields(env, &plan, header + HT_FRAME_PREFIX_LEN);
  if (plan.payload_hdr > 0) {
    *p++ = PAYLOAD_TAG;
    p += put_varint(p, env->payload_len);
  }
  *header_len = (size_t)(p - header);
  return 0;
}

int ht_frame_encode(const ht_envelope *env, uint8_t *buf, size_t cap,
                    size_t *frame_len) {
  if (frame_len == NULL)
    return HT_EINVAL;
  size_t header_len;
  int rc = ht_frame_encode_header(env, buf, cap, &header_len);
  if (rc != 0)
    return rc;
  if (cap - header_len < env->payload_len)
    return HT_ENOSPC;
  if (env->payload_len > 0)
    memcpy(buf + header_len, env->payload, env->payload_len);
  *frame_len = header_len + env->payload_len;
  return 0;
}

/* --- decoding --------------------------------------------------------- */

static void *arena_alloc_cb(void *data, size_t size) {
  return ht_arena_alloc(data, size);
}

static void arena_free_cb(void *data, void *ptr) {
  (void)data;
  (void)ptr; /* released with the whole arena */
}

static int from_protobuf(const Hoptrace__Wire__Envelope *pb, ht_envelope *env) {
  if (pb->version == 0)
    return HT_EMALFORMED;
  if (pb->version > HT_WIRE_VERSION)
    return HT_EVERSION;
  if (!type_is_known((int)pb->type))
    return HT_EMSGTYPE;
  *env = (ht_envelope){
      .version = pb->version,
      .type = (ht_msg_type)pb->type,
      .sequence = pb->sequence,
      .operation = pb->operation != NULL ? pb->operation : "",
      .status = pb->status,
      .payload = pb->payload.data,
      .payload_len = pb->payload.len,
  };
  if (pb->trace != NULL) {
    env->has_trace = true;
    env->trace = (ht_trace_context){
        .trace_id_hi = pb->trace->trace_id_hi,
        .trace_id_lo = pb->trace->trace_id_lo,
        .span_id = pb->trace->span_id,
        .parent_span_id = pb->trace->parent_span_id,
        .flags = pb->trace->flags,
    };
    if (ht_context_validate(&env->trace) != 0)
      return HT_EBADCONTEXT;
  }
  return 0;
}

int envelope_decode(ht_arena *arena, const uint8_t *data, size_t len,
                    ht_envelope *env) {
  envelope_scan scan;
  int rc = envelope_scan_run(data, len, &scan);
  if (rc != 0) {
    /* A newer sender may use encodings this version cannot read. */
    if (scan.has_version && scan.version > HT_WIRE_VERSION)
      return HT_EVERSION;
    return rc;
  }
  /* Our encoder writes the payload once, last: decode the fields before it
   * and hand out the payload in place instead of letting protobuf-c copy. */
  bool in_place = scan.payload_fields == 1 && scan.payload_is_last;
  size_t fields_len = in_place ? scan.payload_tag_at : len;
  /* ... and the trace context just before it: the scan has read it. */
  bool trace_read = scan.trace_fields == 1 && scan.trace_end == fields_len;
  if (trace_read)
    fields_len = scan.trace_tag_at;
  ProtobufCAllocator allocator = {arena_alloc_cb, arena_free_cb, arena};
  Hoptrace__Wire__Envelope *pb =
      hoptrace__wire__envelope__unpack(&allocator, fields_len, data);
  if (pb == NULL)
    return arena->failed ? HT_ENOMEM : HT_EMALFORMED;
  rc = from_protobuf(pb, env);
  if (rc == 0 && trace_read) {
    env->has_trace = true;
    env->trace = (ht_trace_context){scan.trace_hi, scan.trace_lo, scan.span_id,
                                    scan.parent_span_id, scan.trace_flags};
    if (ht_context_validate(&env->trace) != 0)
      rc = HT_EBADCONTEXT;
  }
  if (rc == 0 && in_place) {
    env->payload = data + scan.payload_at;
    env->payload_len = scan.payload_len;
  }
  if (env->payload_len == 0)
    env->payload = NULL;
  return rc;
}

const char *ht_msg_type_name(int type) {
  switch (type) {
  case HT_MSG_REQUEST: return "request";
  case HT_MSG_REPLY: return "reply";
  case HT_MSG_ONEWAY: return "one-way";
  case HT_MSG_ERROR: return "error";
  case HT_MSG_CONTROL: return "control";
  default: return "unknown";
  }
}
