/* Structs that grow (ht_messenger_options, ht_request_options,
 * ht_sampling_config, ht_span and the two stats structs) carry the
 * caller's size first: a caller built
 * against an older, shorter header gets only the fields it knows, and
 * nothing past its struct is touched; a size too small is HT_EINVAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include "hoptrace.h"

/* 2.0's struct ends: a caller's size may be as small as these. */
#define MO_2_0 (offsetof(ht_messenger_options, frame_timeout_ms) + sizeof(uint32_t))
#define RO_2_0 (offsetof(ht_request_options, timeout_ms) + sizeof(uint32_t))
#define SC_2_0 (offsetof(ht_sampling_config, remote_debug_rate) + sizeof(double))
#define CP_2_0 (offsetof(ht_capture_policy, errors) + sizeof(int))
#define SP_2_0 (offsetof(ht_span, prob_) + sizeof(uint64_t))
#define CANARY 0xab

/* Caller storage: the struct, then a canary the library must not touch. */
typedef union {
  ht_messenger_options mo;
  ht_request_options ro;
  ht_sampling_config sc;
  ht_capture_policy cp;
  unsigned char bytes[sizeof(ht_messenger_options) + 64];
} padded;

static int init_as(int which, padded *p, size_t size) {
  const char *bad = NULL;
  switch (which) {
  case 0: return ht_messenger_options_init_sized(&p->mo, size);
  case 1: return ht_request_options_init_sized(&p->ro, size);
  case 2: return ht_sampling_config_default_sized(&p->sc, size);
  case 3: return ht_sampling_config_from_env_sized(&p->sc, size, &bad);
  default: return ht_capture_policy_parse_sized("error", &p->cp, size);
  }
}

static const size_t min_size[5] = {MO_2_0, RO_2_0, SC_2_0, SC_2_0, CP_2_0};

static void assert_canary_from(const padded *p, size_t from) {
  for (size_t i = from; i < sizeof(p->bytes); i++)
    if (p->bytes[i] != CANARY)
      fail_msg("byte %zu past the caller's size %zu written", i, from);
}

/* A caller whose struct is 2.0's (its size may end before this library's
 * sizeof, by tail padding or fields added later) gets nothing written
 * past it; one from a later header (larger) gets the part this library
 * does not know zeroed, still nothing past its size. */
static void init_writes_only_the_callers_size(void **state) {
  (void)state;
  for (int which = 0; which < 5; which++) {
    const size_t sizes[3] = {min_size[which], min_size[which] + 8,
                             sizeof(padded) - 16};
    for (int k = 0; k < 3; k++) {
      padded p;
      memset(&p, CANARY, sizeof(p));
      assert_int_equal(init_as(which, &p, sizes[k]), 0);
      assert_int_equal(p.mo.size, sizes[k]); /* size is the first member */
      assert_canary_from(&p, sizes[k]);
    }
  }
  padded p;
  memset(&p, CANARY, sizeof(p));
  assert_int_equal(ht_messenger_options_init_sized(&p.mo, MO_2_0), 0);
  assert_int_equal(p.mo.frame_timeout_ms, 30000);
  assert_int_equal(p.mo.log_level, HT_LOG_WARN);
  memset(&p, CANARY, sizeof(p));
  assert_int_equal(ht_sampling_config_default_sized(&p.sc, SC_2_0), 0);
  assert_true(p.sc.remote_debug_rate == 10.0);
  assert_int_equal(ht_sampling_config_check(&p.sc), 0);
  memset(&p, CANARY, sizeof(p));
  assert_int_equal(ht_capture_policy_parse_sized("error", &p.cp, CP_2_0), 0);
  assert_int_equal(p.cp.errors, 1);
  assert_int_equal(ht_capture_policy_set(&p.cp), 0);
  /* p99.9 needs the adaptive fields: refused when the size has none */
  memset(&p, CANARY, sizeof(p));
  assert_int_equal(ht_capture_policy_parse_sized("slow-client=p99.9", &p.cp, CP_2_0),
                   HT_EINVAL);
  assert_canary_from(&p, 0);
  assert_int_equal(ht_capture_policy_parse("off", &p.cp), 0);
  assert_int_equal(ht_capture_policy_set(&p.cp), 0);

  /* the larger caller's unknown tail: zero, so "default" */
  memset(&p, CANARY, sizeof(p));
  assert_int_equal(ht_request_options_init_sized(&p.ro, sizeof(p.ro) + 8), 0);
  for (size_t i = sizeof(p.ro); i < sizeof(p.ro) + 8; i++)
    assert_int_equal(p.bytes[i], 0);
}

static void init_refuses_a_size_too_small(void **state) {
  (void)state;
  for (int which = 0; which < 5; which++) {
    const size_t sizes[3] = {0, sizeof(size_t), min_size[which] - 1};
    for (int k = 0; k < 3; k++) {
      padded p;
      memset(&p, CANARY, sizeof(p));
      assert_int_equal(init_as(which, &p, sizes[k]), HT_EINVAL);
      assert_canary_from(&p, 0); /* untouched, size included */
    }
  }
  const char *bad = "x";
  assert_int_equal(ht_messenger_options_init_sized(NULL, MO_2_0), HT_EINVAL);
  assert_int_equal(ht_request_options_init_sized(NULL, RO_2_0), HT_EINVAL);
  assert_int_equal(ht_sampling_config_default_sized(NULL, SC_2_0), HT_EINVAL);
  assert_int_equal(ht_sampling_config_from_env_sized(NULL, SC_2_0, &bad), HT_EINVAL);
  assert_null(bad);
  assert_int_equal(ht_capture_policy_parse_sized("off", NULL, CP_2_0), HT_EINVAL);
}

/* The documented names are macros passing the caller's sizeof. */
static void init_macros_pass_the_callers_sizeof(void **state) {
  (void)state;
  ht_messenger_options mo;
  ht_request_options ro;
  ht_sampling_config sc;
  ht_capture_policy cp;
  assert_int_equal(ht_messenger_options_init(&mo), 0);
  assert_int_equal(mo.size, sizeof(mo));
  assert_int_equal(ht_request_options_init(&ro), 0);
  assert_int_equal(ro.size, sizeof(ro));
  assert_int_equal(ht_sampling_config_default(&sc), 0);
  assert_int_equal(sc.size, sizeof(sc));
  memset(&sc, 0, sizeof(sc));
  assert_int_equal(ht_sampling_config_from_env(&sc, NULL), 0);
  assert_int_equal(sc.size, sizeof(sc));
  assert_int_equal(ht_capture_policy_parse("slow-server=p99.9", &cp), 0);
  assert_int_equal(cp.size, sizeof(cp));
  assert_int_equal(cp.adaptive_server, 1);
  ht_span sp;
  ht_span_init(&sp); /* inline: the caller's sizeof by construction */
  assert_int_equal(sp.size, sizeof(sp));
}

static void stats_fill_only_what_the_caller_knows(void **state) {
  (void)state;
  ht_sampling_stats st;
  memset(&st, 0xab, sizeof(st));
  /* a caller whose header ended after traces_dropped */
  st.size = offsetof(ht_sampling_stats, traces_dropped) +
            sizeof(st.traces_dropped);
  assert_int_equal(ht_sampling_get_stats(&st), 0);
  uint64_t untouched;
  memset(&untouched, 0xab, sizeof(untouched));
  assert_memory_equal(&st.remote_received, &untouched, sizeof(untouched));
  assert_memory_equal(&st.config_changes, &untouched, sizeof(untouched));
  assert_true(st.traces_started == st.traces_sampled + st.traces_dropped);

  ht_traced_stats tr;
  memset(&tr, 0xab, sizeof(tr));
  tr.size = offsetof(ht_traced_stats, msgs_received) + sizeof(tr.msgs_received);
  assert_int_equal(ht_traced_get_stats(&tr), 0);
  assert_memory_equal(&tr.bytes_sent, &untouched, sizeof(untouched));
  assert_memory_equal(&tr.requests_failed, &untouched, sizeof(untouched));
}

static void stats_refuse_too_small_or_null(void **state) {
  (void)state;
  ht_sampling_stats st = {.size = sizeof(size_t)};
  assert_int_equal(ht_sampling_get_stats(&st), HT_EINVAL);
  assert_int_equal(ht_sampling_get_stats(NULL), HT_EINVAL);
  ht_traced_stats tr = {.size = 0};
  assert_int_equal(ht_traced_get_stats(&tr), HT_EINVAL);
  assert_int_equal(ht_traced_get_stats(NULL), HT_EINVAL);
  ht_sampling_stats full = {.size = sizeof(full)};
  assert_int_equal(ht_sampling_get_stats(&full), 0);
  assert_int_equal(full.size, sizeof(full)); /* the size is the caller's */
}

static void never_called(void *arg, int status, const ht_envelope *reply) {
  (void)arg;
  (void)status;
  (void)reply;
  fail();
}

static void request_options_need_their_size(void **state) {
  (void)state;
  ht_request_options ro;
  memset(&ro, 0xff, sizeof(ro));
  ht_request_options_init(&ro);
  assert_int_equal(ro.size, sizeof(ro));
  assert_int_equal(ro.timeout_ms, 0);

  ht_messenger_options mo;
  ht_messenger_options_init(&mo);
  mo.log_level = HT_LOG_ERROR;
  ht_messenger *m;
  assert_int_equal(ht_messenger_new(&mo, &m), 0);
  ht_peer *p;
  /* nobody listens there: the peer exists and keeps reconnecting */
  assert_int_equal(ht_messenger_connect(m, "tcp://127.0.0.1:9", &p), 0);
  ht_request_options zero = {.size = 0, .timeout_ms = 10};
  assert_int_equal(ht_peer_request(p, "op", NULL, &zero, never_called, NULL),
                   HT_EINVAL);
  assert_int_equal(ht_messenger_close(m, 0), 0);
}

/* A span's storage is the caller's: a start writes nothing into storage
 * whose size ht_span_init did not set, and a refused start keeps it. */
static void span_needs_its_size(void **state) {
  (void)state;
  static const ht_span_info info = {"op", HT_SPAN_INTERNAL, "svc", ""};
  ht_span s, garbage;
  memset(&s, 0xab, sizeof(s));
  s.size = 0;
  garbage = s;
  assert_int_equal(ht_span_start_root(&s, &info, HT_SAMPLE_NO), HT_EINVAL);
  s.size = SP_2_0 - 1; /* below 2.0's span (sized spans: test_span.c) */
  garbage.size = s.size;
  assert_int_equal(ht_span_start_root(&s, &info, HT_SAMPLE_NO), HT_EINVAL);
  assert_int_equal(ht_span_start_local(&s, &s.ctx, &info), HT_EINVAL);
  assert_memory_equal(&s, &garbage, sizeof(s));

  ht_span_init(&s);
  assert_int_equal(s.size, sizeof(s));
  assert_false(ht_span_is_sampled(&s));
  assert_int_equal(ht_span_start_root(&s, NULL, HT_SAMPLE_NO), HT_EINVAL);
  assert_int_equal(s.size, sizeof(s)); /* refused, still prepared */
  assert_int_equal(ht_span_start_root(&s, &info, HT_SAMPLE_NO), 0);
  assert_int_equal(ht_context_validate(&s.ctx), 0);
  ht_span_finish(&s);
}

static void sampling_config_needs_its_size(void **state) {
  (void)state;
  ht_sampling_config c;
  memset(&c, 0xab, sizeof(c));
  ht_sampling_config_default(&c);
  assert_int_equal(c.size, sizeof(c));
  assert_int_equal(ht_sampling_config_check(&c), 0);
  assert_int_equal(ht_sampling_config_set(&c, "ratio", "0.5"), 0);
  assert_int_equal(c.size, sizeof(c));

  ht_sampling_config small = c;
  small.size = sizeof(small) - 1;
  char text[256];
  ht_sampler *s = NULL;
  assert_int_equal(ht_sampling_config_check(&small), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&small, "ratio", "0.25"), HT_EINVAL);
  assert_true(small.ratio == 0.5);
  assert_int_equal(ht_sampling_config_format(&small, text, sizeof(text)),
                   HT_EINVAL);
  assert_int_equal(ht_sampler_new(&small, &s), HT_EINVAL);
  assert_null(s);
  assert_int_equal(ht_sampling_set(&small), HT_EINVAL);

  ht_sampling_config got;
  memset(&got, 0xab, sizeof(got));
  got.size = 0;
  ht_sampling_config before = got;
  assert_int_equal(ht_sampling_get(&got), HT_EINVAL);
  assert_memory_equal(&got, &before, sizeof(got));
  assert_int_equal(ht_sampling_get(NULL), HT_EINVAL);
  assert_int_equal(ht_sampling_set(&c), 0);
  got.size = sizeof(got);
  assert_int_equal(ht_sampling_get(&got), 0);
  assert_int_equal(got.size, sizeof(got));
  assert_true(got.ratio == 0.5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stats_fill_only_what_the_caller_knows),
      cmocka_unit_test(stats_refuse_too_small_or_null),
      cmocka_unit_test(request_options_need_their_size),
      cmocka_unit_test(span_needs_its_size),
      cmocka_unit_test(sampling_config_needs_its_size),
      cmocka_unit_test(init_writes_only_the_callers_size),
      cmocka_unit_test(init_refuses_a_size_too_small),
      cmocka_unit_test(init_macros_pass_the_callers_sizeof),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
