/* Envelope encoder: writes the frame header (length prefix, envelope
 * fields, payload tag and length) and never touches the payload bytes.
 * Must never write past `cap`, and must write exactly what protobuf-c's
 * pack writes (tests/wire/test_envelope.c compares the two byte for
 * byte): fields in number order, zero values left out, then the payload
 * tag and length. Decoders may rely on that order (envelope_fast.c): the
 * trace context and the payload come last. */
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/wire.h"
#include "wire_bytes.h"

#define PAYLOAD_TAG ((15u << 3) | 2u) /* field 15, length-delimited */

/* Both encoders take the checks and the write inline: ht_frame_encode
 * going through ht_frame_encode_header, and that through check_envelope,
 * cost a message 25 instructions of calls (bench/recording, issue 31). */
#define ENCODE_INLINE __attribute__((always_inline)) static inline

/* What a traced request's envelope has: written in line, the jumps
 * around it taken only when a field is absent (GCC put each present
 * field out of line, a jump there and one back: 10 instructions a
 * frame, issue 31). */
#define PRESENT(x) __builtin_expect((x) != 0, 1)

enum {
  TAG_VERSION = 0x08, TAG_TYPE = 0x10, TAG_SEQUENCE = 0x18,
  TAG_OPERATION = 0x22, TAG_STATUS = 0x28, TAG_TRACE = 0x32,
  TAG_TRACE_HI = 0x09, TAG_TRACE_LO = 0x11, TAG_SPAN = 0x19,
  TAG_PARENT = 0x21, TAG_FLAGS = 0x28
};

static size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static uint32_t zigzag32(int32_t v) {
  return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}

/* The checks every encoding makes, and the operation's length. */
ENCODE_INLINE int check_envelope(const ht_envelope *env, size_t *operation_len) {
  if (env == NULL || env->type < HT_MSG_REQUEST || env->type > HT_MSG_ERROR)
    return HT_EINVAL;
  if (env->payload == NULL && env->payload_len > 0)
    return HT_EINVAL;
  if (env->has_trace && ((env->trace.trace_id_hi | env->trace.trace_id_lo) == 0 ||
                         env->trace.span_id == 0))
    return HT_EBADCONTEXT; /* as ht_context_validate */
  if (env->payload_len > HT_FRAME_HARD_MAX)
    return HT_EFRAMETOOBIG;
  *operation_len = env->operation != NULL ? strlen(env->operation) : 0;
  if (*operation_len > HT_FRAME_HARD_MAX)
    return HT_EFRAMETOOBIG;
  return 0;
}

static size_t trace_body_size(const ht_trace_context *t) {
  return (t->trace_id_hi != 0 ? 9u : 0u) + (t->trace_id_lo != 0 ? 9u : 0u) +
         9u /* span_id, never 0 */ + (t->parent_span_id != 0 ? 9u : 0u) +
         (t->flags != 0 ? 1 + varint_size(t->flags) : 0);
}

/* Writes the trace context submessage (tag, length, body) at p. The body
 * is at most 4 x 9 + 6 bytes, so its length is one byte. */
ENCODE_INLINE uint8_t *put_trace(uint8_t *p, const ht_trace_context *t) {
  /* read before any byte is written: the bytes may alias *t for the
   * compiler, which read each field again after each store */
  uint64_t hi = t->trace_id_hi, lo = t->trace_id_lo, span = t->span_id,
           parent = t->parent_span_id;
  uint32_t flags = t->flags;
  *p++ = TAG_TRACE;
  uint8_t *len_at = p++;
  uint8_t *body = p;
  if (PRESENT(hi)) {
    *p = TAG_TRACE_HI;
    wire_store_le64(p + 1, hi);
    p += 9;
  }
  if (PRESENT(lo)) {
    *p = TAG_TRACE_LO;
    wire_store_le64(p + 1, lo);
    p += 9;
  }
  *p = TAG_SPAN;
  wire_store_le64(p + 1, span);
  p += 9;
  if (parent != 0) {
    *p = TAG_PARENT;
    wire_store_le64(p + 1, parent);
    p += 9;
  }
  if (PRESENT(flags)) {
    *p++ = TAG_FLAGS;
    p = wire_put_varint(p, flags);
  }
  *len_at = (uint8_t)(p - body);
  return p;
}

/* Every field but the payload's bytes, from p on; returns the end. */
ENCODE_INLINE uint8_t *put_fields(const ht_envelope *env, size_t operation_len,
                                  size_t payload_len, uint8_t *p) {
  *p++ = TAG_VERSION;
  p = wire_put_varint(p, env->version != 0 ? env->version : HT_WIRE_VERSION);
  *p++ = TAG_TYPE;
  *p++ = (uint8_t)env->type; /* 1..5 */
  if (PRESENT(env->sequence)) {
    *p++ = TAG_SEQUENCE;
    p = wire_put_varint(p, env->sequence);
  }
  if (PRESENT(operation_len)) {
    *p++ = TAG_OPERATION;
    p = wire_put_varint(p, operation_len);
    wire_copy_short(p, env->operation, operation_len);
    p += operation_len;
  }
  if (env->status != 0) {
    *p++ = TAG_STATUS;
    p = wire_put_varint(p, zigzag32(env->status));
  }
  if (PRESENT(env->has_trace))
    p = put_trace(p, &env->trace);
  if (PRESENT(payload_len)) {
    *p++ = PAYLOAD_TAG;
    p = wire_put_varint(p, payload_len);
  }
  return p;
}

/* Exact header size (prefix included) of a checked envelope. */
static size_t exact_size(const ht_envelope *env, size_t operation_len) {
  uint32_t version = env->version != 0 ? env->version : HT_WIRE_VERSION;
  size_t n = HT_FRAME_PREFIX_LEN + 1 + varint_size(version) + 2;
  if (env->sequence != 0)
    n += 1 + varint_size(env->sequence);
  if (operation_len != 0)
    n += 1 + varint_size(operation_len) + operation_len;
  if (env->status != 0)
    n += 1 + varint_size(zigzag32(env->status));
  if (env->has_trace)
    n += 2 + trace_body_size(&env->trace);
  if (env->payload_len > 0)
    n += 1 + varint_size(env->payload_len);
  return n;
}

size_t ht_frame_header_size(const ht_envelope *env) {
  size_t operation_len;
  if (check_envelope(env, &operation_len) != 0)
    return 0;
  size_t n = exact_size(env, operation_len);
  if (n - HT_FRAME_PREFIX_LEN + env->payload_len > HT_FRAME_HARD_MAX)
    return 0;
  return n;
}

/* One pass, no planning: the fields go straight after the prefix, whose
 * value is known once they are written. A caller whose buffer may be
 * smaller than HT_FRAME_HEADER_MAX gets the exact size checked first.
 * env is not NULL. */
ENCODE_INLINE int encode_header(const ht_envelope *env, uint8_t *header,
                                size_t cap, size_t *header_len) {
  size_t operation_len;
  int rc = check_envelope(env, &operation_len);
  if (rc != 0)
    return rc;
  if (cap < HT_FRAME_HEADER_MAX(operation_len) &&
      cap < exact_size(env, operation_len)) {
    if (exact_size(env, operation_len) - HT_FRAME_PREFIX_LEN + env->payload_len >
        HT_FRAME_HARD_MAX)
      return HT_EFRAMETOOBIG;
    return HT_ENOSPC;
  }
  /* read once: the bytes written may alias *env for the compiler */
  size_t payload_len = env->payload_len;
  uint8_t *end = put_fields(env, operation_len, payload_len,
                            header + HT_FRAME_PREFIX_LEN);
  size_t len = (size_t)(end - header);
  size_t body = len - HT_FRAME_PREFIX_LEN + payload_len;
  if (body > HT_FRAME_HARD_MAX)
    return HT_EFRAMETOOBIG;
  wire_store_be32(header, (uint32_t)body);
  *header_len = len;
  return 0;
}

int ht_frame_encode_header(const ht_envelope *env, uint8_t *header,
                           size_t cap, size_t *header_len) {
  if (env == NULL || header == NULL || header_len == NULL)
    return HT_EINVAL;
  return encode_header(env, header, cap, header_len);
}

int ht_frame_encode(const ht_envelope *env, uint8_t *buf, size_t cap,
                    size_t *frame_len) {
  if (env == NULL || buf == NULL || frame_len == NULL)
    return HT_EINVAL;
  size_t header_len;
  int rc = encode_header(env, buf, cap, &header_len);
  if (rc != 0)
    return rc;
  if (cap - header_len < env->payload_len)
    return HT_ENOSPC;
  if (env->payload_len > 0)
    memcpy(buf + header_len, env->payload, env->payload_len);
  *frame_len = header_len + env->payload_len;
  return 0;
}
