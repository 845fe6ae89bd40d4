/* Seeded random envelopes and field-by-field comparison for wire tests. */
#ifndef HT_TEST_ENVELOPE_GEN_H
#define HT_TEST_ENVELOPE_GEN_H

#include <string.h>

#include "hoptrace/wire.h"
#include "test_rng.h"

typedef struct gen_envelope {
  ht_envelope env;
  char operation[48];
  uint8_t payload[512];
} gen_envelope;

static inline void gen_envelope_fill(gen_envelope *g, test_rng *rng) {
  memset(g, 0, sizeof(*g));
  size_t op_len = (size_t)test_rng_below(rng, sizeof(g->operation));
  for (size_t i = 0; i < op_len; i++)
    g->operation[i] = (char)(' ' + test_rng_below(rng, 95));
  size_t payload_len = (size_t)test_rng_below(rng, sizeof(g->payload) + 1);
  for (size_t i = 0; i < payload_len; i++)
    g->payload[i] = (uint8_t)test_rng_next(rng);
  g->env = (ht_envelope){
      .version = HT_WIRE_VERSION,
      .type = (ht_msg_type)(1 + test_rng_below(rng, HT_MSG_ERROR)),
      .sequence = test_rng_below(rng, 2) ? test_rng_next(rng) : 0,
      .operation = g->operation,
      .status = (int32_t)(uint32_t)test_rng_next(rng) >> test_rng_below(rng, 32),
      .has_trace = test_rng_below(rng, 4) != 0,
      .payload = payload_len ? g->payload : NULL,
      .payload_len = payload_len,
  };
  if (g->env.has_trace) {
    g->env.trace = (ht_trace_context){
        .trace_id_hi = test_rng_below(rng, 3) ? test_rng_next(rng) : 0,
        .trace_id_lo = test_rng_next(rng) | 1,
        .span_id = test_rng_next(rng) | 1,
        .parent_span_id = test_rng_below(rng, 3) ? test_rng_next(rng) : 0,
        /* reserved bits included: they must survive */
        .flags = (uint32_t)test_rng_next(rng) >> test_rng_below(rng, 32),
    };
  }
}

/* 1 when decoded matches original in every field. */
static inline int envelope_matches(const ht_envelope *a, const ht_envelope *b) {
  if (a->version != b->version || a->type != b->type ||
      a->sequence != b->sequence || a->status != b->status ||
      a->has_trace != b->has_trace || a->payload_len != b->payload_len)
    return 0;
  if (strcmp(a->operation ? a->operation : "", b->operation ? b->operation : ""))
    return 0;
  if (a->has_trace && !ht_context_equal(&a->trace, &b->trace))
    return 0;
  return a->payload_len == 0 ||
         memcmp(a->payload, b->payload, a->payload_len) == 0;
}

#endif
