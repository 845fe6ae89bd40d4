/* Envelope decoding: the canonical fast path (envelope_fast.c) first,
 * else the general decoder (the wire scan, then protobuf-c for the
 * fields before the trace context). Allocates only from the arena.
 * Encoding is in envelope_encode.c. */
#include "envelope_codec.h"

#include <limits.h>
#include <string.h>

#include "envelope_fast.h"
#include "envelope_scan.h"
#include "hoptrace.pb-c.h"
#include "hoptrace/error.h"

static int type_is_known(int type) {
  return type >= HT_MSG_REQUEST && type <= HT_MSG_CONTROL;
}

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

int ht_wire_envelope_decode(ht_arena *arena, const uint8_t *data, size_t len,
                            ht_envelope *env) {
  int rc = ht_wire_envelope_decode_canonical(arena, data, len, env);
  if (rc != ENVELOPE_NOT_CANONICAL)
    return rc;
  /* (the fast path allocated nothing when it gave up) */
  return ht_wire_envelope_decode_general(arena, data, len, env);
}

int ht_wire_envelope_decode_general(ht_arena *arena, const uint8_t *data,
                                    size_t len, ht_envelope *env) {
  envelope_scan scan;
  int rc = ht_wire_envelope_scan_run(data, len, &scan);
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
  /* On an error env is left unspecified: from_protobuf may not have
   * filled it (valgrind caught this test on an uninitialised length). */
  if (rc == 0 && env->payload_len == 0)
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
