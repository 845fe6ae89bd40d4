/* 10,000 requests in flight at once across 100 connections: the server
 * holds every request until all have arrived, then answers them in a
 * scrambled order; every reply must reach its own request, exactly once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_rng.h"
#include "tt_util.h"

enum { CONNS = 100, PER_CONN = 100, TOTAL = CONNS * PER_CONN };

typedef struct held {
  ht_request *req;
  uint32_t value;
} held;

typedef struct server_state {
  held held[TOTAL];
  int n;
} server_state;

static void hold_all(void *arg, ht_request *req, const ht_envelope *msg) {
  server_state *s = arg;
  assert_int_equal(msg->payload_len, 4);
  memcpy(&s->held[s->n].value, msg->payload, 4);
  s->held[s->n++].req = req;
  if (s->n < TOTAL)
    return;
  /* Everything is in flight: answer in a shuffled order (loop thread). */
  test_rng rng = {77};
  for (int i = TOTAL - 1; i > 0; i--) {
    int j = (int)test_rng_below(&rng, (uint64_t)i + 1);
    held t = s->held[i];
    s->held[i] = s->held[j];
    s->held[j] = t;
  }
  for (int i = 0; i < TOTAL; i++) {
    uint32_t answer = s->held[i].value ^ 0xa5a5a5a5u;
    ht_payload p = {&answer, 4, NULL, NULL};
    assert_int_equal(ht_request_reply(s->held[i].req, 0, &p), 0);
  }
}

typedef struct client_state {
  uint8_t seen[TOTAL];
  tt_counter done;
  long bad;
} client_state;

typedef struct req_ctx {
  client_state *cs;
  uint32_t value;
} req_ctx;

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  req_ctx *ctx = arg;
  client_state *cs = ctx->cs;
  uint32_t answer = 0;
  if (status == 0 && reply->payload_len == 4)
    memcpy(&answer, reply->payload, 4);
  if (status != 0 || answer != (ctx->value ^ 0xa5a5a5a5u))
    cs->bad++;
  cs->seen[ctx->value]++;
  tt_counter_add(&cs->done, 1);
}

static void tweak(ht_messenger_options *o) { o->request_timeout_ms = 60000; }

static void test_ten_thousand_in_flight(void **state) {
  (void)state;
  static server_state ss;
  static client_state cs;
  static req_ctx ctx[TOTAL];
  tt_counter_init(&cs.done);
  ht_messenger *srv = tt_messenger("srv", NULL, tweak);
  ht_messenger *cli = tt_messenger("cli", NULL, tweak);
  assert_int_equal(ht_messenger_handle(srv, "hold", hold_all, &ss), 0);
  char bound[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", bound, sizeof(bound)), 0);
  static ht_peer *peers[CONNS];
  for (int i = 0; i < CONNS; i++)
    assert_int_equal(ht_messenger_connect(cli, bound, &peers[i]), 0);
  for (int k = 0; k < PER_CONN; k++) {
    for (int i = 0; i < CONNS; i++) {
      uint32_t v = (uint32_t)(k * CONNS + i);
      ctx[v] = (req_ctx){&cs, v};
      ht_payload p = {&ctx[v].value, 4, NULL, NULL};
      assert_int_equal(ht_peer_request(peers[i], "hold", &p, NULL, on_reply, &ctx[v]), 0);
    }
  }
  assert_int_equal(tt_counter_wait(&cs.done, TOTAL, 60000), TOTAL);
  tt_sleep_ms(50); /* a duplicate callback would land here */
  assert_int_equal(tt_counter_get(&cs.done), TOTAL);
  assert_int_equal(cs.bad, 0);
  for (int v = 0; v < TOTAL; v++)
    assert_int_equal(cs.seen[v], 1);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  tt_counter_destroy(&cs.done);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ten_thousand_in_flight),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
