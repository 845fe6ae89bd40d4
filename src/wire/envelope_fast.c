/* Canonical envelopes in a few compares. The layout is the one of
 * envelope_encode.c: version, type, then each of sequence, operation,
 * status, trace context (hi, lo, span, parent, flags, each optional, in
 * that order) and payload, optional, in that order, nothing after.
 * Anything else, and anything invalid (bad version, type or context,
 * overlong varint, truncation), goes to the general decoder, which keeps
 * every error class. Must never: accept bytes the general decoder
 * refuses, decode them differently, allocate anything but the
 * operation's copy from the arena. tests/wire/test_fast_path.c
 * checks both decoders agree with each other and with protobuf-c's unpack
 * on canonical, reordered, cut and mutated inputs. */
#include "envelope_fast.h"

#include <stdbool.h>
#include <string.h>

#include "envelope_codec.h"
#include "hoptrace/error.h"
#include "wire_bytes.h"

enum {
  TAG_SEQUENCE = 0x18, TAG_OPERATION = 0x22, TAG_STATUS = 0x28,
  TAG_TRACE = 0x32, TAG_PAYLOAD = 0x7a,
  TAG_TRACE_HI = 0x09, TAG_TRACE_LO = 0x11, TAG_SPAN = 0x19,
  TAG_PARENT = 0x21, TAG_FLAGS = 0x28
};

/* A varint of at most max_bytes bytes (10: any uint64; 5 for a length,
 * as protobuf-c reads them); false when it is cut, longer, or over 64
 * bits. */
static inline bool get_varint(const uint8_t **pp, const uint8_t *end,
                              unsigned max_bytes, uint64_t *out) {
  const uint8_t *p = *pp;
  if (p < end && *p < 0x80) { /* the common one-byte case */
    *out = *p;
    *pp = p + 1;
    return true;
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < max_bytes && p < end; i++) {
    uint8_t byte = *p++;
    if (i == 9 && byte > 1)
      return false;
    v |= (uint64_t)(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *out = v;
      *pp = p;
      return true;
    }
  }
  return false;
}

static inline bool get_fixed64(const uint8_t **pp, const uint8_t *end,
                               uint8_t tag, uint64_t *out) {
  const uint8_t *p = *pp;
  if (p == end || *p != tag) {
    *out = 0; /* absent */
    return true;
  }
  if (end - p < 9)
    return false;
  *out = wire_load_le64(p + 1);
  *pp = p + 9;
  return true;
}

/* The flags field, one-byte values only (above 127: the general
 * decoder); 0 when absent. */
static inline bool get_flags(const uint8_t **pp, const uint8_t *end,
                             uint32_t *out) {
  const uint8_t *p = *pp;
  *out = 0;
  if (p == end || *p != TAG_FLAGS)
    return true;
  if (end - p < 2 || p[1] >= 0x80)
    return false;
  *out = p[1];
  *pp = p + 2;
  return true;
}

/* The trace context submessage at *pp (its tag already seen) into t,
 * every field written (absent ones 0): t is not cleared first. */
__attribute__((always_inline)) static inline bool
get_trace(const uint8_t **pp, const uint8_t *end, ht_trace_context *t) {
  const uint8_t *p = *pp;
  if (p == end)
    return false;
  size_t n = *p++; /* a one-byte length: the body is at most 43 bytes */
  if (n >= 0x80 || n > (size_t)(end - p))
    return false;
  const uint8_t *tend = p + n;
  if (n >= 27 && p[0] == TAG_TRACE_HI && p[9] == TAG_TRACE_LO &&
      p[18] == TAG_SPAN) {
    /* 128-bit trace id and span id, as every hoptrace sender writes
     * them; what follows is told by the length alone: nothing, flags
     * (2 bytes), the parent (9) or both (11). Three loads, no walk (the
     * walk was 62 instructions a decode, issue 31). */
    t->trace_id_hi = wire_load_le64(p + 1);
    t->trace_id_lo = wire_load_le64(p + 10);
    t->span_id = wire_load_le64(p + 19);
    p += 27;
    n -= 27;
    t->parent_span_id = 0;
    if (n >= 9) {
      if (p[0] != TAG_PARENT)
        return false;
      t->parent_span_id = wire_load_le64(p + 1);
      p += 9;
      n -= 9;
    }
    t->flags = 0;
    if (n == 2) {
      if (p[0] != TAG_FLAGS || p[1] >= 0x80)
        return false; /* flags above 127: the general decoder */
      t->flags = p[1];
    } else if (n != 0) {
      return false;
    }
  } else if (!get_fixed64(&p, tend, TAG_TRACE_HI, &t->trace_id_hi) ||
             !get_fixed64(&p, tend, TAG_TRACE_LO, &t->trace_id_lo) ||
             !get_fixed64(&p, tend, TAG_SPAN, &t->span_id) ||
             !get_fixed64(&p, tend, TAG_PARENT, &t->parent_span_id) ||
             !get_flags(&p, tend, &t->flags) || p != tend) {
    return false;
  }
  if ((t->trace_id_hi | t->trace_id_lo) == 0 || t->span_id == 0)
    return false;
  *pp = tend;
  return true;
}

/* The operation's copy when the arena's base block has no room for it
 * or it is longer than a short copy: out of line, so that the common
 * path makes no call but tail calls and saves no register. */
static int __attribute__((noinline))
copy_operation_slow(ht_arena *arena, const uint8_t *op, size_t op_len,
                    ht_envelope *env) {
  char *copy = ht_arena_alloc(arena, op_len + 1);
  if (copy == NULL)
    return HT_ENOMEM;
  memcpy(copy, op, op_len);
  copy[op_len] = '\0';
  env->operation = copy;
  return 0;
}

/* Inline into both entries: a call was 10 instructions a message. *env
 * is written as the fields are read, each once, so that fewer values stay
 * live (GCC saved six registers with them all kept for the end, four
 * now), and every call is a tail call: the slow copy, and with fallback
 * the general decoder wherever the fast path gives up (without fallback,
 * for the tests' entry, ENVELOPE_NOT_CANONICAL). 212 instructions a
 * decode of bench/recording's request, the arena's bump and the copy
 * included, 162 now (issue 31). Where the fast path gives up *env holds
 * what was read: the general decoder writes all of it or fails. */
__attribute__((always_inline)) static inline int
decode_canonical(ht_arena *arena, const uint8_t *data, size_t len,
                 ht_envelope *env, bool fallback) {
  const uint8_t *p = data, *end = data + len;
  if (len < 4 || p[0] != 0x08 || p[1] == 0 || p[1] > HT_WIRE_VERSION ||
      p[2] != 0x10 || p[3] < HT_MSG_REQUEST || p[3] > HT_MSG_ERROR)
    goto not_canonical;
  env->version = p[1];
  env->type = (ht_msg_type)p[3];
  p += 4;
  uint64_t v;
  if (p < end && *p == TAG_SEQUENCE) {
    p++;
    if (!get_varint(&p, end, 10, &env->sequence))
      goto not_canonical;
  } else {
    env->sequence = 0;
  }
  const uint8_t *op = NULL;
  size_t op_len = 0;
  if (p < end && *p == TAG_OPERATION) {
    p++;
    if (!get_varint(&p, end, 5, &v) || v > (uint64_t)(end - p))
      goto not_canonical;
    op = p;
    op_len = (size_t)v;
    p += op_len;
  }
  env->status = 0;
  if (p < end && *p == TAG_STATUS) {
    p++;
    if (!get_varint(&p, end, 5, &v) || v > UINT32_MAX)
      goto not_canonical;
    uint32_t z = (uint32_t)v; /* zigzag, as protobuf-c's sint32 */
    env->status = (int32_t)((z >> 1) ^ (uint32_t)-(int32_t)(z & 1));
  }
  env->has_trace = p < end && *p == TAG_TRACE;
  if (env->has_trace) {
    p++;
    if (!get_trace(&p, end, &env->trace))
      goto not_canonical;
  } else {
    env->trace = (ht_trace_context){0};
  }
  if (p < end && *p == TAG_PAYLOAD) {
    p++;
    if (!get_varint(&p, end, 5, &v) || v != (uint64_t)(end - p))
      goto not_canonical;
    env->payload_len = (size_t)v;
    env->payload = v != 0 ? p : NULL;
  } else if (p == end) {
    env->payload_len = 0;
    env->payload = NULL;
  } else {
    goto not_canonical;
  }
  if (op_len == 0) {
    env->operation = "";
    return 0;
  }
  char *copy;
  if (op_len > 16 || (copy = ht_arena_alloc_quick(arena, op_len + 1)) == NULL)
    return copy_operation_slow(arena, op, op_len, env);
  wire_copy_upto16(copy, op, op_len);
  copy[op_len] = '\0';
  env->operation = copy;
  return 0;
not_canonical:
  if (fallback) /* a tail call, from every place that gives up */
    return ht_wire_envelope_decode_general(arena, data, len, env);
  return ENVELOPE_NOT_CANONICAL;
}

int ht_wire_envelope_decode_canonical(ht_arena *arena, const uint8_t *data,
                                      size_t len, ht_envelope *env) {
  return decode_canonical(arena, data, len, env, false);
}

/* Here and not in envelope_codec.c: the canonical path inlines into it
 * (a call less a message, issue 31), and gives up to the general decoder
 * by a tail call (the fast path allocated nothing when it gave up). */
int ht_wire_envelope_decode(ht_arena *arena, const uint8_t *data, size_t len,
                            ht_envelope *env) {
  return decode_canonical(arena, data, len, env, true);
}
