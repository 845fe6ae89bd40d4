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

/* Fills the protobuf-c structs from env, payload left out. */
static void to_protobuf(const ht_envelope *env, Hoptrace__Wire__Envelope *pb,
                        Hoptrace__Wire__TraceContext *tc) {
  hoptrace__wire__envelope__init(pb);
  pb->version = env->version != 0 ? env->version : HT_WIRE_VERSION;
  pb->type = (Hoptrace__Wire__MessageType)env->type;
  pb->sequence = env->sequence;
  pb->operation = (char *)(env->operation != NULL ? env->operation : "");
  pb->status = env->status;
  if (env->has_trace) {
    hoptrace__wire__trace_context__init(tc);
    tc->trace_id_hi = env->trace.trace_id_hi;
    tc->trace_id_lo = env->trace.trace_id_lo;
    tc->span_id = env->trace.span_id;
    tc->parent_span_id = env->trace.parent_span_id;
    tc->flags = env->trace.flags;
    pb->trace = tc;
  }
}

typedef struct header_plan {
  size_t fields_len;  /* packed envelope without payload */
  size_t payload_hdr; /* tag + length varint, 0 without payload */
  size_t body_len;    /* what the length prefix says */
} header_plan;

static int plan_header(const ht_envelope *env, const Hoptrace__Wire__Envelope *pb,
                       header_plan *plan) {
  if (env == NULL || !type_is_known((int)env->type))
    return HT_EINVAL;
  if (env->payload_len > 0 && env->payload == NULL)
    return HT_EINVAL;
  if (env->has_trace && ht_context_validate(&env->trace) != 0)
    return HT_EBADCONTEXT;
  if (env->payload_len > HT_FRAME_HARD_MAX)
    return HT_EFRAMETOOBIG;
  plan->fields_len = hoptrace__wire__envelope__get_packed_size(pb);
  plan->payload_hdr =
      env->payload_len > 0 ? 1 + varint_size(env->payload_len) : 0;
  plan->body_len = plan->fields_len + plan->payload_hdr + env->payload_len;
  if (plan->body_len > HT_FRAME_HARD_MAX)
    return HT_EFRAMETOOBIG;
  return 0;
}

size_t ht_frame_header_size(const ht_envelope *env) {
  if (env == NULL)
    return 0;
  Hoptrace__Wire__Envelope pb;
  Hoptrace__Wire__TraceContext tc;
  to_protobuf(env, &pb, &tc);
  header_plan plan;
  if (plan_header(env, &pb, &plan) != 0)
    return 0;
  return HT_FRAME_PREFIX_LEN + plan.fields_len + plan.payload_hdr;
}

int ht_frame_encode_header(const ht_envelope *env, uint8_t *header,
                           size_t cap, size_t *header_len) {
  if (env == NULL || header == NULL || header_len == NULL)
    return HT_EINVAL;
  Hoptrace__Wire__Envelope pb;
  Hoptrace__Wire__TraceContext tc;
  to_protobuf(env, &pb, &tc);
  header_plan plan;
  int rc = plan_header(env, &pb, &plan);
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
  uint8_t *p = header + HT_FRAME_PREFIX_LEN;
  p += hoptrace__wire__envelope__pack(&pb, p);
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
  ProtobufCAllocator allocator = {arena_alloc_cb, arena_free_cb, arena};
  Hoptrace__Wire__Envelope *pb =
      hoptrace__wire__envelope__unpack(&allocator, fields_len, data);
  if (pb == NULL)
    return arena->failed ? HT_ENOMEM : HT_EMALFORMED;
  rc = from_protobuf(pb, env);
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
