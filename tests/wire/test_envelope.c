/* Envelope encoding: exact byte costs, zero-copy payload, seeded round
 * trips checked against protobuf-c's unpack, preserved reserved flags,
 * foreign field orders, protobuf-c's merge and prefix rules, bad
 * arguments. Must never: let the encoder's bytes differ from
 * protobuf-c's pack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "envelope_gen.h"
#include "envelope_oracle.h"
#include "hoptrace/error.h"
#include "hoptrace/wire.h"
#include "pb_builder.h"

#define ROUND_TRIPS 5000

static uint8_t frame_buf[1 << 16];

static int setup_reader(void **state) {
  ht_frame_reader *reader;
  int rc = ht_frame_reader_new(0, &reader);
  *state = reader;
  return rc;
}

static int teardown_reader(void **state) {
  ht_frame_reader_free(*state);
  return 0;
}

static void envelope_without_context_has_no_trace_bytes(void **state) {
  (void)state;
  ht_envelope env = {.type = HT_MSG_REQUEST};
  size_t len;
  assert_int_equal(ht_frame_encode(&env, frame_buf, sizeof(frame_buf), &len), 0);
  /* prefix + version (2 bytes) + type (2 bytes): nothing else */
  assert_int_equal(len, HT_FRAME_PREFIX_LEN + 4);
  static const uint8_t expected[] = {0, 0, 0, 4, 0x08, 0x01, 0x10, 0x01};
  assert_memory_equal(frame_buf, expected, sizeof(expected));
}

static void full_context_costs_forty_bytes(void **state) {
  (void)state;
  ht_envelope bare = {.type = HT_MSG_REQUEST, .sequence = 77, .operation = "osd.write"};
  ht_envelope traced = bare;
  traced.has_trace = true;
  traced.trace = (ht_trace_context){~0ull, ~0ull, ~0ull, ~0ull, HT_FLAG_SAMPLED};
  size_t with = ht_frame_header_size(&traced), without = ht_frame_header_size(&bare);
  assert_int_equal(with - without, 40);
  /* a 64-bit trace id on a root span omits hi and parent */
  traced.trace.trace_id_hi = 0;
  traced.trace.parent_span_id = 0;
  assert_int_equal(ht_frame_header_size(&traced) - without, 22);
}

static void header_leaves_payload_to_the_caller(void **state) {
  ht_frame_reader *reader = *state;
  uint8_t payload[300];
  for (size_t i = 0; i < sizeof(payload); i++)
    payload[i] = (uint8_t)i;
  ht_envelope env = {.version = HT_WIRE_VERSION, .type = HT_MSG_ONEWAY,
                     .payload = payload,
                     .payload_len = sizeof(payload)};
  uint8_t header[64];
  size_t header_len;
  assert_int_equal(ht_frame_encode_header(&env, header, sizeof(header), &header_len), 0);
  assert_int_equal(header_len, ht_frame_header_size(&env));
  assert_true(header_len < 16); /* the payload is not in there */
  /* header + payload (as a writev would send them) is the frame */
  memcpy(frame_buf, header, header_len);
  memcpy(frame_buf + header_len, payload, sizeof(payload));
  ht_envelope out;
  size_t used;
  assert_int_equal(ht_frame_reader_feed(reader, frame_buf,
                                        header_len + sizeof(payload), &used, &out), 0);
  assert_int_equal(used, header_len + sizeof(payload));
  assert_true(envelope_matches(&env, &out));
  assert_memory_equal(out.payload, payload, sizeof(payload));
  /* decoded in place: the payload view points into the input */
  assert_ptr_equal(out.payload, frame_buf + header_len);
  assert_int_equal(ht_frame_encode_header(&env, header, header_len - 1, &header_len),
                   HT_ENOSPC);
}

static void random_envelopes_round_trip(void **state) {
  ht_frame_reader *reader = *state;
  test_rng rng = {20261122};
  for (int i = 0; i < ROUND_TRIPS; i++) {
    gen_envelope g;
    gen_envelope_fill(&g, &rng);
    size_t len, used;
    assert_int_equal(ht_frame_encode(&g.env, frame_buf, sizeof(frame_buf), &len), 0);
    ht_envelope out;
    int rc = ht_frame_reader_feed(reader, frame_buf, len, &used, &out);
    if (rc != 0)
      fail_msg("case %d: %s", i, ht_err_name(rc));
    assert_int_equal(used, len);
    if (!envelope_matches(&g.env, &out))
      fail_msg("case %d differs after round trip", i);
    const char *why = oracle_disagrees(frame_buf + HT_FRAME_PREFIX_LEN,
                                       len - HT_FRAME_PREFIX_LEN, rc, &out);
    if (why != NULL)
      fail_msg("case %d: %s", i, why);
  }
}

/* The hand-written encoder must write what protobuf-c's generated pack
 * writes for the same message (then the payload tag and length). */
static void encoder_matches_protobuf_c(void **state) {
  (void)state;
  test_rng rng = {777};
  for (int i = 0; i < ROUND_TRIPS; i++) {
    gen_envelope g;
    gen_envelope_fill(&g, &rng);
    uint8_t header[256];
    size_t header_len;
    assert_int_equal(ht_frame_encode_header(&g.env, header, sizeof(header), &header_len), 0);
    Hoptrace__Wire__Envelope pb;
    Hoptrace__Wire__TraceContext tc;
    hoptrace__wire__envelope__init(&pb);
    pb.version = g.env.version;
    pb.type = (Hoptrace__Wire__MessageType)g.env.type;
    pb.sequence = g.env.sequence;
    pb.operation = g.operation;
    pb.status = g.env.status;
    if (g.env.has_trace) {
      hoptrace__wire__trace_context__init(&tc);
      tc.trace_id_hi = g.env.trace.trace_id_hi;
      tc.trace_id_lo = g.env.trace.trace_id_lo;
      tc.span_id = g.env.trace.span_id;
      tc.parent_span_id = g.env.trace.parent_span_id;
      tc.flags = g.env.trace.flags;
      pb.trace = &tc;
    }
    uint8_t packed[256];
    size_t packed_len = hoptrace__wire__envelope__pack(&pb, packed);
    size_t payload_hdr = g.env.payload_len == 0 ? 0 : g.env.payload_len < 128 ? 2 : 3;
    assert_int_equal(header_len, HT_FRAME_PREFIX_LEN + packed_len + payload_hdr);
    if (memcmp(header + HT_FRAME_PREFIX_LEN, packed, packed_len) != 0)
      fail_msg("case %d: encoder differs from protobuf-c", i);
  }
}

static void reserved_flag_bits_survive(void **state) {
  ht_frame_reader *reader = *state;
  ht_envelope env = {.type = HT_MSG_REQUEST, .has_trace = true,
                     .trace = {.trace_id_lo = 5, .span_id = 6,
                               .flags = 0xfffffff0u | HT_FLAG_SAMPLED}};
  size_t len, used;
  assert_int_equal(ht_frame_encode(&env, frame_buf, sizeof(frame_buf), &len), 0);
  ht_envelope out;
  assert_int_equal(ht_frame_reader_feed(reader, frame_buf, len, &used, &out), 0);
  assert_int_equal(out.trace.flags, 0xfffffff1u);
}

/* W3C "random" rides the envelope in flags bit 2 (HT_FLAG_RANDOM):
 * traceparent -> context -> envelope -> context -> traceparent keeps it,
 * and protobuf-c's decoder of the schema (what a peer that predates the
 * bit runs) reads it as plain flags, the frame still valid. */
static void random_flag_rides_the_envelope(void **state) {
  ht_frame_reader *reader = *state;
  static const char *const headers[] = {
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02",
  };
  for (size_t i = 0; i < 2; i++) {
    ht_envelope env = {.type = HT_MSG_REQUEST, .has_trace = true};
    assert_int_equal(ht_traceparent_parse(headers[i], strlen(headers[i]), &env.trace), 0);
    assert_true(env.trace.flags & HT_FLAG_RANDOM);
    size_t len, used;
    assert_int_equal(ht_frame_encode(&env, frame_buf, sizeof(frame_buf), &len), 0);
    Hoptrace__Wire__Envelope *pb = hoptrace__wire__envelope__unpack(
        NULL, len - HT_FRAME_PREFIX_LEN, frame_buf + HT_FRAME_PREFIX_LEN);
    assert_non_null(pb);
    assert_non_null(pb->trace);
    assert_int_equal(pb->trace->flags, env.trace.flags);
    hoptrace__wire__envelope__free_unpacked(pb, NULL);
    ht_envelope out;
    assert_int_equal(ht_frame_reader_feed(reader, frame_buf, len, &used, &out), 0);
    assert_int_equal(out.trace.flags, env.trace.flags);
    char text[HT_TRACEPARENT_LEN + 1];
    assert_int_equal(ht_traceparent_format(&out.trace, text, sizeof(text)), 0);
    assert_string_equal(text, headers[i]);
  }
}

static void foreign_field_order_and_unknown_fields_decode(void **state) {
  ht_frame_reader *reader = *state;
  pb_builder trace = {0}, b = {0};
  pb_tag(&trace, 5, 0), pb_varint(&trace, HT_FLAG_SAMPLED);
  pb_tag(&trace, 3, 1), pb_fixed64(&trace, 0x33);
  pb_tag(&trace, 2, 1), pb_fixed64(&trace, 0x22);
  pb_tag(&trace, 99, 0), pb_varint(&trace, 1); /* future field */
  pb_tag(&b, 15, 2), pb_varint(&b, 3), pb_bytes(&b, "abc", 3);
  pb_submessage(&b, 6, &trace);
  pb_tag(&b, 4, 2), pb_varint(&b, 2), pb_bytes(&b, "op", 2);
  pb_tag(&b, 2, 0), pb_varint(&b, HT_MSG_REPLY);
  pb_tag(&b, 100, 5), pb_bytes(&b, "\1\2\3\4", 4); /* future field */
  pb_tag(&b, 1, 0), pb_varint(&b, 1);
  ht_envelope out;
  assert_int_equal(ht_envelope_decode(reader, b.buf, b.len, &out), 0);
  assert_null(oracle_disagrees(b.buf, b.len, 0, &out));
  assert_int_equal(out.type, HT_MSG_REPLY);
  assert_string_equal(out.operation, "op");
  assert_int_equal(out.payload_len, 3);
  assert_memory_equal(out.payload, "abc", 3);
  assert_true(out.has_trace);
  assert_true(out.trace.trace_id_lo == 0x22 && out.trace.span_id == 0x33);
  assert_int_equal(out.trace.flags, HT_FLAG_SAMPLED);
}

/* Version 1 and `type`, the start of a hand-built envelope. */
static pb_builder envelope_start(ht_msg_type type) {
  pb_builder b = {0};
  pb_tag(&b, 1, 0), pb_varint(&b, 1);
  pb_tag(&b, 2, 0), pb_varint(&b, type);
  return b;
}

/* Decodes b, checks protobuf-c agrees, returns the rc. */
static int decode_checked(ht_frame_reader *reader, const pb_builder *b,
                          ht_envelope *out) {
  int rc = ht_envelope_decode(reader, b->buf, b->len, out);
  const char *why = oracle_disagrees(b->buf, b->len, rc, out);
  if (why != NULL)
    fail_msg("%s: %s", ht_err_name(rc), why);
  return rc;
}

/* protobuf-c merges a repeated trace context field by field, and for
 * proto3 scalars (no presence) the later occurrence replaces all of it. */
static void repeated_trace_context_is_replaced_as_protobuf_c_does(void **state) {
  ht_frame_reader *reader = *state;
  pb_builder ids = {0}, flags = {0};
  pb_tag(&ids, 2, 1), pb_fixed64(&ids, 5);
  pb_tag(&ids, 3, 1), pb_fixed64(&ids, 6);
  pb_tag(&flags, 5, 0), pb_varint(&flags, HT_FLAG_SAMPLED);
  pb_builder b = envelope_start(HT_MSG_REQUEST);
  pb_submessage(&b, 6, &ids);
  pb_submessage(&b, 6, &flags);
  ht_envelope out;
  /* the ids of the first are gone: an invalid context */
  assert_int_equal(decode_checked(reader, &b, &out), HT_EBADCONTEXT);
  b = envelope_start(HT_MSG_REQUEST);
  pb_submessage(&b, 6, &flags);
  pb_submessage(&b, 6, &ids);
  assert_int_equal(decode_checked(reader, &b, &out), 0);
  assert_int_equal(out.trace.flags, 0);
  assert_true(out.trace.trace_id_lo == 5 && out.trace.span_id == 6);
}

/* protobuf-c reads a length prefix of at most 5 bytes: a padded one is
 * refused wherever it stands, the last payload included. */
static void overlong_length_prefix_is_refused(void **state) {
  ht_frame_reader *reader = *state;
  static const uint8_t padded_3[] = {0x83, 0x80, 0x80, 0x80, 0x80, 0x00};
  ht_envelope out;
  for (size_t prefix_len = 6; prefix_len >= 5; prefix_len--) {
    pb_builder b = envelope_start(HT_MSG_ONEWAY);
    pb_tag(&b, 15, 2);
    pb_bytes(&b, padded_3, prefix_len - 1), pb_byte(&b, 0);
    pb_bytes(&b, "abc", 3);
    /* five bytes are still read */
    assert_int_equal(decode_checked(reader, &b, &out),
                     prefix_len > 5 ? HT_EMALFORMED : 0);
  }
  assert_int_equal(out.payload_len, 3);
}

static void encoder_refuses_bad_arguments(void **state) {
  (void)state;
  size_t len;
  ht_envelope no_type = {0};
  assert_int_equal(ht_frame_encode(&no_type, frame_buf, sizeof(frame_buf), &len), HT_EINVAL);
  ht_envelope bad_type = {.type = (ht_msg_type)6};
  assert_int_equal(ht_frame_encode(&bad_type, frame_buf, sizeof(frame_buf), &len), HT_EINVAL);
  assert_int_equal(ht_frame_header_size(&bad_type), 0);
  ht_envelope null_payload = {.type = HT_MSG_REQUEST, .payload_len = 3};
  assert_int_equal(ht_frame_encode(&null_payload, frame_buf, sizeof(frame_buf), &len), HT_EINVAL);
  ht_envelope zero_span = {.type = HT_MSG_REQUEST, .has_trace = true,
                           .trace = {.trace_id_lo = 1}};
  assert_int_equal(ht_frame_encode(&zero_span, frame_buf, sizeof(frame_buf), &len),
                   HT_EBADCONTEXT);
  static uint8_t dummy;
  ht_envelope huge = {.type = HT_MSG_REQUEST, .payload = &dummy,
                      .payload_len = (size_t)HT_FRAME_HARD_MAX + 1};
  assert_int_equal(ht_frame_encode(&huge, frame_buf, sizeof(frame_buf), &len),
                   HT_EFRAMETOOBIG);
  ht_envelope fits_header_only = {.type = HT_MSG_REQUEST, .payload = frame_buf,
                                  .payload_len = 100};
  assert_int_equal(ht_frame_encode(&fits_header_only, frame_buf, 20, &len), HT_ENOSPC);
  /* NULLs: each encoder checks its own arguments (ht_frame_encode no
   * longer goes through ht_frame_encode_header) */
  ht_envelope ok = {.type = HT_MSG_REQUEST};
  assert_int_equal(ht_frame_encode(NULL, frame_buf, sizeof(frame_buf), &len), HT_EINVAL);
  assert_int_equal(ht_frame_encode(&ok, NULL, sizeof(frame_buf), &len), HT_EINVAL);
  assert_int_equal(ht_frame_encode(&ok, frame_buf, sizeof(frame_buf), NULL), HT_EINVAL);
  assert_int_equal(ht_frame_encode_header(NULL, frame_buf, sizeof(frame_buf), &len),
                   HT_EINVAL);
  assert_int_equal(ht_frame_encode_header(&ok, NULL, sizeof(frame_buf), &len), HT_EINVAL);
  assert_int_equal(ht_frame_encode_header(&ok, frame_buf, sizeof(frame_buf), NULL),
                   HT_EINVAL);
  assert_int_equal(ht_frame_encode(&ok, frame_buf, sizeof(frame_buf), &len), 0);
  assert_string_equal(ht_msg_type_name(HT_MSG_ONEWAY), "one-way");
  assert_string_equal(ht_msg_type_name((ht_msg_type)0), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(envelope_without_context_has_no_trace_bytes),
      cmocka_unit_test(full_context_costs_forty_bytes),
      cmocka_unit_test_setup_teardown(header_leaves_payload_to_the_caller,
                                      setup_reader, teardown_reader),
      cmocka_unit_test_setup_teardown(random_envelopes_round_trip, setup_reader,
                                      teardown_reader),
      cmocka_unit_test_setup_teardown(reserved_flag_bits_survive, setup_reader,
                                      teardown_reader),
      cmocka_unit_test_setup_teardown(random_flag_rides_the_envelope, setup_reader,
                                      teardown_reader),
      cmocka_unit_test_setup_teardown(foreign_field_order_and_unknown_fields_decode,
                                      setup_reader, teardown_reader),
      cmocka_unit_test_setup_teardown(repeated_trace_context_is_replaced_as_protobuf_c_does,
                                      setup_reader, teardown_reader),
      cmocka_unit_test_setup_teardown(overlong_length_prefix_is_refused,
                                      setup_reader, teardown_reader),
      cmocka_unit_test(encoder_refuses_bad_arguments),
      cmocka_unit_test(encoder_matches_protobuf_c),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
