/* sim-hostile: what one hostile connection sends. Well-formed envelopes
 * come from the wire API (ht_frame_encode); the malformed ones (zero ids,
 * wrong version or type, unknown fields) are built by hand, protobuf field
 * by field, since the encoder refuses to write them.
 * Never: aim a write at a legitimate client's objects (hostile objects are
 * named "hostile.N"; clients use "cN.obj.M"), or build an unbounded
 * number of distinct objects (N < HOSTILE_OBJECTS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/wire.h"
#include "hostile.h"
#include "sim_proto.h"

#define HOSTILE_OBJECTS 128u
#define MAX_DATA 1024u

const char *const attack_names[A_KINDS] = {
    "random-bytes", "truncated", "oversize-prefix", "slowloris",
    "valid-ops",    "bad-context", "debug-flood",   "bad-envelope"};

static const char *const ops[] = {SIM_OP_WRITE, SIM_OP_READ, SIM_OP_STAT,
                                  SIM_OP_DELETE, SIM_OP_REPLICA_WRITE,
                                  SIM_OP_REPLICA_DELETE};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

int hbuf_put(hbuf *b, const void *data, size_t len) {
  if (b->len + len > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + len)
      cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (p == NULL)
      return -1;
    b->p = p;
    b->cap = cap;
  }
  if (len > 0)
    memcpy(b->p + b->len, data, len);
  b->len += len;
  return 0;
}

void hbuf_free(hbuf *b) {
  free(b->p);
  *b = (hbuf){0};
}

static int put_random(hbuf *b, test_rng *rng, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint8_t byte = (uint8_t)test_rng_next(rng);
    if (hbuf_put(b, &byte, 1) != 0)
      return -1;
  }
  return 0;
}

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* --- protobuf by hand */

static int pb_varint(hbuf *b, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  while (v >= 0x80) {
    tmp[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  tmp[n++] = (uint8_t)v;
  return hbuf_put(b, tmp, n);
}

static int pb_tag(hbuf *b, uint32_t field, uint32_t wire) {
  return pb_varint(b, (uint64_t)field << 3 | wire);
}

static int pb_fixed64(hbuf *b, uint32_t field, uint64_t v) {
  uint8_t tmp[8];
  for (int i = 0; i < 8; i++)
    tmp[i] = (uint8_t)(v >> (8 * i));
  return pb_tag(b, field, 1) | hbuf_put(b, tmp, 8);
}

static int pb_bytes(hbuf *b, uint32_t field, const void *p, size_t len) {
  return pb_tag(b, field, 2) | pb_varint(b, len) | hbuf_put(b, p, len);
}

/* An envelope as raw fields, anything allowed. */
typedef struct raw_env {
  uint64_t version, type, seq;
  const char *op;
  int32_t status;
  int has_trace;
  ht_trace_context trace;
  const void *payload;
  size_t payload_len;
  unsigned unknown_fields; /* extra fields 7..14, 16.. of any wire type */
} raw_env;

static int raw_frame(hbuf *out, const raw_env *e, test_rng *rng) {
  hbuf b = {0};
  int rc = pb_tag(&b, 1, 0) | pb_varint(&b, e->version) | pb_tag(&b, 2, 0) |
           pb_varint(&b, e->type) | pb_tag(&b, 3, 0) | pb_varint(&b, e->seq);
  if (e->op != NULL)
    rc |= pb_bytes(&b, 4, e->op, strlen(e->op));
  rc |= pb_tag(&b, 5, 0) |
        pb_varint(&b, (uint32_t)((uint32_t)e->status << 1) ^ (uint32_t)(e->status >> 31));
  if (e->has_trace) {
    hbuf t = {0};
    rc |= pb_fixed64(&t, 1, e->trace.trace_id_hi) | pb_fixed64(&t, 2, e->trace.trace_id_lo) |
          pb_fixed64(&t, 3, e->trace.span_id) | pb_fixed64(&t, 4, e->trace.parent_span_id) |
          pb_tag(&t, 5, 0) | pb_varint(&t, e->trace.flags);
    rc |= pb_bytes(&b, 6, t.p, t.len);
    hbuf_free(&t);
  }
  for (unsigned i = 0; i < e->unknown_fields; i++) {
    uint32_t field = 16 + (uint32_t)test_rng_below(rng, 1000);
    if (test_rng_below(rng, 2))
      rc |= pb_tag(&b, field, 0) | pb_varint(&b, test_rng_next(rng));
    else
      rc |= pb_bytes(&b, field, "junk", 4);
  }
  if (e->payload_len > 0)
    rc |= pb_bytes(&b, 15, e->payload, e->payload_len);
  uint8_t prefix[4];
  put_be32(prefix, (uint32_t)b.len);
  rc |= hbuf_put(out, prefix, 4) | hbuf_put(out, b.p, b.len);
  hbuf_free(&b);
  return rc == 0 ? 0 : -1;
}

/* --- well-formed frames through the wire API */

static int api_frame(hbuf *out, const ht_envelope *env) {
  size_t cap = ht_frame_header_size(env) + env->payload_len;
  if (cap == 0)
    return -1;
  uint8_t *buf = malloc(cap);
  size_t len = 0;
  int rc = buf != NULL ? ht_frame_encode(env, buf, cap, &len) : -1;
  if (rc == 0)
    rc = hbuf_put(out, buf, len);
  free(buf);
  return rc == 0 ? 0 : -1;
}

/* A sim payload: random bytes, a truncated request, or a valid one on a
 * hostile object. */
static int sim_payload(hbuf *p, test_rng *rng) {
  unsigned how = (unsigned)test_rng_below(rng, 3);
  if (how == 0)
    return put_random(p, rng, (size_t)test_rng_below(rng, 300));
  char name[32];
  size_t nlen = (size_t)snprintf(name, sizeof(name), "hostile.%u",
                                 (unsigned)test_rng_below(rng, HOSTILE_OBJECTS));
  uint8_t data[MAX_DATA];
  size_t dlen = (size_t)test_rng_below(rng, MAX_DATA);
  for (size_t i = 0; i < dlen; i++)
    data[i] = (uint8_t)test_rng_next(rng);
  sim_obj_req r = {test_rng_next(rng) >> test_rng_below(rng, 64), name, nlen, data, dlen};
  uint8_t buf[SIM_REQ_HDR + 32 + MAX_DATA];
  size_t n = sim_req_encode(buf, sizeof(buf), &r);
  if (how == 1 && n > 1)
    n = 1 + (size_t)test_rng_below(rng, n - 1); /* cut short */
  return hbuf_put(p, buf, n);
}

static void random_context(ht_trace_context *c, test_rng *rng, uint32_t flags) {
  c->trace_id_hi = test_rng_below(rng, 2) ? test_rng_next(rng) : 0;
  c->trace_id_lo = test_rng_next(rng) | 1;
  c->span_id = test_rng_next(rng) | 1;
  c->parent_span_id = test_rng_below(rng, 2) ? test_rng_next(rng) : 0;
  c->flags = flags;
}

/* One request of a real operation; trace chosen by the caller. */
static int op_request(attack *a, test_rng *rng, const ht_trace_context *trace) {
  hbuf p = {0};
  if (sim_payload(&p, rng) != 0)
    return -1;
  ht_envelope env = {.version = HT_WIRE_VERSION,
                     .type = test_rng_below(rng, 8) ? HT_MSG_REQUEST : HT_MSG_ONEWAY,
                     .sequence = test_rng_next(rng) >> test_rng_below(rng, 64),
                     .operation = ops[test_rng_below(rng, N_OPS)],
                     .has_trace = trace != NULL,
                     .payload = p.p,
                     .payload_len = p.len};
  if (trace != NULL)
    env.trace = *trace;
  int rc = api_frame(&a->bytes, &env);
  hbuf_free(&p);
  a->frames++;
  a->requests += env.type == HT_MSG_REQUEST;
  a->debug += trace != NULL && (trace->flags & HT_FLAG_DEBUG);
  return rc;
}

static int make_valid_ops(attack *a, test_rng *rng) {
  unsigned n = 1 + (unsigned)test_rng_below(rng, 32);
  for (unsigned i = 0; i < n; i++) {
    ht_trace_context c;
    random_context(&c, rng, (uint32_t)test_rng_below(rng, 4));
    if (op_request(a, rng, test_rng_below(rng, 2) ? &c : NULL) != 0)
      return -1;
  }
  a->linger_ms = 1000;
  return 0;
}

static int make_debug_flood(attack *a, test_rng *rng) {
  unsigned n = 100 + (unsigned)test_rng_below(rng, 400);
  for (unsigned i = 0; i < n; i++) {
    ht_trace_context c;
    random_context(&c, rng, HT_FLAG_DEBUG | (uint32_t)test_rng_below(rng, 2));
    if (op_request(a, rng, &c) != 0)
      return -1;
  }
  a->linger_ms = 2000;
  return 0;
}

/* Zero trace id, zero span id, or every reserved flag bit set. */
static int make_bad_context(attack *a, test_rng *rng) {
  ht_trace_context c;
  random_context(&c, rng, 0xffffffffu);
  unsigned how = (unsigned)test_rng_below(rng, 3);
  if (how == 0)
    c.trace_id_hi = c.trace_id_lo = 0;
  else if (how == 1)
    c.span_id = 0;
  else
    c.flags = ~HT_FLAG_KNOWN_MASK | (uint32_t)test_rng_below(rng, 4);
  raw_env e = {HT_WIRE_VERSION, HT_MSG_REQUEST, test_rng_next(rng), SIM_OP_STAT, 0, 1, c,
               "\0\0\0\0\0\0\0\0\0\0", 10, 0};
  a->frames = 1;
  a->requests = 1;
  a->linger_ms = 500;
  return raw_frame(&a->bytes, &e, rng);
}

static int make_bad_envelope(attack *a, test_rng *rng) {
  raw_env e = {HT_WIRE_VERSION, HT_MSG_REQUEST, test_rng_next(rng),
               ops[test_rng_below(rng, N_OPS)], 0, 0, {0}, "x", 1, 0};
  switch (test_rng_below(rng, 7)) {
  case 0: e.version = test_rng_below(rng, 2) ? 0 : 2 + test_rng_below(rng, 1000); break;
  case 1: e.type = test_rng_below(rng, 2) ? 0 : 6 + test_rng_below(rng, 1000); break;
  case 2: e.unknown_fields = 1 + (unsigned)test_rng_below(rng, 8); break; /* accepted */
  case 3: e.unknown_fields = HT_ENVELOPE_MAX_UNKNOWN_FIELDS + 1; break;  /* refused */
  case 4: e.op = "no_such_operation"; break;                             /* ENOHANDLER */
  case 5: e.type = 2 + test_rng_below(rng, 4); break; /* reply/one-way/error/control */
  default: e.status = (int32_t)test_rng_next(rng); e.op = NULL; break;
  }
  a->frames = 1;
  a->requests = e.type == HT_MSG_REQUEST;
  a->linger_ms = 500;
  return raw_frame(&a->bytes, &e, rng);
}

static int make_truncated(attack *a, test_rng *rng) {
  ht_trace_context c;
  random_context(&c, rng, HT_FLAG_SAMPLED);
  if (op_request(a, rng, &c) != 0)
    return -1;
  a->bytes.len = (size_t)test_rng_below(rng, a->bytes.len); /* 0..len-1 */
  a->frames = a->requests = a->debug = 0;
  a->close_after_send = 1;
  return 0;
}

static int make_oversize(attack *a, test_rng *rng, size_t max_frame) {
  uint8_t prefix[4];
  uint64_t span = 0xffffffffull - max_frame;
  put_be32(prefix, (uint32_t)(max_frame + 1 + test_rng_below(rng, span)));
  a->linger_ms = 500;
  return hbuf_put(&a->bytes, prefix, 4) |
         put_random(&a->bytes, rng, (size_t)test_rng_below(rng, 64));
}

/* A length just up to the maximum, a burst of body (at most 256 KiB),
 * then a drip of a few bytes every 200 ms for the linger time. */
static int make_slowloris(attack *a, test_rng *rng, size_t max_frame) {
  uint8_t prefix[4];
  size_t len = max_frame - (size_t)test_rng_below(rng, max_frame / 2);
  put_be32(prefix, (uint32_t)len);
  a->burst = 4 + (size_t)test_rng_below(rng, 256 * 1024);
  a->drip = 1 + (size_t)test_rng_below(rng, 64);
  a->linger_ms = 2000 + (uint32_t)test_rng_below(rng, 6000);
  size_t body = a->burst + a->drip * (a->linger_ms / 200 + 1);
  if (body > len)
    body = len - 1;
  return hbuf_put(&a->bytes, prefix, 4) | put_random(&a->bytes, rng, body);
}

int attack_make(attack *a, test_rng *rng, size_t max_frame, attack_kind only) {
  /* weights: the cheap kinds often, the slow ones rarely */
  static const unsigned weight[A_KINDS] = {10, 8, 6, 2, 12, 8, 6, 10};
  unsigned total = 0;
  for (unsigned i = 0; i < A_KINDS; i++)
    total += weight[i];
  unsigned pick = (unsigned)test_rng_below(rng, total);
  unsigned k = 0;
  while (pick >= weight[k])
    pick -= weight[k++];
  a->kind = only < A_KINDS ? only : (attack_kind)k;
  switch (a->kind) {
  case A_RANDOM:
    a->linger_ms = 300;
    return put_random(&a->bytes, rng, 1 + (size_t)test_rng_below(rng, 2048));
  case A_TRUNCATED: return make_truncated(a, rng);
  case A_OVERSIZE: return make_oversize(a, rng, max_frame);
  case A_SLOWLORIS: return make_slowloris(a, rng, max_frame);
  case A_VALID_OPS: return make_valid_ops(a, rng);
  case A_BAD_CONTEXT: return make_bad_context(a, rng);
  case A_DEBUG_FLOOD: return make_debug_flood(a, rng);
  default: return make_bad_envelope(a, rng);
  }
}

void attack_free(attack *a) {
  hbuf_free(&a->bytes);
  *a = (attack){0};
}

int attack_probe_frame(hbuf *out, uint64_t seq) {
  uint8_t buf[SIM_REQ_HDR + 16];
  sim_obj_req r = {0, "hostile.probe", 13, NULL, 0};
  size_t n = sim_req_encode(buf, sizeof(buf), &r);
  ht_envelope env = {.version = HT_WIRE_VERSION, .type = HT_MSG_REQUEST, .sequence = seq,
                     .operation = SIM_OP_STAT, .payload = buf, .payload_len = n};
  return api_frame(out, &env);
}
