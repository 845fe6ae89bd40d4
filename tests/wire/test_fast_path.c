/* The canonical fast path and the general decoder against each other and
 * against protobuf-c's unpack (the oracle): the same answer, error class
 * and every field, on canonical frames, on non-canonical encodings of the
 * same envelopes (reordered, explicit zeros, overlong varints, unknown or
 * repeated fields), on every truncation and on byte mutations; and the
 * fast path really takes the canonical frames. Must never: compare a
 * decoder with itself only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "envelope_gen.h"
#include "envelope_oracle.h"
#include "hoptrace/error.h"
#include "hoptrace/wire.h"
#include "pb_builder.h"
#include "wire/arena.h"
#include "wire/envelope_codec.h"
#include "wire/envelope_fast.h"

#define CASES 3000

static uint8_t frame_buf[1 << 16];

/* Both decoders on data[0..len): same rc, same fields, same payload
 * view, and protobuf-c's verdict. Returns the rc. */
static int agree(const uint8_t *data, size_t len, const char *what, int i) {
  ht_arena a, b;
  ht_arena_init(&a);
  ht_arena_init(&b);
  ht_envelope fast, general;
  memset(&fast, 0, sizeof(fast));
  memset(&general, 0, sizeof(general));
  int rf = ht_wire_envelope_decode(&a, data, len, &fast);
  int rg = ht_wire_envelope_decode_general(&b, data, len, &general);
  if (rf != rg)
    fail_msg("%s %d (len %zu): fast path %s, general %s", what, i, len,
             ht_err_name(rf), ht_err_name(rg));
  if (rf == 0) {
    /* both hand out the payload in place: the very same view */
    if (!envelope_matches(&fast, &general) || fast.payload != general.payload)
      fail_msg("%s %d (len %zu): decoded differently", what, i, len);
  }
  const char *why = oracle_disagrees(data, len, rf, &fast);
  if (why == NULL)
    why = oracle_disagrees(data, len, rg, &general);
  if (why != NULL)
    fail_msg("%s %d (len %zu, %s): %s", what, i, len, ht_err_name(rf), why);
  ht_arena_release(&a);
  ht_arena_release(&b);
  return rf;
}

/* The fast path alone; *out's operation lives in `scratch` (forgotten at
 * each call, released by the test's teardown). */
static ht_arena scratch;

static int canonical_rc(const uint8_t *data, size_t len, ht_envelope *out) {
  ht_arena_reset(&scratch, 1u << 20);
  return ht_wire_envelope_decode_canonical(&scratch, data, len, out);
}

static int release_scratch(void **state) {
  (void)state;
  ht_arena_release(&scratch);
  return 0;
}

static size_t encode(const ht_envelope *env) {
  size_t len;
  assert_int_equal(ht_frame_encode(env, frame_buf, sizeof(frame_buf), &len), 0);
  return len;
}

static void canonical_frames_take_the_fast_path(void **state) {
  (void)state;
  test_rng rng = {61};
  for (int i = 0; i < CASES; i++) {
    gen_envelope g;
    gen_envelope_fill(&g, &rng);
    size_t len = encode(&g.env);
    const uint8_t *body = frame_buf + HT_FRAME_PREFIX_LEN;
    size_t body_len = len - HT_FRAME_PREFIX_LEN;
    ht_envelope out;
    int rc = canonical_rc(body, body_len, &out);
    bool small_flags = !g.env.has_trace || g.env.trace.flags < 0x80;
    /* flags above 127 take two varint bytes: left to the general path */
    assert_int_equal(rc, small_flags ? 0 : ENVELOPE_NOT_CANONICAL);
    assert_int_equal(agree(body, body_len, "canonical", i), 0);
  }
}

static void typical_traced_request_is_canonical(void **state) {
  (void)state;
  uint8_t payload[64] = {1, 2, 3};
  ht_envelope env = {.version = HT_WIRE_VERSION, .type = HT_MSG_REQUEST,
                     .sequence = 12345, .operation = "echo",
                     .has_trace = true,
                     .trace = {0x1111, 0x2222, 0x3333, 0x4444, HT_FLAG_SAMPLED},
                     .payload = payload, .payload_len = sizeof(payload)};
  size_t len = encode(&env);
  ht_envelope out;
  assert_int_equal(canonical_rc(frame_buf + 4, len - 4, &out), 0);
  assert_true(envelope_matches(&env, &out));
  assert_ptr_equal(out.payload, frame_buf + 4 + (len - 4 - sizeof(payload)));
  /* root span (parent 0), 64-bit trace id (hi 0), flags 0: fields left out */
  env.trace = (ht_trace_context){0, 7, 8, 0, 0};
  len = encode(&env);
  assert_int_equal(canonical_rc(frame_buf + 4, len - 4, &out), 0);
  assert_true(envelope_matches(&env, &out));
}

/* Operations of every length around the short-copy cases (1-3, 4-7,
 * 8-16 bytes, then memcpy): written and read back byte for byte by both
 * decoders and protobuf-c, the copy NUL-terminated, the frame's bytes
 * past the operation untouched by its copy. */
static void every_short_operation_length_round_trips(void **state) {
  (void)state;
  char name[41];
  for (size_t n = 0; n <= 40; n++) {
    for (size_t i = 0; i < n; i++)
      name[i] = (char)('a' + (i * 7 + n) % 26);
    name[n] = '\0';
    ht_envelope env = {.type = HT_MSG_REQUEST, .sequence = 9, .operation = name,
                       .has_trace = true, .trace = {1, 2, 3, 0, 0}};
    size_t len = encode(&env);
    /* prefix, version, type, sequence, then (none for "") the tag, a
     * one-byte length and the operation */
    size_t at = 4 + 6 + (n > 0 ? 2 : 0);
    assert_memory_equal(frame_buf + at, name, n);
    assert_int_equal(frame_buf[at + n], 0x32); /* the context's tag */
    ht_envelope out;
    assert_int_equal(canonical_rc(frame_buf + 4, len - 4, &out), 0);
    assert_string_equal(out.operation, name);
    assert_int_equal(agree(frame_buf + 4, len - 4, "operation", (int)n), 0);
  }
}

/* The envelope of g written field by field, some fields in a
 * non-canonical way, chosen by `variant` bits. */
static void build_variant(const gen_envelope *g, unsigned variant,
                          pb_builder *b) {
  const ht_envelope *e = &g->env;
  pb_builder t = {0};
  *b = (pb_builder){0};
  if (e->has_trace) {
    const ht_trace_context *c = &e->trace;
    if (variant & 1) /* flags first */
      pb_tag(&t, 5, 0), pb_varint(&t, c->flags);
    if (c->trace_id_hi || (variant & 2)) /* explicit zero */
      pb_tag(&t, 1, 1), pb_fixed64(&t, c->trace_id_hi);
    pb_tag(&t, 2, 1), pb_fixed64(&t, c->trace_id_lo);
    pb_tag(&t, 3, 1), pb_fixed64(&t, c->span_id);
    if (c->parent_span_id || (variant & 2))
      pb_tag(&t, 4, 1), pb_fixed64(&t, c->parent_span_id);
    if (!(variant & 1) && (c->flags || (variant & 2)))
      pb_tag(&t, 5, 0), pb_varint(&t, c->flags);
    if (variant & 4) /* a future field */
      pb_tag(&t, 9, 0), pb_varint(&t, 1);
  }
  if (variant & 8) /* type before version */
    pb_tag(b, 2, 0), pb_varint(b, e->type);
  pb_tag(b, 1, 0), pb_varint(b, e->version);
  if (!(variant & 8))
    pb_tag(b, 2, 0), pb_varint(b, e->type);
  if (e->sequence || (variant & 2)) {
    pb_tag(b, 3, 0);
    if (variant & 16) /* overlong: one redundant continuation byte */
      pb_byte(b, (uint8_t)(e->sequence | 0x80)), pb_varint(b, e->sequence >> 7);
    else
      pb_varint(b, e->sequence);
  }
  size_t oplen = strlen(g->operation);
  if (oplen || (variant & 2))
    pb_tag(b, 4, 2), pb_varint(b, oplen), pb_bytes(b, g->operation, oplen);
  if (e->status || (variant & 2))
    pb_tag(b, 5, 0), pb_varint(b, ((uint32_t)e->status << 1) ^ (uint32_t)(e->status >> 31));
  if (e->has_trace) {
    if (variant & 32) /* split in two: protobuf merges them */
      pb_tag(b, 6, 2), pb_varint(b, 0);
    pb_submessage(b, 6, &t);
  }
  if (variant & 64) /* unknown field before the payload */
    pb_tag(b, 20, 2), pb_varint(b, 2), pb_bytes(b, "zz", 2);
  if (e->payload_len || (variant & 2)) {
    pb_tag(b, 15, 2), pb_varint(b, e->payload_len);
    if (e->payload_len > 0)
      pb_bytes(b, e->payload, e->payload_len);
  }
  if (variant & 128) /* trailing unknown field */
    pb_tag(b, 21, 0), pb_varint(b, 5);
}

static void non_canonical_encodings_decode_identically(void **state) {
  (void)state;
  test_rng rng = {62};
  for (int i = 0; i < CASES; i++) {
    gen_envelope g;
    gen_envelope_fill(&g, &rng);
    g.env.payload_len %= 1024; /* the builder holds 4 KiB */
    if (g.env.payload_len == 0)
      g.env.payload = NULL;
    unsigned variant = (unsigned)test_rng_below(&rng, 256);
    pb_builder b;
    build_variant(&g, variant, &b);
    assert_int_equal(agree(b.buf, b.len, "variant", i), 0);
    ht_arena a;
    ht_arena_init(&a);
    ht_envelope out;
    assert_int_equal(ht_wire_envelope_decode(&a, b.buf, b.len, &out), 0);
    if (!envelope_matches(&g.env, &out))
      fail_msg("variant %d (bits 0x%x) decoded wrong", i, variant);
    ht_arena_release(&a);
  }
}

static void every_truncation_agrees(void **state) {
  (void)state;
  test_rng rng = {63};
  for (int i = 0; i < 300; i++) {
    gen_envelope g;
    gen_envelope_fill(&g, &rng);
    g.env.payload_len %= 40; /* keep the cuts about the header */
    if (g.env.payload_len == 0)
      g.env.payload = NULL;
    size_t len = encode(&g.env);
    for (size_t cut = 0; cut < len - HT_FRAME_PREFIX_LEN; cut++)
      agree(frame_buf + HT_FRAME_PREFIX_LEN, cut, "cut", i);
  }
}

static void mutations_agree(void **state) {
  (void)state;
  test_rng rng = {64};
  uint8_t copy[1024];
  for (int i = 0; i < 20000; i++) {
    gen_envelope g;
    gen_envelope_fill(&g, &rng);
    g.env.payload_len %= 64;
    if (g.env.payload_len == 0)
      g.env.payload = NULL;
    size_t len = encode(&g.env) - HT_FRAME_PREFIX_LEN;
    memcpy(copy, frame_buf + HT_FRAME_PREFIX_LEN, len);
    unsigned flips = 1 + (unsigned)test_rng_below(&rng, 3);
    for (unsigned k = 0; k < flips; k++) {
      size_t at = (size_t)test_rng_below(&rng, len);
      copy[at] = test_rng_below(&rng, 2) ? (uint8_t)test_rng_next(&rng)
                                         : (uint8_t)(copy[at] ^ (1u << test_rng_below(&rng, 8)));
    }
    agree(copy, len, "mutation", i);
  }
}

static void bad_contexts_and_versions_go_to_the_general_path(void **state) {
  (void)state;
  static const uint8_t zero_span[] = {0x08, 1, 0x10, 1, 0x32, 9,
                                      0x11, 1, 0, 0, 0, 0, 0, 0, 0};
  static const uint8_t version_2[] = {0x08, 2, 0x10, 1};
  static const uint8_t type_0[] = {0x08, 1, 0x10, 0};
  static const uint8_t big_status[] = {0x08, 1, 0x10, 4, 0x28, 0xff, 0xff, 0xff, 0xff, 0x7f};
  ht_envelope out;
  assert_int_equal(canonical_rc(zero_span, sizeof(zero_span), &out), ENVELOPE_NOT_CANONICAL);
  assert_int_equal(agree(zero_span, sizeof(zero_span), "zero span", 0), HT_EBADCONTEXT);
  assert_int_equal(canonical_rc(version_2, sizeof(version_2), &out), ENVELOPE_NOT_CANONICAL);
  assert_int_equal(agree(version_2, sizeof(version_2), "version", 0), HT_EVERSION);
  assert_int_equal(agree(type_0, sizeof(type_0), "type", 0), HT_EMSGTYPE);
  agree(big_status, sizeof(big_status), "status", 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(canonical_frames_take_the_fast_path),
      cmocka_unit_test(typical_traced_request_is_canonical),
      cmocka_unit_test(every_short_operation_length_round_trips),
      cmocka_unit_test(non_canonical_encodings_decode_identically),
      cmocka_unit_test(every_truncation_agrees),
      cmocka_unit_test(mutations_agree),
      cmocka_unit_test(bad_contexts_and_versions_go_to_the_general_path),
  };
  return cmocka_run_group_tests(tests, NULL, release_scratch);
}
