/* Transport basics on loopback: echo RPC over TCP (IPv4, IPv6) and Unix
 * sockets, one-way messages, error replies, missing handlers, addresses,
 * handler registration, keeping a message, timeouts, refused connections
 * and reconnects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tt_util.h"

/* One request, waits for its reply; returns the callback status. */
static int call(ht_peer *p, const char *op, const char *text, reply_box *b,
                uint32_t timeout_ms) {
  box_init(b);
  ht_payload pl = {text, strlen(text), NULL, NULL};
  ht_request_options ro;
  ht_request_options_init(&ro);
  ro.timeout_ms = timeout_ms;
  int rc = ht_peer_request(p, op, &pl, &ro, box_reply, b);
  if (rc != 0)
    return rc;
  assert_int_equal(tt_counter_wait(&b->done, 1, 10000), 1);
  return b->status;
}

static void wait_connected(ht_peer *p) {
  uint64_t until = tt_now_ms() + 5000;
  while (!ht_peer_connected(p) && tt_now_ms() < until)
    tt_sleep_ms(2);
  assert_true(ht_peer_connected(p));
}

static void echo_over(const char *listen_url) {
  ht_messenger *srv = tt_messenger("srv", NULL, NULL);
  ht_messenger *cli = tt_messenger("cli", NULL, NULL);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  char bound[128];
  assert_int_equal(ht_messenger_listen(srv, listen_url, bound, sizeof(bound)), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, bound, &p), 0);
  assert_string_equal(ht_peer_url(p), bound);
  reply_box b;
  for (int i = 0; i < 50; i++) {
    char text[32];
    snprintf(text, sizeof(text), "hello %d", i);
    assert_int_equal(call(p, "echo", text, &b, 5000), 0);
    assert_int_equal(b.len, strlen(text));
    assert_memory_equal(b.payload, text, b.len);
  }
  /* Empty payload, zero-copy payload with done. */
  assert_int_equal(call(p, "echo", "", &b, 5000), 0);
  assert_int_equal(b.len, 0);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
}

static void test_echo_tcp4(void **state) {
  (void)state;
  echo_over("tcp://127.0.0.1:0");
}

static void test_echo_tcp6(void **state) {
  (void)state;
  echo_over("tcp://[::1]:0");
}

static void test_echo_unix(void **state) {
  (void)state;
  char url[128];
  tt_unix_url(url, sizeof(url), "echo");
  echo_over(url);
}

typedef struct done_box {
  tt_counter done;
  int status;
} done_box;

static void on_done(void *arg, int status) {
  done_box *d = arg;
  d->status = status;
  tt_counter_add(&d->done, 1);
}

static void oneway_handler(void *arg, ht_request *req, const ht_envelope *msg) {
  reply_box *b = arg;
  assert_null(req);
  assert_int_equal(msg->type, HT_MSG_ONEWAY);
  b->len = msg->payload_len;
  memcpy(b->payload, msg->payload, msg->payload_len);
  tt_counter_add(&b->done, 1);
}

static void error_handler(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg;
  (void)msg;
  ht_payload p = {"nope", 4, NULL, NULL};
  ht_request_reply(req, -7777, &p);
}

static void test_oneway_errors_nohandler(void **state) {
  (void)state;
  ht_messenger *srv = tt_messenger("srv", NULL, NULL);
  ht_messenger *cli = tt_messenger("cli", NULL, NULL);
  reply_box got;
  box_init(&got);
  assert_int_equal(ht_messenger_handle(srv, "note", oneway_handler, &got), 0);
  assert_int_equal(ht_messenger_handle(srv, "note", oneway_handler, &got), HT_EEXIST);
  assert_int_equal(ht_messenger_handle(srv, "fail", error_handler, NULL), 0);
  assert_int_equal(ht_messenger_handle(srv, "gone", NULL, NULL), HT_ENOENT);
  char bound[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", bound, sizeof(bound)), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, bound, &p), 0);

  /* One-way with a zero-copy payload: done runs once, status 0. */
  static const char msg[] = "one-way";
  done_box d = {0};
  tt_counter_init(&d.done);
  ht_payload pl = {msg, sizeof(msg), on_done, &d};
  assert_int_equal(ht_peer_send(p, "note", &pl), 0);
  assert_int_equal(tt_counter_wait(&got.done, 1, 5000), 1);
  assert_string_equal(got.payload, msg);
  assert_int_equal(tt_counter_wait(&d.done, 1, 5000), 1);
  assert_int_equal(d.status, 0);

  reply_box b;
  assert_int_equal(call(p, "fail", "x", &b, 5000), HT_EPEERERROR);
  assert_int_equal(b.peer_status, -7777);
  assert_int_equal(b.len, 4);
  assert_int_equal(call(p, "missing", "x", &b, 5000), HT_EPEERERROR);
  assert_int_equal(b.peer_status, HT_ENOHANDLER);

  /* The default handler takes what has no handler of its own. */
  assert_int_equal(ht_messenger_handle(srv, NULL, tt_echo_handler, NULL), 0);
  assert_int_equal(call(p, "missing", "dflt", &b, 5000), 0);
  assert_int_equal(b.len, 4);
  assert_int_equal(ht_messenger_handle(srv, NULL, NULL, NULL), 0);
  assert_int_equal(call(p, "missing", "x", &b, 5000), HT_EPEERERROR);

  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  tt_counter_destroy(&d.done);
}

static void test_addresses_and_options(void **state) {
  (void)state;
  ht_messenger *m = tt_messenger("m", NULL, NULL);
  ht_peer *p;
  const char *bad[] = {"tcp://", "tcp://127.0.0.1", "tcp://127.0.0.1:70000",
                       "tcp://::1:80", "tcp://[::1]80", "udp://1.2.3.4:5",
                       "unix://relative", "tcp://example.com:80",
                       "tcp://1.2.3.4:8x"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_int_equal(ht_messenger_connect(m, bad[i], &p), HT_EADDR);
    assert_int_equal(ht_messenger_listen(m, bad[i], NULL, 0), HT_EADDR);
  }
  char tiny[4];
  assert_int_equal(ht_messenger_listen(m, "tcp://127.0.0.1:0", tiny, sizeof(tiny)),
                   HT_ENOSPC);
  /* A regular file at a Unix path is never replaced. */
  char url[128];
  tt_unix_url(url, sizeof(url), "file");
  FILE *f = fopen(url + 7, "w");
  assert_non_null(f);
  fclose(f);
  assert_int_equal(ht_messenger_listen(m, url, NULL, 0), HT_EEXIST);
  assert_int_equal(unlink(url + 7), 0);
  /* A socket file is ours: replaced when stale, removed on close. */
  tt_unix_url(url, sizeof(url), "mine");
  assert_int_equal(ht_messenger_listen(m, url, NULL, 0), 0);
  assert_int_equal(ht_messenger_close(m, 0), 0);
  assert_int_equal(access(url + 7, F_OK), -1);

  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.reconnect_min_ms = 10;
  o.reconnect_max_ms = 5;
  assert_int_equal(ht_messenger_new(&o, &m), HT_EINVAL);
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_TRACED; /* the shim builds it */
  assert_int_equal(ht_messenger_new(&o, &m), 0);
  assert_int_equal(ht_messenger_close(m, 0), 0);
  ht_messenger_options_init(&o);
  o.size = 4; /* a caller that knows nothing */
  assert_int_equal(ht_messenger_new(&o, &m), HT_EINVAL);
  setenv("HT_MESSENGER", "bogus", 1);
  assert_int_equal(ht_messenger_new(NULL, &m), HT_EINVAL);
  setenv("HT_MESSENGER", "plain", 1);
  assert_int_equal(ht_messenger_new(NULL, &m), 0);
  assert_int_equal(ht_messenger_close(m, 0), 0);
  unsetenv("HT_MESSENGER");
}

static void test_message_copy(void **state) {
  (void)state;
  ht_envelope e = {.version = 1, .type = HT_MSG_REQUEST, .sequence = 9,
                   .operation = "op", .payload = "abc", .payload_len = 3};
  ht_envelope *c;
  assert_int_equal(ht_message_copy(&e, &c), 0);
  assert_string_equal(c->operation, "op");
  assert_ptr_not_equal(c->payload, e.payload);
  assert_memory_equal(c->payload, "abc", 3);
  assert_int_equal(c->sequence, 9);
  ht_message_free(c);
  assert_int_equal(ht_message_copy(NULL, &c), HT_EINVAL);
}

/* --- timeouts, refused connections, reconnects */

typedef struct held_list {
  pthread_mutex_t lock;
  ht_request *reqs[64];
  int n;
} held_list;

static void hold_handler(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)msg;
  held_list *h = arg;
  pthread_mutex_lock(&h->lock);
  if (h->n < 64)
    h->reqs[h->n++] = req; /* answered later (or dropped) by the test */
  else
    ht_request_drop(req);
  pthread_mutex_unlock(&h->lock);
}

static ht_request *take_held(held_list *h) {
  pthread_mutex_lock(&h->lock);
  ht_request *r = h->n > 0 ? h->reqs[--h->n] : NULL;
  pthread_mutex_unlock(&h->lock);
  return r;
}

static void test_timeout(void **state) {
  (void)state;
  ht_messenger *srv = tt_messenger("srv", NULL, NULL);
  ht_messenger *cli = tt_messenger("cli", NULL, NULL);
  held_list held = {.n = 0};
  pthread_mutex_init(&held.lock, NULL);
  assert_int_equal(ht_messenger_handle(srv, "hold", hold_handler, &held), 0);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  char bound[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", bound, sizeof(bound)), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, bound, &p), 0);
  reply_box b;
  uint64_t t0 = tt_now_ms();
  assert_int_equal(call(p, "hold", "x", &b, 100), HT_ETIMEDOUT);
  uint64_t took = tt_now_ms() - t0;
  assert_true(took >= 95);
  /* The late reply is ignored; the connection keeps working. */
  ht_request *late = take_held(&held);
  assert_non_null(late);
  /* a held request still names its operation and requester */
  assert_string_equal(ht_request_operation(late), "hold");
  assert_int_equal(strncmp(ht_request_peer(late), "tcp://127.0.0.1:", 16), 0);
  assert_int_equal(ht_request_reply(late, 0, NULL), 0);
  assert_int_equal(call(p, "echo", "after", &b, 5000), 0);
  /* Many timeouts of different lengths, all reported once. */
  enum { N = 20 };
  static reply_box boxes[N];
  for (int i = 0; i < N; i++) {
    box_init(&boxes[i]);
    ht_request_options ro;
    ht_request_options_init(&ro);
    ro.timeout_ms = (uint32_t)(20 + 10 * (N - i));
    ht_payload pl = {"h", 1, NULL, NULL};
    assert_int_equal(ht_peer_request(p, "hold", &pl, &ro, box_reply, &boxes[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    assert_int_equal(tt_counter_wait(&boxes[i].done, 1, 5000), 1);
    assert_int_equal(boxes[i].status, HT_ETIMEDOUT);
  }
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  for (ht_request *r; (r = take_held(&held)) != NULL;)
    ht_request_drop(r);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  pthread_mutex_destroy(&held.lock);
}

static void tweak_fast_reconnect(ht_messenger_options *o) {
  o->reconnect_min_ms = 10;
  o->reconnect_max_ms = 40;
}

static void test_refused_then_reconnect(void **state) {
  (void)state;
  /* Find a free port, then close it so the first connect is refused. */
  ht_messenger *srv = tt_messenger("srv", NULL, NULL);
  char bound[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", bound, sizeof(bound)), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);

  ht_messenger *cli = tt_messenger("cli", NULL, tweak_fast_reconnect);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, bound, &p), 0);
  reply_box b;
  int rc = call(p, "echo", "x", &b, 5000);
  assert_true(rc == HT_ENOTCONN);
  srv = tt_messenger("srv2", NULL, NULL);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  assert_int_equal(ht_messenger_listen(srv, bound, NULL, 0), 0);
  wait_connected(p);
  assert_int_equal(call(p, "echo", "back", &b, 5000), 0);
  /* Server goes away and comes back: the peer reconnects by itself. */
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  uint64_t until = tt_now_ms() + 5000;
  while (ht_peer_connected(p) && tt_now_ms() < until)
    tt_sleep_ms(2);
  assert_false(ht_peer_connected(p));
  srv = tt_messenger("srv3", NULL, NULL);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  assert_int_equal(ht_messenger_listen(srv, bound, NULL, 0), 0);
  wait_connected(p);
  assert_int_equal(call(p, "echo", "again", &b, 5000), 0);
  assert_int_equal(ht_peer_close(p), 0);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_echo_tcp4),
      cmocka_unit_test(test_echo_tcp6),
      cmocka_unit_test(test_echo_unix),
      cmocka_unit_test(test_oneway_errors_nohandler),
      cmocka_unit_test(test_addresses_and_options),
      cmocka_unit_test(test_message_copy),
      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_refused_then_reconnect),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
