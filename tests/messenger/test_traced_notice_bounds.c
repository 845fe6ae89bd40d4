/* Capture notices against what a peer or a thread can do to them (review
 * 1): hop counts out of range, made-up trace ids, clock readings out of
 * order, notices queued but never sent, a capture refused by the
 * process's rate (not claimed, not passed on). The three-messenger
 * loopback chain of test_traced_capture_spread.c (client -> primary ->
 * replica), its chain kept from test to test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hoptrace/capture.h"
#include "hoptrace/context.h"
#include "hoptrace/error.h"
#include "hoptrace/messenger.h"
#include "hoptrace/sampler.h"
#include "hoptrace/tracing.h"
#include "hoptrace/traced.h"
#include "hoptrace_schema.h"
#include "common/clock.h"
#include "messenger/traced_capture.h"
#include "messenger/traced_crumbs.h"
#include "transport/hooks.h"

#include "capture_chain.h"
#include "capture_recorder.h"

#define CAPTURE_RATE 4 /* HT_CAPTURE_RATE, automatic captures a second */
#define STR_(x) #x
#define STR(x) STR_(x)

static ht_request *volatile held; /* hold mode: the primary's request, unanswered */
static volatile int hold_mode;

static void on_replica(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  ht_request_reply(req, 0, NULL);
}

static void on_replica_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply, (void)status;
  if (hold_mode) {
    __atomic_store_n(&held, (ht_request *)arg, __ATOMIC_SEQ_CST);
    return;
  }
  ht_request_reply(arg, 0, NULL);
}

static void on_primary(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)msg;
  assert_int_equal(ht_peer_request(((chain *)arg)->to_replica, "replica_write", NULL, NULL,
                                   on_replica_reply, req),
                   0);
}

static int setup(void **state) {
  *state = chain_start(on_primary, on_replica);
  return 0;
}

static int teardown(void **state) {
  chain_stop(*state);
  return 0;
}

static int answered;
static void on_write_reply(void *arg, int status, const ht_envelope *reply) {
  (void)arg, (void)status, (void)reply;
  __atomic_store_n(&answered, 1, __ATOMIC_SEQ_CST);
}

static ht_trace_context side_ctx(ht_span_kind kind, const char *name) {
  for (size_t i = 0; i < recorder_count(&n_sides); i++)
    if (sides[i].kind == kind && strcmp(sides[i].name, name) == 0)
      return sides[i].ctx;
  fail_msg("no span");
  return sides[0].ctx;
}

/* One write down the chain, answered: its trace (recorded, flight mode). */
static ht_trace_context write_once(chain *c) {
  recorder_reset();
  answered = 0;
  assert_int_equal(ht_peer_request(c->to_primary, "write", NULL, NULL, on_write_reply, NULL), 0);
  for (int i = 0; i < 500 && !__atomic_load_n(&answered, __ATOMIC_SEQ_CST); i++)
    usleep(10000);
  assert_int_equal(answered, 1);
  recorder_wait(&n_sides, 4);
  return side_ctx(HT_SPAN_CLIENT, "client");
}

static ht_traced_stats stats(void) {
  ht_traced_stats s = {.size = sizeof(s)};
  ht_traced_get_stats(&s);
  return s;
}

static uint64_t field(const ht_traced_stats *s, size_t offset) {
  return *(const uint64_t *)((const char *)s + offset);
}

static uint64_t sum(const ht_traced_stats *s, size_t a, size_t b) {
  return field(s, a) + (b != a ? field(s, b) : 0);
}

/* Notices travel on their own: waits (at most 5 s) until fields a + b of
 * the stats (offsets; b == a: a alone) grew by n since `before`, so that
 * the counts are final. */
static ht_traced_stats grown(const ht_traced_stats *before, size_t a, size_t b, uint64_t n) {
  ht_traced_stats now = stats();
  for (int i = 0; i < 500 && sum(&now, a, b) < sum(before, a, b) + n; i++) {
    usleep(10000);
    now = stats();
  }
  return now;
}
/* n more notices arrived (honoured or not) / were sent or dropped */
#define ARRIVED(before, n)                                                              \
  grown((before), offsetof(ht_traced_stats, notices_received),                          \
        offsetof(ht_traced_stats, notices_refused), (n))
#define GONE_OUT(before, n)                                                             \
  grown((before), offsetof(ht_traced_stats, notices_sent),                              \
        offsetof(ht_traced_stats, notices_dropped), (n))
#define DROPPED(before, n)                                                              \
  grown((before), offsetof(ht_traced_stats, notices_dropped),                           \
        offsetof(ht_traced_stats, notices_dropped), (n))

/* The capture rate's window (a second of the tracer's clock) has just
 * begun: a test's captures all fit in it (HT_CAPTURE_RATE, main). */
static void fresh_window(void) {
  uint64_t s = ht_clock_now() / 1000000000u;
  for (int i = 0; i < 300 && ht_clock_now() / 1000000000u == s; i++)
    usleep(10000);
  assert_int_not_equal(ht_clock_now() / 1000000000u, s);
}

static void set_policy(const char *text) {
  ht_capture_policy p;
  assert_int_equal(ht_capture_policy_parse(text, &p), 0);
  assert_int_equal(ht_capture_policy_set(&p), 0);
}

/* Captures of t whose origin is `who`. */
static int captures_at(const ht_trace_context *t, const char *who) {
  int n = 0;
  for (size_t i = 0; i < recorder_count(&n_captures); i++)
    if (captures[i].ctx.trace_id_lo == t->trace_id_lo &&
        captures[i].ctx.trace_id_hi == t->trace_id_hi &&
        strcmp(captures[i].note.origin, who) == 0)
      n++;
  return n;
}

/* The hops of a notice are any int32 a peer sends: past
 * TS_NOTICE_HOPS_MAX the notice is refused (INT32_MAX + 1 overflowed when
 * forwarded), and a process a notice reached TS_NOTICE_HOPS_MAX hops away
 * captures but forwards it no further (counted dropped). */
static void test_hops_past_the_bound_refused(void **state) {
  chain *c = *state;
  set_policy("off");
  ht_trace_context t = write_once(c);
  fresh_window();
  const int32_t hostile[] = {INT32_MAX, TS_NOTICE_HOPS_MAX + 1};
  for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
    ht_traced_stats before = stats();
    assert_int_equal(ht_transport_notice(c->client, c->primary_url, &t, hostile[i]), 0);
    ht_traced_stats after = ARRIVED(&before, 1);
    assert_int_equal(after.notices_refused - before.notices_refused, 1);
    assert_int_equal(after.notices_received - before.notices_received, 0);
    assert_int_equal(captures_at(&t, "primary"), 0);
  }
  ht_traced_stats before = stats();
  assert_int_equal(ht_transport_notice(c->client, c->primary_url, &t, TS_NOTICE_HOPS_MAX), 0);
  ARRIVED(&before, 1);
  /* the primary's notice to the replica: not sent, counted */
  ht_traced_stats after = DROPPED(&before, 1);
  assert_int_equal(after.notices_received - before.notices_received, 1);
  assert_int_equal(after.notices_dropped - before.notices_dropped, 1);
  assert_int_equal(captures_at(&t, "primary"), 1);
  assert_int_equal(captures[0].note.hops, TS_NOTICE_HOPS_MAX);
  assert_int_equal(captures_at(&t, "replica"), 0);
}

/* Notices for traces the process never saw spend no notice token: a
 * connected peer sending four bursts' worth of made-up trace ids must
 * not silence the next real notice (each took a token before its trace
 * was looked up: 401 refused, the real one among them, no capture, none
 * passed on to the replica). */
static void test_unknown_notices_spend_no_token(void **state) {
  chain *c = *state;
  set_policy("off");
  ht_trace_context t = write_once(c);
  fresh_window();
  ht_traced_stats before = stats();
  const int bogus = 4 * TS_NOTICE_BURST;
  for (int i = 0; i < bogus; i++) {
    ht_trace_context made_up = t;
    made_up.trace_id_hi ^= 0x5a5a5a5a00000000ull + (uint64_t)i + 1;
    assert_int_equal(ht_transport_notice(c->client, c->primary_url, &made_up, 1), 0);
  }
  assert_int_equal(ht_transport_notice(c->client, c->primary_url, &t, 1), 0);
  /* and the primary's notice to the replica (the counts are the
   * process's, all three messengers') */
  ht_traced_stats after = ARRIVED(&before, (uint64_t)bogus + 2);
  assert_int_equal(after.notices_refused - before.notices_refused, bogus);
  assert_int_equal(after.notices_received - before.notices_received, 2);
  assert_int_equal(captures_at(&t, "primary"), 1);
  assert_int_equal(captures_at(&t, "replica"), 1);
}

/* The notice rate's clock is read before its lock: a thread whose
 * reading is older than the one another thread used first must get no
 * refill (now_ns - at_ns wrapped, and gave a second full burst). */
static void test_rate_not_refilled_by_an_earlier_reading(void **state) {
  (void)state;
  ts_crumbs *c = ht_shim_crumbs_new();
  assert_non_null(c);
  const uint64_t t = 10ull * 1000000000ull;
  int granted = 0;
  for (int i = 0; i < 2 * TS_NOTICE_BURST; i++)
    granted += ht_shim_crumbs_rate(c, 0, t);
  assert_int_equal(granted, TS_NOTICE_BURST);
  for (int i = 0; i < 2 * TS_NOTICE_BURST; i++)
    granted += ht_shim_crumbs_rate(c, 0, t - 1); /* read 1 ns earlier */
  assert_int_equal(granted, TS_NOTICE_BURST);
  /* a later reading refills as before: one token an interval */
  granted += ht_shim_crumbs_rate(c, 0, t + 1000000000ull / TS_NOTICE_RATE);
  assert_int_equal(granted, TS_NOTICE_BURST + 1);
  ht_shim_crumbs_free(c);
}

/* A call whose peer the breadcrumbs cannot keep is counted, never
 * silent (its trace's capture is not passed down to it): past
 * TS_CRUMB_PEERS peers for one trace, and past TS_CRUMB_URLS peer URLs a
 * messenger. */
static void note_call(ts_crumbs *c, uint64_t trace_lo, int peer) {
  char url[64];
  snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", 20000 + peer);
  const ht_trace_context t = {.trace_id_hi = 7, .trace_id_lo = trace_lo, .span_id = 1};
  const ht_hook_peer to = {url, (uint64_t)peer + 1};
  (void)ht_shim_crumbs_note(c, &t, &to);
}

static void test_peers_past_the_bounds_counted(void **state) {
  (void)state;
  ts_crumbs *c = ht_shim_crumbs_new();
  assert_non_null(c);
  ht_traced_stats before = stats();
  for (int i = 0; i < TS_CRUMB_PEERS; i++)
    note_call(c, 1, i);
  note_call(c, 1, 0); /* one kept already */
  assert_int_equal(stats().crumb_peers_dropped - before.crumb_peers_dropped, 0);
  note_call(c, 1, TS_CRUMB_PEERS); /* one peer too many for the trace */
  assert_int_equal(stats().crumb_peers_dropped - before.crumb_peers_dropped, 1);
  const char *urls[TS_CRUMB_PEERS];
  int n = 0;
  const ht_trace_context t = {.trace_id_hi = 7, .trace_id_lo = 1, .span_id = 1};
  assert_int_equal(ht_shim_crumbs_claim(c, &t, true, urls, &n), 1);
  assert_int_equal(n, TS_CRUMB_PEERS);
  /* TS_CRUMB_PEERS + 1 URLs so far: the table fills, a trace a URL */
  for (int i = TS_CRUMB_PEERS + 1; i < TS_CRUMB_URLS; i++)
    note_call(c, 100 + (uint64_t)i, i);
  assert_int_equal(stats().crumb_peers_dropped - before.crumb_peers_dropped, 1);
  note_call(c, 1000, TS_CRUMB_URLS); /* one URL too many */
  assert_int_equal(stats().crumb_peers_dropped - before.crumb_peers_dropped, 2);
  ht_shim_crumbs_free(c);
}

/* A notice the process's capture rate refuses leaves its trace
 * unclaimed: a later notice, in the next second, captures it (it was
 * claimed, and so every later one a repeat, never captured). Notices go
 * to the replica straight, which called no one for the traces: nothing
 * is forwarded. */
/* The client's own peer to the replica, connected. */
static ht_peer *connect_replica(chain *c) {
  ht_peer *to_replica = NULL;
  assert_int_equal(ht_messenger_connect(c->client, c->replica_url, &to_replica), 0);
  for (int i = 0; i < 300 && !ht_peer_connected(to_replica); i++)
    usleep(10000);
  return to_replica;
}

/* Spends the process's capture rate: writes, each told to the replica
 * by a notice, until one is past the rate (CAPTURE_RATE of them at most a
 * window); that one's trace, and the stats around its notice. */
static ht_trace_context spend_capture_rate(chain *c, ht_traced_stats *before,
                                           ht_traced_stats *after) {
  ht_trace_context t = {0};
  bool limited = false;
  for (int i = 0; i < 10 * CAPTURE_RATE && !limited; i++) {
    t = write_once(c);
    *before = stats();
    assert_int_equal(ht_transport_notice(c->client, c->replica_url, &t, 1), 0);
    *after = ARRIVED(before, 1);
    limited = after->captures_limited != before->captures_limited;
  }
  assert_true(limited);
  return t;
}

static void test_capture_rate_refusal_not_a_claim(void **state) {
  chain *c = *state;
  set_policy("off");
  ht_peer *to_replica = connect_replica(c);
  ht_traced_stats before, after;
  ht_trace_context t = spend_capture_rate(c, &before, &after);
  assert_int_equal(after.captures_limited - before.captures_limited, 1);
  assert_int_equal(after.notices_refused - before.notices_refused, 1);
  assert_int_equal(after.notices_received - before.notices_received, 0);
  assert_int_equal(captures_at(&t, "replica"), 0);
  fresh_window();
  before = stats();
  assert_int_equal(ht_transport_notice(c->client, c->replica_url, &t, 1), 0);
  after = ARRIVED(&before, 1);
  assert_int_equal(after.notices_received - before.notices_received, 1);
  assert_int_equal(captures_at(&t, "replica"), 1);
  assert_int_equal(ht_peer_close(to_replica), 0);
}

/* A capture this process refused goes no further: a write whose
 * caller's context carries HT_FLAG_CAPTURE, while the process's capture
 * rate is spent, is refused at the primary (one capture limited), and
 * neither its call to the replica nor its reply carry the flag (it was
 * inherited by the server span: the replica, the primary again by the
 * replica's reply, and the client were asked too, four limited). The window is checked afterwards: a rate window
 * that turned meanwhile is tried again. */
static void test_refused_capture_not_passed_on(void **state) {
  chain *c = *state;
  set_policy("off");
  ht_peer *to_replica = connect_replica(c);
  bool done = false;
  for (int attempt = 0; attempt < 5 && !done; attempt++) {
    fresh_window();
    uint64_t window = ht_clock_now() / 1000000000u;
    ht_traced_stats before, after;
    (void)spend_capture_rate(c, &before, &after);
    ht_trace_context t = write_once(c);
    t.flags |= HT_FLAG_CAPTURE;
    before = stats();
    ht_trace_context prev = ht_context_restore(&t);
    answered = 0;
    assert_int_equal(ht_peer_request(c->to_primary, "write", NULL, NULL, on_write_reply, NULL),
                     0);
    ht_context_restore(&prev);
    for (int i = 0; i < 500 && !__atomic_load_n(&answered, __ATOMIC_SEQ_CST); i++)
      usleep(10000);
    /* the replica's dispatch, the primary's and the client's reply hooks
     * all ran before the client's reply callback */
    assert_int_equal(answered, 1);
    after = stats();
    if (ht_clock_now() / 1000000000u != window)
      continue; /* the rate's window turned: not a test of it */
    assert_int_equal(after.captures_limited - before.captures_limited, 1);
    assert_int_equal(captures_at(&t, "primary") + captures_at(&t, "replica") +
                         captures_at(&t, "client"),
                     0);
    done = true;
  }
  assert_true(done);
  assert_int_equal(ht_peer_close(to_replica), 0);
}

/* A write the primary holds, unanswered (its call to the replica done),
 * sent with the capture policy `policy` at the start of a rate window:
 * the primary's request. */
static ht_request *hold_a_write(chain *c, const char *policy, ht_reply_fn on_reply) {
  set_policy(policy);
  fresh_window();
  recorder_reset();
  hold_mode = 1;
  held = NULL;
  assert_int_equal(ht_peer_request(c->to_primary, "write", NULL, NULL, on_reply, NULL), 0);
  for (int i = 0; i < 500 && __atomic_load_n(&held, __ATOMIC_SEQ_CST) == NULL; i++)
    usleep(10000);
  ht_request *req = __atomic_load_n(&held, __ATOMIC_SEQ_CST);
  assert_non_null(req);
  return req;
}

/* A capture told while a request is open flags its reply, also with no
 * trigger set: the mark is made on the loop thread (the notice's), the
 * flag set by the thread that answers, here this one (it copied the
 * span's context while the loop wrote it: a data race, under TSan). */
static int reply_flagged; /* 1: a reply without the flag, 2: with */
static void on_flag_reply(void *arg, int status, const ht_envelope *reply) {
  (void)arg, (void)status;
  bool flag = reply != NULL && reply->has_trace && (reply->trace.flags & HT_FLAG_CAPTURE);
  __atomic_store_n(&reply_flagged, flag ? 2 : 1, __ATOMIC_SEQ_CST);
}

static void test_flag_set_by_the_answering_thread(void **state) {
  chain *c = *state;
  reply_flagged = 0;
  ht_request *req = hold_a_write(c, "off", on_flag_reply);
  recorder_wait(&n_sides, 2);
  ht_trace_context t = side_ctx(HT_SPAN_CLIENT, "primary");
  assert_int_equal(atomic_load(&ht_shim_reply_gate_), 0); /* off: closed */
  /* the second a repeat: once it arrived, the primary's loop is done with
   * the first (it marked the request's span); and the replica's */
  ht_traced_stats before = stats();
  assert_int_equal(ht_transport_notice(c->client, c->primary_url, &t, 1), 0);
  assert_int_equal(ht_transport_notice(c->client, c->primary_url, &t, 1), 0);
  ht_traced_stats after = ARRIVED(&before, 3);
  assert_int_equal(after.notices_received - before.notices_received, 3);
  /* the gate opened for the marked reply */
  assert_int_equal(atomic_load(&ht_shim_reply_gate_), HT_SHIM_GATE_FLAGGED);
  assert_int_equal(ht_request_reply(req, 0, NULL), 0);
  assert_int_equal(atomic_load(&ht_shim_reply_gate_), 0); /* its slot gone */
  for (int i = 0; i < 500 && !__atomic_load_n(&reply_flagged, __ATOMIC_SEQ_CST); i++)
    usleep(10000);
  hold_mode = 0;
  assert_int_equal(reply_flagged, 2);
}

/* A notice queued from another thread is counted when the loop knows
 * its outcome: the primary answers (in error) from this thread after its
 * peer to the replica was closed, so its notice to the replica is not
 * sent (dropped), and only the client's to the primary is (sent). Last:
 * the chain has no replica peer afterwards. */
static void test_queued_notice_counted_by_its_outcome(void **state) {
  chain *c = *state;
  answered = 0;
  ht_request *req = hold_a_write(c, "error", on_write_reply);
  assert_int_equal(ht_peer_close(c->to_replica), 0);
  c->to_replica = NULL;
  ht_traced_stats before = stats();
  assert_int_equal(ht_request_reply(req, 5, NULL), 0); /* the primary fires here */
  ARRIVED(&before, 1); /* the client's notice: a repeat at the primary */
  ht_traced_stats after = GONE_OUT(&before, 2);
  hold_mode = 0;
  assert_int_equal(after.notices_received - before.notices_received, 1);
  assert_int_equal(after.notices_sent - before.notices_sent, 1);
  assert_int_equal(after.notices_dropped - before.notices_dropped, 1);
  ht_trace_context t = side_ctx(HT_SPAN_CLIENT, "client");
  assert_int_equal(captures_at(&t, "primary"), 1);
  set_policy("off");
}

int main(void) {
  /* read once, by the first traced messenger: small enough to reach */
  setenv("HT_CAPTURE_RATE", STR(CAPTURE_RATE), 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rate_not_refilled_by_an_earlier_reading),
      cmocka_unit_test(test_peers_past_the_bounds_counted),
      cmocka_unit_test(test_hops_past_the_bound_refused),
      cmocka_unit_test(test_unknown_notices_spend_no_token),
      cmocka_unit_test(test_capture_rate_refusal_not_a_claim),
      cmocka_unit_test(test_refused_capture_not_passed_on),
      cmocka_unit_test(test_flag_set_by_the_answering_thread),
      cmocka_unit_test(test_queued_notice_counted_by_its_outcome), /* last */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
