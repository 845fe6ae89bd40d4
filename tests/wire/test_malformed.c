/* Every class of malformed envelope gets its own error, both through
 * ht_envelope_decode and through a frame reader (which then stays
 * poisoned). Must never: build counter-examples with the encoder (they
 * are built by hand). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hoptrace/error.h"
#include "hoptrace/wire.h"
#include "pb_builder.h"

/* A valid envelope with every field; boundaries[] notes where each field
 * ends so truncation tests know which cuts are field boundaries. */
typedef struct sample {
  pb_builder b;
  size_t boundaries[16];
  size_t n_boundaries;
} sample;

static void mark(sample *s) { s->boundaries[s->n_boundaries++] = s->b.len; }

static void build_sample(sample *s) {
  *s = (sample){0};
  pb_builder trace = {0};
  pb_tag(&trace, 1, 1), pb_fixed64(&trace, 0x1111);
  pb_tag(&trace, 2, 1), pb_fixed64(&trace, 0x2222);
  pb_tag(&trace, 3, 1), pb_fixed64(&trace, 0x3333);
  pb_tag(&trace, 4, 1), pb_fixed64(&trace, 0x4444);
  pb_tag(&trace, 5, 0), pb_varint(&trace, 1);
  pb_tag(&s->b, 1, 0), pb_varint(&s->b, 1), mark(s);
  pb_tag(&s->b, 2, 0), pb_varint(&s->b, HT_MSG_REQUEST), mark(s);
  pb_tag(&s->b, 3, 0), pb_varint(&s->b, 1ull << 40), mark(s);
  pb_tag(&s->b, 4, 2), pb_varint(&s->b, 9), pb_bytes(&s->b, "osd.write", 9), mark(s);
  pb_tag(&s->b, 5, 0), pb_varint(&s->b, 3), mark(s);
  pb_submessage(&s->b, 6, &trace), mark(s);
  pb_tag(&s->b, 15, 2), pb_varint(&s->b, 5), pb_bytes(&s->b, "hello", 5), mark(s);
}

static int decode(const pb_builder *b) {
  ht_frame_reader *reader;
  assert_int_equal(ht_frame_reader_new(0, &reader), 0);
  ht_envelope env;
  int direct = ht_envelope_decode(reader, b->buf, b->len, &env);
  /* the same bytes as a frame must give the same answer */
  uint8_t frame[sizeof(b->buf) + 4];
  size_t len = pb_frame(b, frame), used;
  int framed = ht_frame_reader_feed(reader, frame, len, &used, &env);
  assert_int_equal(framed, direct);
  if (framed != 0) {
    assert_int_equal(ht_frame_reader_feed(reader, frame, len, &used, &env), framed);
    assert_int_equal(ht_frame_reader_finish(reader), framed);
  }
  ht_frame_reader_free(reader);
  return direct;
}

static void sample_is_valid(void **state) {
  (void)state;
  sample s;
  build_sample(&s);
  assert_int_equal(decode(&s.b), 0);
}

static int is_boundary(const sample *s, size_t cut) {
  for (size_t i = 0; i < s->n_boundaries; i++)
    if (s->boundaries[i] == cut)
      return 1;
  return 0;
}

static void truncated_at_every_offset(void **state) {
  (void)state;
  sample s;
  build_sample(&s);
  for (size_t cut = 0; cut < s.b.len; cut++) {
    pb_builder cut_b = s.b;
    cut_b.len = cut;
    int rc = decode(&cut_b);
    if (cut == 0)
      assert_int_equal(rc, HT_EMALFORMED); /* no version */
    else if (cut == s.boundaries[0])
      assert_int_equal(rc, HT_EMSGTYPE); /* version, no type */
    else if (is_boundary(&s, cut))
      assert_int_equal(rc, 0); /* a shorter valid envelope */
    else if (rc != HT_ETRUNCATED)
      fail_msg("cut at %zu: %s", cut, ht_err_name(rc));
  }
}

static void bad_varints(void **state) {
  (void)state;
  pb_builder b = {0};
  pb_tag(&b, 1, 0), pb_varint(&b, 1);
  pb_tag(&b, 3, 0);
  for (int i = 0; i < 10; i++)
    pb_byte(&b, 0xff); /* 11-byte varint */
  pb_byte(&b, 0x01);
  assert_int_equal(decode(&b), HT_EVARINT);

  pb_builder ten = {0};
  pb_tag(&ten, 1, 0), pb_varint(&ten, 1);
  pb_tag(&ten, 3, 0);
  for (int i = 0; i < 9; i++)
    pb_byte(&ten, 0xff);
  pb_byte(&ten, 0x02); /* tenth byte carries bits past 64 */
  assert_int_equal(decode(&ten), HT_EVARINT);

  pb_builder tag = {0};
  for (int i = 0; i < 11; i++)
    pb_byte(&tag, 0x80);
  assert_int_equal(decode(&tag), HT_EVARINT);
}

static void wrong_wire_types(void **state) {
  (void)state;
  pb_builder version_as_bytes = {0};
  pb_tag(&version_as_bytes, 1, 2), pb_varint(&version_as_bytes, 1), pb_byte(&version_as_bytes, 1);
  assert_int_equal(decode(&version_as_bytes), HT_EWIRETYPE);

  pb_builder trace_as_varint = {0};
  pb_tag(&trace_as_varint, 1, 0), pb_varint(&trace_as_varint, 1);
  pb_tag(&trace_as_varint, 6, 0), pb_varint(&trace_as_varint, 5);
  assert_int_equal(decode(&trace_as_varint), HT_EWIRETYPE);

  pb_builder inner = {0}, span_as_varint = {0};
  pb_tag(&inner, 3, 0), pb_varint(&inner, 5);
  pb_tag(&span_as_varint, 1, 0), pb_varint(&span_as_varint, 1);
  pb_submessage(&span_as_varint, 6, &inner);
  assert_int_equal(decode(&span_as_varint), HT_EWIRETYPE);

  for (uint32_t wt = 3; wt <= 7; wt++) {
    if (wt == 5)
      continue;
    pb_builder unknown = {0};
    pb_tag(&unknown, 1, 0), pb_varint(&unknown, 1);
    pb_tag(&unknown, 77, wt), pb_varint(&unknown, 0);
    assert_int_equal(decode(&unknown), HT_EWIRETYPE);
  }
}

static void trailing_garbage(void **state) {
  (void)state;
  static const struct {
    uint8_t bytes[12];
    size_t len;
    int error;
  } tails[] = {
      {{0x00}, 1, HT_EMALFORMED},          /* field number 0 */
      {{0x80}, 1, HT_ETRUNCATED},          /* tag varint never ends */
      {{0x7a, 0x10, 'x'}, 3, HT_ETRUNCATED}, /* payload longer than frame */
      {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
       12, HT_EVARINT},
      {{0x0b}, 1, HT_EWIRETYPE},           /* start-group of field 1 */
      {{0xf8, 0xff, 0xff, 0xff, 0x7f}, 5, HT_EMALFORMED}, /* field > 2^29 */
  };
  for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
    sample s;
    build_sample(&s);
    pb_bytes(&s.b, tails[i].bytes, tails[i].len);
    int rc = decode(&s.b);
    if (rc != tails[i].error)
      fail_msg("tail %zu: got %s, want %s", i, ht_err_name(rc),
               ht_err_name(tails[i].error));
  }
}

static void length_overflowing_the_input(void **state) {
  (void)state;
  pb_builder b = {0};
  pb_tag(&b, 1, 0), pb_varint(&b, 1);
  pb_tag(&b, 4, 2), pb_varint(&b, 1ull << 62), pb_bytes(&b, "op", 2);
  assert_int_equal(decode(&b), HT_ETRUNCATED);
  pb_builder inner = {0}, sub = {0};
  pb_tag(&inner, 1, 1), pb_fixed64(&inner, 1);
  pb_tag(&sub, 1, 0), pb_varint(&sub, 1);
  pb_tag(&sub, 6, 2), pb_varint(&sub, inner.len + 3), pb_bytes(&sub, inner.buf, inner.len);
  assert_int_equal(decode(&sub), HT_ETRUNCATED);
}

static void version_type_and_context_rules(void **state) {
  (void)state;
  pb_builder v0 = {0};
  pb_tag(&v0, 1, 0), pb_varint(&v0, 0);
  pb_tag(&v0, 2, 0), pb_varint(&v0, 1);
  assert_int_equal(decode(&v0), HT_EMALFORMED);

  pb_builder v2 = {0};
  pb_tag(&v2, 1, 0), pb_varint(&v2, 2);
  pb_tag(&v2, 2, 0), pb_varint(&v2, 1);
  assert_int_equal(decode(&v2), HT_EVERSION);

  /* a newer version's unreadable encoding still says "version" */
  pb_builder v2_odd = {0};
  pb_tag(&v2_odd, 1, 0), pb_varint(&v2_odd, 2);
  pb_tag(&v2_odd, 2, 2), pb_varint(&v2_odd, 0);
  assert_int_equal(decode(&v2_odd), HT_EVERSION);

  pb_builder type9 = {0};
  pb_tag(&type9, 1, 0), pb_varint(&type9, 1);
  pb_tag(&type9, 2, 0), pb_varint(&type9, 9);
  assert_int_equal(decode(&type9), HT_EMSGTYPE);

  /* 5, the retired "control" type, is refused like any unknown type */
  pb_builder type5 = {0};
  pb_tag(&type5, 1, 0), pb_varint(&type5, 1);
  pb_tag(&type5, 2, 0), pb_varint(&type5, 5);
  assert_int_equal(decode(&type5), HT_EMSGTYPE);

  pb_builder inner = {0}, zero_span = {0};
  pb_tag(&inner, 2, 1), pb_fixed64(&inner, 7);
  pb_tag(&zero_span, 1, 0), pb_varint(&zero_span, 1);
  pb_tag(&zero_span, 2, 0), pb_varint(&zero_span, 1);
  pb_submessage(&zero_span, 6, &inner);
  assert_int_equal(decode(&zero_span), HT_EBADCONTEXT);

  pb_builder empty_trace = {0}, no_ids = {0};
  pb_tag(&no_ids, 1, 0), pb_varint(&no_ids, 1);
  pb_tag(&no_ids, 2, 0), pb_varint(&no_ids, 1);
  pb_submessage(&no_ids, 6, &empty_trace);
  assert_int_equal(decode(&no_ids), HT_EBADCONTEXT);
}

static void too_many_unknown_fields(void **state) {
  (void)state;
  pb_builder b = {0};
  pb_tag(&b, 1, 0), pb_varint(&b, 1);
  pb_tag(&b, 2, 0), pb_varint(&b, 1);
  for (unsigned i = 0; i < HT_ENVELOPE_MAX_UNKNOWN_FIELDS; i++)
    pb_tag(&b, 50, 0), pb_varint(&b, i);
  assert_int_equal(decode(&b), 0);
  pb_tag(&b, 51, 0), pb_varint(&b, 1);
  assert_int_equal(decode(&b), HT_EMALFORMED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sample_is_valid),
      cmocka_unit_test(truncated_at_every_offset),
      cmocka_unit_test(bad_varints),
      cmocka_unit_test(wrong_wire_types),
      cmocka_unit_test(trailing_garbage),
      cmocka_unit_test(length_overflowing_the_input),
      cmocka_unit_test(version_type_and_context_rules),
      cmocka_unit_test(too_many_unknown_fields),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
