/* protobuf-c's generated unpack as the oracle of the library's envelope
 * decoders (the canonical fast path and the general decoder): the same
 * accept/reject, the same values, the payload in place. Test code only.
 * Must never: be linked into the library (tests link ht_wire_pb_oracle). */
#ifndef HT_TEST_ENVELOPE_ORACLE_H
#define HT_TEST_ENVELOPE_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envelope_gen.h"
#include "hoptrace.pb-c.h"
#include "hoptrace/error.h"
#include "hoptrace/wire.h"

/* protobuf-c's answer, then the checks the library makes on values. */
static inline int oracle_verdict(const Hoptrace__Wire__Envelope *pb,
                                 ht_envelope *env) {
  if (pb == NULL)
    return HT_EMALFORMED;
  if (pb->version == 0)
    return HT_EMALFORMED;
  if (pb->version > HT_WIRE_VERSION)
    return HT_EVERSION;
  if ((int)pb->type < HT_MSG_REQUEST || (int)pb->type > HT_MSG_ERROR)
    return HT_EMSGTYPE;
  *env = (ht_envelope){
      .version = pb->version, .type = (ht_msg_type)pb->type,
      .sequence = pb->sequence, .operation = pb->operation ? pb->operation : "",
      .status = pb->status, .has_trace = pb->trace != NULL,
      .payload = pb->payload.data, .payload_len = pb->payload.len};
  if (pb->trace != NULL) {
    env->trace = (ht_trace_context){pb->trace->trace_id_hi, pb->trace->trace_id_lo,
                                    pb->trace->span_id, pb->trace->parent_span_id,
                                    pb->trace->flags};
    if (ht_context_validate(&env->trace) != 0)
      return HT_EBADCONTEXT;
  }
  return 0;
}

/* A varint of bytes protobuf-c accepted (so it ends within 10 bytes);
 * *over when it has more than 64 bits. */
static inline uint64_t oracle_varint(const uint8_t **p, const uint8_t *end,
                                     bool *over) {
  uint64_t v = 0;
  for (unsigned i = 0; *p < end; i++) {
    uint8_t byte = *(*p)++;
    if (i == 9 && byte > 1)
      *over = true;
    if (i < 10)
      v |= (uint64_t)(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0)
      break;
  }
  return v;
}

/* Walks a message protobuf-c accepted, with its descriptor, for the
 * limits the library keeps and protobuf-c does not: a varint over 64
 * bits, a field number 0 or over 2^29-1, more unknown fields in all than
 * HT_ENVELOPE_MAX_UNKNOWN_FIELDS. */
static inline void oracle_walk(const ProtobufCMessageDescriptor *desc,
                               const uint8_t *p, const uint8_t *end,
                               bool *hit, size_t *unknown) {
  while (p < end) {
    uint64_t tag = oracle_varint(&p, end, hit), field = tag >> 3;
    const ProtobufCFieldDescriptor *fd = NULL;
    if (field == 0 || field > 0x1fffffffu)
      *hit = true;
    else
      fd = protobuf_c_message_descriptor_get_field(desc, (unsigned)field);
    if (fd == NULL && ++*unknown > HT_ENVELOPE_MAX_UNKNOWN_FIELDS)
      *hit = true;
    uint64_t n = (tag & 7) == 1 ? 8 : (tag & 7) == 5 ? 4 : 0;
    if ((tag & 7) == 0)
      oracle_varint(&p, end, hit);
    if ((tag & 7) == 2) {
      n = oracle_varint(&p, end, hit);
      if (fd != NULL && fd->type == PROTOBUF_C_TYPE_MESSAGE)
        oracle_walk(fd->descriptor, p, p + n, hit, unknown);
    }
    p += n;
  }
}

/* NULL when rc and *env, a library decoder's answer on data[0..len),
 * agree with protobuf-c's unpack, else what differs. */
static inline const char *oracle_disagrees(const uint8_t *data, size_t len,
                                           int rc, const ht_envelope *env) {
  Hoptrace__Wire__Envelope *pb = hoptrace__wire__envelope__unpack(NULL, len, data);
  ht_envelope want;
  int want_rc = oracle_verdict(pb, &want);
  const char *why = NULL;
  bool limit = false;
  size_t unknown = 0;
  if (pb != NULL)
    oracle_walk(&hoptrace__wire__envelope__descriptor, data, data + len,
                &limit, &unknown);
  const uint8_t *payload = env->payload;
  if (pb == NULL && rc == 0)
    why = "accepts what protobuf-c refuses";
  else if (limit && rc != HT_EVARINT && rc != HT_EMALFORMED && rc != HT_EVERSION)
    why = "misses a limit protobuf-c does not keep";
  else if (pb != NULL && !limit && rc != want_rc)
    why = "refuses differently from protobuf-c and the value checks";
  else if (rc == 0 && !envelope_matches(env, &want))
    why = "decodes differently from protobuf-c";
  else if (rc == 0 && env->payload_len > 0 &&
           (payload < data || payload + env->payload_len > data + len))
    why = "payload not handed out in place";
  else if (rc == 0 && env->payload_len == 0 && env->payload != NULL)
    why = "empty payload not NULL";
  if (pb != NULL)
    hoptrace__wire__envelope__free_unpacked(pb, NULL);
  return why;
}

#endif
