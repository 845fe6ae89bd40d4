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
  if ((int)pb->type < HT_MSG_REQUEST || (int)pb->type > HT_MSG_CONTROL)
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

/* Whether the bytes leave room for a limit the library keeps and
 * protobuf-c does not: a varint over 64 bits (9 continuation bytes, then
 * a byte above 1), a field number over 2^29-1 (a 5-byte tag) or an
 * overlong 0, more unknown fields than HT_ENVELOPE_MAX_UNKNOWN_FIELDS. */
static inline bool oracle_limit_possible(const uint8_t *d, size_t len,
                                         size_t unknown_fields) {
  if (unknown_fields > HT_ENVELOPE_MAX_UNKNOWN_FIELDS)
    return true;
  /* protobuf-c forgets the unknown fields of a replaced trace context */
  if (len > 2 * HT_ENVELOPE_MAX_UNKNOWN_FIELDS && unknown_fields > 0)
    return true;
  for (size_t i = 0; i < len; i++) {
    size_t run = 0, zeros = 0;
    while (i + run < len && run < 10 && (d[i + run] & 0x80)) {
      zeros += run > 0 && d[i + run] == 0x80;
      run++;
    }
    if (i + run == len || run == 0)
      continue;
    uint8_t last = d[i + run];
    if ((run == 9 && last > 1) || (run == 4 && last >= 0x10) ||
        (run <= 4 && (d[i] & 0xf8) == 0x80 && zeros == run - 1 && last == 0))
      return true;
  }
  return false;
}

/* NULL when rc and *env, a library decoder's answer on data[0..len),
 * agree with protobuf-c's unpack, else what differs. */
static inline const char *oracle_disagrees(const uint8_t *data, size_t len,
                                           int rc, const ht_envelope *env) {
  Hoptrace__Wire__Envelope *pb = hoptrace__wire__envelope__unpack(NULL, len, data);
  ht_envelope want;
  int want_rc = oracle_verdict(pb, &want);
  const char *why = NULL;
  size_t unknown = pb == NULL ? 0 : pb->base.n_unknown_fields +
                   (pb->trace ? pb->trace->base.n_unknown_fields : 0);
  const uint8_t *payload = env->payload;
  if (pb == NULL && rc == 0)
    why = "accepts what protobuf-c refuses";
  else if (pb != NULL && rc != want_rc &&
           !((rc == HT_EVARINT || rc == HT_EMALFORMED || rc == HT_EVERSION) &&
             oracle_limit_possible(data, len, unknown)))
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
