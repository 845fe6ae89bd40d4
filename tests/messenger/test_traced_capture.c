/* The flight recorder's half in the library: flight mode records every
 * span (RECORDED, not SAMPLED), a remote RECORDED counts only in flight
 * mode, and the triggers (error, slow client, slow server, by hand) fire
 * one capture each, with why, threshold, value and origin. A recorder of
 * its own keeps span sides and captures. Real messengers over loopback. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hoptrace/capture.h"
#include "hoptrace/error.h"
#include "hoptrace/messenger.h"
#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "hoptrace/tracing.h"
#include "hoptrace/traced.h"
#include "hoptrace_schema.h"

#include "capture_recorder.h"

/* --- a client and a server */

typedef struct pair {
  ht_messenger *client, *server;
  ht_peer *to_server, *to_nowhere;
  char url[128], nowhere[128];
} pair;

static ht_messenger *traced(const char *name) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_TRACED;
  o.name = name;
  o.request_timeout_ms = 2000;
  o.reconnect_min_ms = 5000; /* the dead peer stays refused while a test runs */
  ht_messenger *m = NULL;
  assert_int_equal(ht_messenger_new(&o, &m), 0);
  return m;
}

static void on_slow(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  usleep(30000);
  ht_request_reply(req, 0, NULL);
}

static int varied_delay_us;
static void on_varied(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  if (varied_delay_us > 0)
    usleep((useconds_t)varied_delay_us);
  ht_request_reply(req, 0, NULL);
}

static void on_fast(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  ht_request_reply(req, 0, NULL);
}

static void set_sampling(const char *sampler, const char *ratio) {
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg);
  assert_int_equal(ht_sampling_config_set(&cfg, "sampler", sampler), 0);
  if (ratio != NULL)
    assert_int_equal(ht_sampling_config_set(&cfg, "ratio", ratio), 0);
  assert_int_equal(ht_sampling_set(&cfg), 0);
}

static int setup(void **state) {
  ht_tracing_init();
  ht_events_install(&capture_recorder);
  pair *p = calloc(1, sizeof(*p));
  p->client = traced("client");
  p->server = traced("server");
  assert_int_equal(ht_messenger_listen(p->server, "tcp://127.0.0.1:0", p->url, sizeof(p->url)), 0);
  assert_int_equal(ht_messenger_handle(p->server, "slow", on_slow, NULL), 0);
  assert_int_equal(ht_messenger_handle(p->server, "fast", on_fast, NULL), 0);
  assert_int_equal(ht_messenger_handle(p->server, "varied", on_varied, NULL), 0);
  assert_int_equal(ht_messenger_connect(p->client, p->url, &p->to_server), 0);
  ht_messenger *gone = traced("gone");
  assert_int_equal(ht_messenger_listen(gone, "tcp://127.0.0.1:0", p->nowhere, sizeof(p->nowhere)), 0);
  assert_int_equal(ht_messenger_close(gone, 0), 0);
  assert_int_equal(ht_messenger_connect(p->client, p->nowhere, &p->to_nowhere), 0);
  for (int i = 0; i < 300 && !ht_peer_connected(p->to_server); i++)
    usleep(10000);
  usleep(200000); /* the dead peer's connect has failed: it backs off */
  *state = p;
  return 0;
}

static int teardown(void **state) {
  pair *p = *state;
  assert_int_equal(ht_messenger_close(p->client, 1000), 0);
  assert_int_equal(ht_messenger_close(p->server, 1000), 0);
  free(p);
  ht_flight_set(0);
  ht_events_install(NULL);
  return 0;
}

static int answered;
static void count_reply(void *arg, int status, const ht_envelope *reply) {
  (void)arg, (void)reply;
  assert_int_equal(status, 0);
  __atomic_add_fetch(&answered, 1, __ATOMIC_SEQ_CST);
}

static void call(pair *p, const char *op) {
  answered = 0;
  assert_int_equal(ht_peer_request(p->to_server, op, NULL, NULL, count_reply, NULL), 0);
  for (int i = 0; i < 500 && !__atomic_load_n(&answered, __ATOMIC_SEQ_CST); i++)
    usleep(10000);
  assert_int_equal(answered, 1);
}

static void never_called(void *arg, int status, const ht_envelope *reply) {
  (void)arg, (void)status, (void)reply;
  fail_msg("a refused call's callback ran");
}

/* The head sampler keeps nothing: flight mode still records both sides,
 * RECORDED and not SAMPLED; out of flight mode nothing is recorded. */
static void test_flight_mode_records_what_is_not_kept(void **state) {
  pair *p = *state;
  set_sampling("never", NULL);
  ht_capture_policy off = {.size = sizeof(off)};
  assert_int_equal(ht_capture_policy_set(&off), 0);
  recorder_reset();
  ht_flight_set(0);
  call(p, "fast");
  usleep(50000);
  assert_int_equal(recorder_count(&n_sides), 0);

  ht_flight_set(1);
  assert_int_equal(ht_flight_enabled(), 1);
  call(p, "fast");
  recorder_wait(&n_sides, 2);
  assert_int_equal(n_sides, 2);
  for (size_t i = 0; i < 2; i++) {
    assert_true(sides[i].ctx.flags & HT_FLAG_RECORDED);
    assert_false(sides[i].ctx.flags & HT_FLAG_SAMPLED);
  }
  assert_int_equal(n_captures, 0); /* nothing fires without a policy */
  ht_flight_set(0);
}

/* No peer makes a process record: a remote RECORDED is dropped out of
 * flight mode, and kept (and set) in it. */
static void test_remote_recorded_counts_only_in_flight_mode(void **state) {
  (void)state;
  set_sampling("never", NULL);
  ht_trace_context remote = {1, 2, 3, 0, HT_FLAG_RECORDED};
  ht_span_info info = {"op", HT_SPAN_SERVER, "svc", ""};
  ht_span s;
  ht_span_init(&s);
  ht_flight_set(0);
  assert_int_equal(ht_span_start_remote(&s, &remote, &info), 0);
  assert_false(ht_span_is_sampled(&s));
  assert_false(s.ctx.flags & HT_FLAG_RECORDED);
  ht_span_finish(&s);
  ht_flight_set(1);
  remote.flags = 0;
  assert_int_equal(ht_span_start_remote(&s, &remote, &info), 0);
  assert_true(ht_span_is_sampled(&s));
  assert_true(s.ctx.flags & HT_FLAG_RECORDED);
  ht_span_finish(&s);
  ht_flight_set(0);
}

/* error: a call refused before it was sent fires, with its status. */
static void test_an_error_fires_a_capture(void **state) {
  pair *p = *state;
  set_sampling("always", NULL);
  ht_capture_policy pol;
  assert_int_equal(ht_capture_policy_parse("error", &pol), 0);
  assert_int_equal(ht_capture_policy_set(&pol), 0);
  ht_traced_stats before = {.size = sizeof(before)}, after = {.size = sizeof(after)};
  assert_int_equal(ht_traced_get_stats(&before), 0);
  recorder_reset();
  assert_int_equal(ht_peer_request(p->to_nowhere, "refused", NULL, NULL, never_called, NULL),
                   HT_ENOTCONN);
  assert_int_equal(n_captures, 1);
  assert_int_equal(captures[0].note.why, HT_CAPTURE_ERROR);
  assert_int_equal(captures[0].note.hops, 0);
  assert_int_equal((int64_t)captures[0].note.value, HT_ENOTCONN);
  assert_string_equal(captures[0].origin, "client");
  assert_int_equal(n_sides, 1);
  /* field by field: the struct's padding is not written */
  assert_int_equal(captures[0].ctx.trace_id_hi, sides[0].ctx.trace_id_hi);
  assert_int_equal(captures[0].ctx.trace_id_lo, sides[0].ctx.trace_id_lo);
  assert_int_equal(captures[0].ctx.span_id, sides[0].ctx.span_id);
  call(p, "fast"); /* ok: fires nothing */
  recorder_wait(&n_sides, 3);
  assert_int_equal(n_captures, 1);
  assert_int_equal(ht_traced_get_stats(&after), 0);
  assert_int_equal(after.captures_fired - before.captures_fired, 1);
  assert_int_equal(after.captures_unrecorded - before.captures_unrecorded, 0);
}

/* slow-client and slow-server: a 30 ms handler crosses both 10 ms
 * thresholds; one capture each, threshold and value in ns. */
static void test_slow_spans_fire_captures(void **state) {
  pair *p = *state;
  set_sampling("always", NULL);
  ht_capture_policy pol;
  assert_int_equal(ht_capture_policy_parse("slow-client=10ms,slow-server=10000us", &pol), 0);
  assert_int_equal(pol.slow_client_ns, 10000000);
  assert_int_equal(pol.slow_server_ns, 10000000);
  assert_int_equal(ht_capture_policy_set(&pol), 0);
  recorder_reset();
  call(p, "fast");
  recorder_wait(&n_sides, 2);
  assert_int_equal(recorder_count(&n_captures), 0);
  recorder_reset();
  call(p, "slow");
  recorder_wait(&n_captures, 2);
  assert_int_equal(n_captures, 2);
  int client = 0, server = 0;
  for (size_t i = 0; i < 2; i++) {
    const capture *c = &captures[i];
    assert_int_equal(c->note.threshold, 10000000);
    assert_true(c->note.value >= 30000000);
    if (c->note.why == HT_CAPTURE_SLOW_CLIENT) {
      client++;
      assert_string_equal(c->origin, "client");
    } else {
      assert_int_equal(c->note.why, HT_CAPTURE_SLOW_SERVER);
      server++;
      assert_string_equal(c->origin, "server");
    }
  }
  assert_int_equal(client, 1);
  assert_int_equal(server, 1);
  assert_int_equal(captures[0].ctx.trace_id_lo, captures[1].ctx.trace_id_lo);
}

/* p99.9: no capture before 1,000 spans of the operation ended in the
 * minute (a slow first one fires nothing); then one slower than the
 * 99.9th percentile fires, on both sides, with the
 * operation's p99.9 (above every fast one) as threshold. */
static void test_adaptive_thresholds(void **state) {
  pair *p = *state;
  set_sampling("always", NULL);
  ht_capture_policy pol;
  assert_int_equal(ht_capture_policy_parse("slow-client=p99.9,slow-server=p99.9", &pol), 0);
  assert_int_equal(pol.adaptive_client, 1);
  assert_int_equal(pol.adaptive_server, 1);
  assert_int_equal(pol.slow_client_ns, 0);
  assert_int_equal(ht_capture_policy_set(&pol), 0);
  char text[128];
  ht_capture_policy now = {.size = sizeof(now)};
  assert_int_equal(ht_capture_policy_get(&now), 0);
  assert_int_equal(ht_capture_policy_format(&now, text, sizeof(text)), 0);
  assert_string_equal(text, "slow-client=p99.9,slow-server=p99.9");
  varied_delay_us = 200000; /* slow, but the first: nothing known yet */
  recorder_reset();
  call(p, "varied");
  varied_delay_us = 0;
  for (int i = 0; i < 997; i++) /* 998 spans a side */
    call(p, "varied");
  usleep(1100000); /* the percentile is recomputed once a second */
  /* the 999th: still too few even if the recompute it triggers counts
   * its own server side (under load it may end before the check) */
  call(p, "varied");
  assert_int_equal(recorder_count(&n_captures), 0);
  /* the slow first one stays above the 99.9th percentile of 1,999; a
   * loaded machine may make a fast one slower than it too: not counted */
  for (int i = 0; i < 1000; i++)
    call(p, "varied");
  usleep(1100000);
  recorder_reset();
  /* 1 s: far above any stall of a fast call on a loaded machine (two
   * stalls near 200 ms put the p99.9 in a 200 ms probe's histogram
   * bucket, and then nothing fired) */
  varied_delay_us = 1000000;
  call(p, "varied");
  varied_delay_us = 0;
  recorder_wait(&n_captures, 2);
  assert_int_equal(n_captures, 2);
  for (size_t i = 0; i < 2; i++) {
    assert_true(captures[i].note.why == HT_CAPTURE_SLOW_CLIENT ||
                captures[i].note.why == HT_CAPTURE_SLOW_SERVER);
    assert_true(captures[i].note.value >= 200000000);
    assert_true(captures[i].note.threshold > 0);
    assert_true(captures[i].note.threshold < captures[i].note.value);
  }
  ht_capture_policy off = {.size = sizeof(off)};
  assert_int_equal(ht_capture_policy_set(&off), 0);
}

/* By hand: a trace, or none; what no session records is counted. */
static void test_a_capture_by_hand(void **state) {
  (void)state;
  recorder_reset();
  ht_trace_context t = {0, 0x42, 0, 0, 0};
  assert_int_equal(ht_capture_trace(&t), 0);
  assert_int_equal(ht_capture_trace(NULL), 0);
  ht_trace_context none = {0, 0, 7, 0, 0};
  assert_int_equal(ht_capture_trace(&none), HT_EBADCONTEXT);
  assert_int_equal(n_captures, 2);
  assert_int_equal(captures[0].note.why, HT_CAPTURE_MANUAL);
  assert_int_equal(captures[0].ctx.trace_id_lo, 0x42);
  assert_int_equal(captures[1].ctx.trace_id_lo, 0);
  ht_traced_stats before = {.size = sizeof(before)}, after = {.size = sizeof(after)};
  assert_int_equal(ht_traced_get_stats(&before), 0);
  captures_recorded = 0;
  assert_int_equal(ht_capture_trace(&t), 0);
  captures_recorded = 1;
  assert_int_equal(ht_traced_get_stats(&after), 0);
  assert_int_equal(after.captures_fired - before.captures_fired, 1);
  assert_int_equal(after.captures_unrecorded - before.captures_unrecorded, 1);
}

/* The policy's text both ways, and what it refuses (left untouched). */
static void test_policy_text(void **state) {
  (void)state;
  ht_capture_policy p = {.size = sizeof(p), .slow_client_ns = 5};
  char buf[128];
  const char *bad[] = {"", "slow", "slow-client=", "slow-client=10", "slow-client=-1ms",
                       "slow-client=0ms", "error,bogus", "slow-server=99999999999999999999s",
                       ",", "slow-client=1ms;rm"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_int_equal(ht_capture_policy_parse(bad[i], &p), HT_EINVAL);
    assert_int_equal(p.slow_client_ns, 5);
  }
  assert_int_equal(ht_capture_policy_parse(NULL, &p), HT_EINVAL);
  assert_int_equal(ht_capture_policy_parse("slow-client=2s,error", &p), 0);
  assert_int_equal(ht_capture_policy_format(&p, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "slow-client=2000000000ns,error");
  ht_capture_policy q;
  assert_int_equal(ht_capture_policy_parse(buf, &q), 0);
  assert_int_equal(p.slow_client_ns, q.slow_client_ns);
  assert_int_equal(p.slow_server_ns, q.slow_server_ns);
  assert_int_equal(p.errors, q.errors);
  assert_int_equal(p.adaptive_client, q.adaptive_client);
  assert_int_equal(p.adaptive_server, q.adaptive_server);
  assert_int_equal(ht_capture_policy_format(&p, buf, 8), HT_ENOSPC);
  assert_int_equal(ht_capture_policy_parse("off", &p), 0);
  assert_int_equal(ht_capture_policy_format(&p, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "off");
  ht_capture_policy small = {.size = 4};
  assert_int_equal(ht_capture_policy_set(&small), HT_EINVAL);
  assert_int_equal(ht_capture_policy_get(&small), HT_EINVAL);
}

/* HT_CAPTURE_RATE (10 here, set in main): 30 refused calls in a row, each
 * an error trigger, fire 10 captures in a second's window (20 if the
 * loop crosses into the next second), and the rest are counted limited,
 * none lost; a capture by hand is never limited. */
static void test_the_capture_rate_holds(void **state) {
  pair *p = *state;
  set_sampling("always", NULL);
  ht_capture_policy pol;
  assert_int_equal(ht_capture_policy_parse("error", &pol), 0);
  assert_int_equal(ht_capture_policy_set(&pol), 0);
  sleep(1); /* the earlier tests' captures are in an older window */
  ht_traced_stats before = {.size = sizeof(before)}, after = {.size = sizeof(after)};
  assert_int_equal(ht_traced_get_stats(&before), 0);
  recorder_reset();
  for (int i = 0; i < 30; i++)
    assert_int_equal(ht_peer_request(p->to_nowhere, "refused", NULL, NULL, never_called, NULL),
                     HT_ENOTCONN);
  assert_int_equal(ht_traced_get_stats(&after), 0);
  uint64_t fired = after.captures_fired - before.captures_fired;
  uint64_t limited = after.captures_limited - before.captures_limited;
  assert_int_equal(fired + limited, 30);
  assert_true(fired >= 10 && fired <= 20);
  assert_int_equal(recorder_count(&n_captures), fired);
  ht_trace_context ctx = {.trace_id_lo = 7, .span_id = 1};
  assert_int_equal(ht_capture_trace(&ctx), 0);
  assert_int_equal(ht_traced_get_stats(&after), 0);
  assert_int_equal(after.captures_limited - before.captures_limited, limited);
  assert_int_equal(after.captures_fired - before.captures_fired, fired + 1);
}

int main(void) {
  /* before the first traced messenger reads it: the rate test's limit,
   * above what every other test here fires in a second */
  setenv("HT_CAPTURE_RATE", "10", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flight_mode_records_what_is_not_kept),
      cmocka_unit_test(test_remote_recorded_counts_only_in_flight_mode),
      cmocka_unit_test(test_an_error_fires_a_capture),
      cmocka_unit_test(test_slow_spans_fire_captures),
      cmocka_unit_test(test_adaptive_thresholds),
      cmocka_unit_test(test_a_capture_by_hand),
      cmocka_unit_test(test_policy_text),
      cmocka_unit_test(test_the_capture_rate_holds),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
