/* A capture reaches every process of its trace: a client, a primary and
 * a replica (three messengers, each its own breadcrumbs, as three
 * processes would be), all in flight mode. Up: a trigger at the replica
 * flags its reply, the primary captures and flags its own, the client
 * captures. Down: a trigger at the primary sends a notice to the replica
 * it called, and a call it makes after its capture carries the capture
 * to its server. A notice for a trace a messenger took no part in is refused,
 * and a second one for a captured trace is not spread again. Loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
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
#include "transport/hooks.h"

#include "capture_chain.h"
#include "capture_recorder.h"

static chain *the_chain; /* the primary's handler calls on */
static ht_peer *to_nobody; /* the primary's, to a port nobody listens on */

static int replica_delay_us;
static int32_t primary_status;

static void on_replica(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  if (replica_delay_us > 0)
    usleep((useconds_t)replica_delay_us);
  ht_request_reply(req, 0, NULL);
}

/* The primary answers its client once the replica answered it. */
static void on_replica_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  assert_int_equal(status, 0);
  ht_request_reply(arg, primary_status, NULL);
}

static void to_replica(ht_request *req) {
  assert_int_equal(ht_peer_request(the_chain->to_replica, "replica_write", NULL, NULL,
                                   on_replica_reply, req),
                   0);
}

/* First a call to a peer that is not there (it fails: with the policy
 * "error", the primary captures the trace), then the replica's. The
 * call fails at once while the peer backs off, or later from its reply
 * callback while it reconnects: that callback is not the handler, so it
 * sends in the handler's context, carried as traced.h says (without it,
 * 1 run in 50 made the replica's call the root of a trace of its own). */
static bool primary_fails_first;
static ht_trace_context primary_ctx; /* the handler's, for the callback */

static void on_nobody_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  assert_int_not_equal(status, 0);
  ht_trace_context prev = ht_context_restore(&primary_ctx);
  to_replica(arg);
  ht_context_restore(&prev);
}

static void on_primary(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  if (!primary_fails_first) {
    to_replica(req);
    return;
  }
  primary_ctx = ht_context_capture();
  if (ht_peer_request(to_nobody, "replica_write", NULL, NULL, on_nobody_reply,
                      req) != 0)
    to_replica(req); /* refused at once: the span ended in error all the same */
}

static int setup(void **state) {
  chain *c = chain_start(on_primary, on_replica);
  the_chain = c;
  /* port 1 on loopback: nobody listens (connections refused) */
  assert_int_equal(ht_messenger_connect(c->primary, "tcp://127.0.0.1:1", &to_nobody), 0);
  *state = c;
  return 0;
}

static int teardown(void **state) {
  chain_stop(*state);
  return 0;
}

static int answered;
static int32_t answer_status;
static void on_write_reply(void *arg, int status, const ht_envelope *reply) {
  (void)arg;
  answer_status = status == HT_EPEERERROR && reply != NULL ? reply->status : status;
  __atomic_store_n(&answered, 1, __ATOMIC_SEQ_CST);
}

/* One write through the chain; its trace (the client's side). */
static ht_trace_context write_once(chain *c) {
  answered = 0;
  assert_int_equal(ht_peer_request(c->to_primary, "write", NULL, NULL, on_write_reply, NULL), 0);
  for (int i = 0; i < 500 && !__atomic_load_n(&answered, __ATOMIC_SEQ_CST); i++)
    usleep(10000);
  assert_int_equal(answered, 1);
  recorder_wait(&n_sides, 4); /* client, primary (2), replica */
  for (size_t i = 0; i < n_sides; i++)
    if (sides[i].kind == HT_SPAN_CLIENT && strcmp(sides[i].name, "client") == 0)
      return sides[i].ctx;
  fail_msg("no client span");
  return sides[0].ctx;
}

/* The capture events of trace t: how many fired here (hops 0) with why,
 * and how many came by notice. */
static void count(const ht_trace_context *t, int why, int *fired, int *noticed) {
  *fired = *noticed = 0;
  for (size_t i = 0; i < recorder_count(&n_captures); i++) {
    const capture *k = &captures[i];
    if (k->ctx.trace_id_lo != t->trace_id_lo || k->ctx.trace_id_hi != t->trace_id_hi)
      continue;
    if (k->note.hops == 0 && k->note.why == why)
      (*fired)++;
    else if (k->note.why == HT_CAPTURE_NOTICE)
      (*noticed)++;
  }
}

/* Notices travel on their own: waits (at most 3 s) until `field` of the
 * stats (an offset) is at least `want`, so that the counts are final. */
static void wait_stat(size_t field, uint64_t want) {
  ht_traced_stats now = {.size = sizeof(now)};
  for (int i = 0; i < 300; i++) {
    ht_traced_get_stats(&now);
    if (*(const uint64_t *)((const char *)&now + field) >= want)
      return;
    usleep(10000);
  }
}
#define WAIT_STAT(name, want) wait_stat(offsetof(ht_traced_stats, name), (want))

static void set_policy(const char *text) {
  ht_capture_policy p;
  assert_int_equal(ht_capture_policy_parse(text, &p), 0);
  assert_int_equal(ht_capture_policy_set(&p), 0);
}

/* Up: the replica's slow span flags its reply; the primary and the
 * client capture by it (the primary's own span is slow as well, and
 * fires too, spreading nothing more). */
static void test_a_capture_goes_up_by_replies(void **state) {
  chain *c = *state;
  set_policy("slow-server=20ms");
  recorder_reset();
  replica_delay_us = 40000;
  primary_status = 0;
  ht_traced_stats before = {.size = sizeof(before)}, after = {.size = sizeof(after)};
  ht_traced_get_stats(&before);
  ht_trace_context t = write_once(c);
  replica_delay_us = 0;
  recorder_wait(&n_captures, 4);
  int fired, noticed;
  count(&t, HT_CAPTURE_SLOW_SERVER, &fired, &noticed);
  assert_int_equal(fired, 2);   /* replica and primary */
  assert_int_equal(noticed, 2); /* primary (by the replica's reply), client */
  WAIT_STAT(notices_received, before.notices_received + 4);
  ht_traced_get_stats(&after);
  /* Each process that captured tells the peers it called, also the one
   * whose reply told it (which counts a repeat): the primary the
   * replica, the client the primary; 2 flags and 2 repeats received. */
  assert_int_equal(after.notices_sent - before.notices_sent, 2);
  assert_int_equal(after.notices_received - before.notices_received, 4);
  assert_int_equal(after.notices_refused - before.notices_refused, 0);
}

/* Down: the primary answers in error after the replica answered: the
 * primary fires, sends a notice to the replica, which captures (hops 1);
 * the client fires on its own error too. */
static void test_a_capture_goes_down_by_notices(void **state) {
  chain *c = *state;
  set_policy("error");
  recorder_reset();
  primary_status = 5; /* an application error status */
  ht_traced_stats before = {.size = sizeof(before)}, after = {.size = sizeof(after)};
  ht_traced_get_stats(&before);
  ht_trace_context t = write_once(c);
  primary_status = 0;
  assert_int_equal(answer_status, 5);
  recorder_wait(&n_captures, 3);
  int fired, noticed;
  count(&t, HT_CAPTURE_ERROR, &fired, &noticed);
  assert_int_equal(fired, 2); /* primary, client */
  assert_int_equal(noticed, 1); /* the replica, by notice */
  int replica_noticed = 0;
  for (size_t i = 0; i < n_captures; i++)
    if (captures[i].note.why == HT_CAPTURE_NOTICE && captures[i].note.hops == 1)
      replica_noticed++;
  assert_int_equal(replica_noticed, 1);
  WAIT_STAT(notices_received, before.notices_received + 2);
  ht_traced_get_stats(&after);
  /* down to the replica (honoured), and the client's to the primary (a
   * repeat: the primary fired first) */
  assert_int_equal(after.notices_sent - before.notices_sent, 2);
  assert_int_equal(after.notices_received - before.notices_received, 2);
}

/* After the capture: the primary's call to nobody fails and fires (the
 * trace is captured there, with no peer called yet to notify); its call
 * to the replica, made after, carries the capture in its request: the
 * replica captures (hops 1), and the client by the primary's reply. */
static void test_a_call_after_the_capture_carries_it(void **state) {
  chain *c = *state;
  set_policy("error");
  recorder_reset();
  primary_fails_first = true;
  ht_trace_context t = write_once(c);
  primary_fails_first = false;
  assert_int_equal(answer_status, 0);
  recorder_wait(&n_captures, 3);
  int fired, noticed;
  count(&t, HT_CAPTURE_ERROR, &fired, &noticed);
  assert_int_equal(fired, 1);   /* the primary */
  assert_int_equal(noticed, 2); /* the replica by the request, the client by the reply */
  int replica = 0;
  for (size_t i = 0; i < n_captures; i++)
    if (captures[i].note.why == HT_CAPTURE_NOTICE && captures[i].note.hops == 1 &&
        strcmp(captures[i].note.origin, "replica") == 0)
      replica++;
  assert_int_equal(replica, 1);
}

/* A notice for a trace the primary never saw is refused; one for a
 * trace it captured already is counted and not spread again. */
static void test_notices_only_for_our_traces_and_once(void **state) {
  chain *c = *state;
  set_policy("off");
  recorder_reset();
  ht_traced_stats before = {.size = sizeof(before)}, after = {.size = sizeof(after)};
  ht_traced_get_stats(&before);
  ht_trace_context stranger = {0x1234, 0x5678, 9, 0, HT_FLAG_RECORDED};
  assert_int_equal(ht_transport_notice(c->client, c->primary_url, &stranger, 1), 0);
  WAIT_STAT(notices_refused, before.notices_refused + 1);
  ht_traced_get_stats(&after);
  assert_int_equal(after.notices_refused - before.notices_refused, 1);
  assert_int_equal(recorder_count(&n_captures), 0);
  /* twice for a trace it served: captured and spread once */
  ht_trace_context t = write_once(c);
  ht_traced_get_stats(&before);
  assert_int_equal(ht_transport_notice(c->client, c->primary_url, &t, 1), 0);
  assert_int_equal(ht_transport_notice(c->client, c->primary_url, &t, 1), 0);
  recorder_wait(&n_captures, 2); /* the primary, then the replica by its notice */
  WAIT_STAT(notices_received, before.notices_received + 3);
  ht_traced_get_stats(&after);
  assert_int_equal(after.notices_received - before.notices_received, 3);
  /* the transport counts every notice it sends: this test's two too */
  assert_int_equal(after.notices_sent - before.notices_sent, 3);
  int fired, noticed;
  count(&t, 0, &fired, &noticed);
  assert_int_equal(noticed, 2);
  assert_int_equal(ht_transport_notice(c->client, "tcp://127.0.0.1:1", &t, 1), 0);
  assert_int_equal(ht_transport_notice(NULL, c->primary_url, &t, 1), HT_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_capture_goes_up_by_replies),
      cmocka_unit_test(test_a_capture_goes_down_by_notices),
      cmocka_unit_test(test_a_call_after_the_capture_carries_it),
      cmocka_unit_test(test_notices_only_for_our_traces_and_once),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
