/* W3C traceparent and B3 single header: spec examples, every rejection
 * rule, and seeded round trips with the binary context. Must never:
 * depend on unseeded randomness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "hoptrace/context.h"
#include "hoptrace/error.h"
#include "test_rng.h"

#define ROUND_TRIPS 5000

static int parse_tp(const char *text, ht_trace_context *ctx) {
  return ht_traceparent_parse(text, strlen(text), ctx);
}

static void traceparent_spec_example_parses_and_formats_back(void **state) {
  (void)state;
  const char *text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  ht_trace_context ctx;
  assert_int_equal(parse_tp(text, &ctx), 0);
  assert_true(ctx.trace_id_hi == 0x4bf92f3577b34da6ull);
  assert_true(ctx.trace_id_lo == 0xa3ce929d0e0e4736ull);
  assert_true(ctx.span_id == 0x00f067aa0ba902b7ull);
  assert_true(ctx.parent_span_id == 0);
  assert_int_equal(ctx.flags, HT_FLAG_SAMPLED);
  char out[HT_TRACEPARENT_LEN + 1];
  assert_int_equal(ht_traceparent_format(&ctx, out, sizeof(out)), 0);
  assert_string_equal(out, text);
  assert_int_equal(ht_traceparent_format(&ctx, out, HT_TRACEPARENT_LEN),
                   HT_ENOSPC);
}

static void traceparent_rejects_what_the_spec_rejects(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int error;
  } bad[] = {
      {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A", HT_EBADHEADER},
      {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", HT_EBADHEADER},
      {"0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", HT_EBADHEADER},
      {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", HT_EBADCONTEXT},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", HT_EBADCONTEXT},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", HT_EBADHEADER},
      {"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736 -00f067aa0ba902b7-01", HT_EBADHEADER},
      {"00 -4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 x", HT_EBADHEADER},
      {"\n00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", HT_EBADHEADER},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r", HT_EBADHEADER},
      {" \t ", HT_EBADHEADER},
      {"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", HT_EBADHEADER},
      {"", HT_EBADHEADER},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ht_trace_context ctx = {.span_id = 42};
    int rc = parse_tp(bad[i].text, &ctx);
    if (rc != bad[i].error)
      fail_msg("'%s': got %s, want %s", bad[i].text, ht_err_name(rc),
               ht_err_name(bad[i].error));
    assert_true(ctx.span_id == 42); /* untouched on error */
  }
}

static void traceparent_accepts_future_versions(void **state) {
  (void)state;
  ht_trace_context ctx;
  assert_int_equal(
      parse_tp("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", &ctx), 0);
  assert_int_equal(ctx.flags, 0);
  assert_int_equal(
      parse_tp("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what-the-future-holds",
               &ctx),
      0);
  assert_int_equal(ctx.flags, HT_FLAG_SAMPLED);
  assert_true(ctx.span_id == 0x00f067aa0ba902b7ull);
}

/* HTTP optional whitespace around the value, as the W3C test suite sends
 * it: accepted, for any version. */
static void traceparent_accepts_surrounding_ows(void **state) {
  (void)state;
  static const char *const good[] = {
      " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\t",
      " \t 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 \t\t ",
      "\tcc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future ",
  };
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    ht_trace_context ctx = {0};
    int rc = parse_tp(good[i], &ctx);
    if (rc != 0)
      fail_msg("'%s': got %s", good[i], ht_err_name(rc));
    assert_true(ctx.trace_id_lo == 0xa3ce929d0e0e4736ull);
    assert_true(ctx.span_id == 0x00f067aa0ba902b7ull);
    assert_int_equal(ctx.flags, HT_FLAG_SAMPLED);
  }
  /* The whitespace is outside `len`'s value, never read past it. */
  char padded[HT_TRACEPARENT_LEN + 2];
  memcpy(padded, " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ", sizeof(padded));
  ht_trace_context ctx;
  assert_int_equal(ht_traceparent_parse(padded, sizeof(padded), &ctx), 0);
  assert_int_equal(ht_traceparent_parse(padded + 1, sizeof(padded) - 1, &ctx), 0);
  assert_int_equal(ht_traceparent_parse(padded, sizeof(padded) - 2, &ctx), HT_EBADHEADER);
}

/* Trace Context Level 2: flag 0x02 "random" is kept (HT_FLAG_RANDOM) and
 * written back; flags this version does not know are dropped. */
static void traceparent_keeps_the_random_flag(void **state) {
  (void)state;
  static const struct {
    const char *in, *out;
    uint32_t flags;
  } cases[] = {
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
       HT_FLAG_SAMPLED | HT_FLAG_RANDOM},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02",
       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02", HT_FLAG_RANDOM},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff",
       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
       HT_FLAG_SAMPLED | HT_FLAG_RANDOM},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-fc",
       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    ht_trace_context ctx;
    assert_int_equal(parse_tp(cases[i].in, &ctx), 0);
    assert_int_equal(ctx.flags, cases[i].flags);
    char out[HT_TRACEPARENT_LEN + 1];
    assert_int_equal(ht_traceparent_format(&ctx, out, sizeof(out)), 0);
    assert_string_equal(out, cases[i].out);
  }
  /* DEBUG is written as sampled, next to random. */
  ht_trace_context debug = {1, 2, 3, 0, HT_FLAG_DEBUG | HT_FLAG_RANDOM};
  char out[HT_TRACEPARENT_LEN + 1];
  assert_int_equal(ht_traceparent_format(&debug, out, sizeof(out)), 0);
  assert_string_equal(out + HT_TRACEPARENT_LEN - 2, "03");
}

static void traceparent_never_reads_past_len(void **state) {
  (void)state;
  const char *text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  ht_trace_context ctx;
  for (size_t len = 0; len < HT_TRACEPARENT_LEN; len++) {
    char copy[HT_TRACEPARENT_LEN]; /* exact size: ASan catches overreads */
    memcpy(copy, text, len);
    assert_int_equal(ht_traceparent_parse(copy, len, &ctx), HT_EBADHEADER);
  }
}

static ht_trace_context random_context(test_rng *rng) {
  ht_trace_context ctx = {
      .trace_id_hi = test_rng_below(rng, 4) == 0 ? 0 : test_rng_next(rng),
      .trace_id_lo = test_rng_next(rng) | 1,
      .span_id = test_rng_next(rng) | 2,
      .parent_span_id = test_rng_below(rng, 3) == 0 ? 0 : test_rng_next(rng),
      .flags = (uint32_t)test_rng_below(rng, 8), /* SAMPLED, DEBUG, RANDOM */
  };
  return ctx;
}

static void traceparent_round_trips_random_contexts(void **state) {
  (void)state;
  test_rng rng = {0x7ace7ace};
  for (int i = 0; i < ROUND_TRIPS; i++) {
    ht_trace_context in = random_context(&rng), out;
    char text[HT_TRACEPARENT_LEN + 1];
    assert_int_equal(ht_traceparent_format(&in, text, sizeof(text)), 0);
    assert_int_equal(strlen(text), HT_TRACEPARENT_LEN);
    assert_int_equal(parse_tp(text, &out), 0);
    assert_true(out.trace_id_hi == in.trace_id_hi);
    assert_true(out.trace_id_lo == in.trace_id_lo);
    assert_true(out.span_id == in.span_id);
    assert_true(out.parent_span_id == 0);
    uint32_t sampled = in.flags & (HT_FLAG_SAMPLED | HT_FLAG_DEBUG) ? HT_FLAG_SAMPLED : 0;
    assert_int_equal(out.flags, sampled | (in.flags & HT_FLAG_RANDOM));
    char again[HT_TRACEPARENT_LEN + 1];
    assert_int_equal(ht_traceparent_format(&out, again, sizeof(again)), 0);
    assert_string_equal(text, again);
  }
}

static int parse_b3(const char *text, ht_trace_context *ctx,
                    ht_b3_sampling *sampling) {
  return ht_b3_parse(text, strlen(text), ctx, sampling);
}

static void b3_spec_examples(void **state) {
  (void)state;
  ht_trace_context ctx;
  ht_b3_sampling sampling;
  const char *full =
      "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90";
  assert_int_equal(parse_b3(full, &ctx, &sampling), 0);
  assert_true(ctx.trace_id_hi == 0x80f198ee56343ba8ull);
  assert_true(ctx.trace_id_lo == 0x64fe8b2a57d3eff7ull);
  assert_true(ctx.span_id == 0xe457b5a2e4d86bd1ull);
  assert_true(ctx.parent_span_id == 0x05e3ac9a4f6e3b90ull);
  assert_int_equal(sampling, HT_B3_SAMPLING_ACCEPT);
  assert_int_equal(ctx.flags, HT_FLAG_SAMPLED);
  char out[HT_B3_MAX_LEN + 1];
  size_t len;
  assert_int_equal(ht_b3_format(&ctx, sampling, out, sizeof(out), &len), 0);
  assert_string_equal(out, full);
  assert_int_equal(len, strlen(full));
  assert_int_equal(strlen(full), HT_B3_MAX_LEN);

  assert_int_equal(parse_b3("64fe8b2a57d3eff7-e457b5a2e4d86bd1", &ctx, &sampling), 0);
  assert_true(ctx.trace_id_hi == 0);
  assert_int_equal(sampling, HT_B3_SAMPLING_ABSENT);
  assert_int_equal(ctx.flags, 0);
  assert_int_equal(ht_b3_format(&ctx, sampling, out, sizeof(out), NULL), 0);
  assert_string_equal(out, "64fe8b2a57d3eff7-e457b5a2e4d86bd1");

  assert_int_equal(parse_b3("64fe8b2a57d3eff7-e457b5a2e4d86bd1-d", &ctx, &sampling), 0);
  assert_int_equal(sampling, HT_B3_SAMPLING_DEBUG);
  assert_int_equal(ctx.flags, HT_FLAG_SAMPLED | HT_FLAG_DEBUG);
  assert_int_equal(ht_b3_sampling_of(&ctx), HT_B3_SAMPLING_DEBUG);

  assert_int_equal(parse_b3("64fe8b2a57d3eff7-e457b5a2e4d86bd1-0", &ctx, NULL), 0);
  assert_int_equal(ctx.flags, 0);
  assert_int_equal(ht_b3_sampling_of(&ctx), HT_B3_SAMPLING_DENY);
}

static void b3_sampling_state_alone(void **state) {
  (void)state;
  static const struct {
    const char *text;
    ht_b3_sampling sampling;
  } cases[] = {{"0", HT_B3_SAMPLING_DENY},
               {"1", HT_B3_SAMPLING_ACCEPT},
               {"d", HT_B3_SAMPLING_DEBUG}};
  for (size_t i = 0; i < 3; i++) {
    ht_trace_context ctx;
    ht_b3_sampling sampling;
    assert_int_equal(parse_b3(cases[i].text, &ctx, &sampling), 0);
    assert_int_equal(sampling, cases[i].sampling);
    assert_int_equal(ht_context_validate(&ctx), HT_EBADCONTEXT);
  }
}

static void b3_rejects_malformed_headers(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int error;
  } bad[] = {
      {"", HT_EBADHEADER},
      {"2", HT_EBADHEADER},
      {"D", HT_EBADHEADER},
      {"64FE8B2A57D3EFF7-e457b5a2e4d86bd1", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-E457B5A2E4D86BD1", HT_EBADHEADER},
      {"4fe8b2a57d3eff7-e457b5a2e4d86bd1", HT_EBADHEADER},
      {"664fe8b2a57d3eff7-e457b5a2e4d86bd1", HT_EBADHEADER},
      {"0f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-e457b5a2e4d86bd", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-e457b5a2e4d86bd1-", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-e457b5a2e4d86bd1-2", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-e457b5a2e4d86bd1-1-", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-e457b5a2e4d86bd1-05e3ac9a4f6e3b90", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b9", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90-", HT_EBADHEADER},
      {"64fe8b2a57d3eff7-e457b5a2e4d86bd1-1x", HT_EBADHEADER},
      {"64fe8b2a57d3eff7e457b5a2e4d86bd1", HT_EBADHEADER},
      {"0000000000000000-e457b5a2e4d86bd1-1", HT_EBADCONTEXT},
      {"00000000000000000000000000000000-e457b5a2e4d86bd1", HT_EBADCONTEXT},
      {"64fe8b2a57d3eff7-0000000000000000-1", HT_EBADCONTEXT},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ht_trace_context ctx = {.span_id = 7};
    ht_b3_sampling sampling = HT_B3_SAMPLING_DEBUG;
    int rc = parse_b3(bad[i].text, &ctx, &sampling);
    if (rc != bad[i].error)
      fail_msg("'%s': got %s, want %s", bad[i].text, ht_err_name(rc),
               ht_err_name(bad[i].error));
    assert_true(ctx.span_id == 7);
    assert_int_equal(sampling, HT_B3_SAMPLING_DEBUG);
  }
}

static void b3_round_trips_random_contexts(void **state) {
  (void)state;
  test_rng rng = {0xb3b3b3};
  for (int i = 0; i < ROUND_TRIPS; i++) {
    ht_trace_context in = random_context(&rng), out;
    ht_b3_sampling want = ht_b3_sampling_of(&in), got;
    char text[HT_B3_MAX_LEN + 1];
    size_t len;
    assert_int_equal(ht_b3_format(&in, want, text, sizeof(text), &len), 0);
    assert_int_equal(ht_b3_parse(text, len, &out, &got), 0);
    assert_int_equal(got, want);
    assert_true(out.trace_id_hi == in.trace_id_hi);
    assert_true(out.trace_id_lo == in.trace_id_lo);
    assert_true(out.span_id == in.span_id);
    assert_true(out.parent_span_id == in.parent_span_id);
    /* B3 has no random flag: it neither carries nor invents one. */
    uint32_t flags = in.flags & HT_FLAG_DEBUG ? HT_FLAG_SAMPLED | HT_FLAG_DEBUG
                                              : in.flags & HT_FLAG_SAMPLED;
    assert_int_equal(out.flags, flags);
    char again[HT_B3_MAX_LEN + 1];
    assert_int_equal(ht_b3_format(&out, got, again, sizeof(again), NULL), 0);
    assert_string_equal(text, again);
    /* Every prefix is either a valid shorter header or refused. */
    for (size_t cut = 0; cut < len; cut++) {
      ht_trace_context partial;
      int rc = ht_b3_parse(text, cut, &partial, NULL);
      assert_true(rc == 0 || rc == HT_EBADHEADER || rc == HT_EBADCONTEXT);
    }
  }
}

static void formatters_refuse_invalid_contexts(void **state) {
  (void)state;
  ht_trace_context zero_span = {.trace_id_lo = 1};
  char buf[128];
  assert_int_equal(ht_traceparent_format(&zero_span, buf, sizeof(buf)),
                   HT_EBADCONTEXT);
  assert_int_equal(ht_b3_format(&zero_span, HT_B3_SAMPLING_ACCEPT, buf,
                                sizeof(buf), NULL),
                   HT_EBADCONTEXT);
  ht_trace_context ok = {.trace_id_lo = 1, .span_id = 2};
  assert_int_equal(ht_b3_format(&ok, HT_B3_SAMPLING_ACCEPT, buf, 10, NULL),
                   HT_ENOSPC);
  assert_int_equal(ht_context_validate(&ok), 0);
  assert_int_equal(ht_context_validate(NULL), HT_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(traceparent_spec_example_parses_and_formats_back),
      cmocka_unit_test(traceparent_rejects_what_the_spec_rejects),
      cmocka_unit_test(traceparent_accepts_future_versions),
      cmocka_unit_test(traceparent_accepts_surrounding_ows),
      cmocka_unit_test(traceparent_keeps_the_random_flag),
      cmocka_unit_test(traceparent_never_reads_past_len),
      cmocka_unit_test(traceparent_round_trips_random_contexts),
      cmocka_unit_test(b3_spec_examples),
      cmocka_unit_test(b3_sampling_state_alone),
      cmocka_unit_test(b3_rejects_malformed_headers),
      cmocka_unit_test(b3_round_trips_random_contexts),
      cmocka_unit_test(formatters_refuse_invalid_contexts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
