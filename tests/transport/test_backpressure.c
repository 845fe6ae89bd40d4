/* Back-pressure: a peer that does not read makes sends fail fast with
 * HT_EQUEUEFULL while the queue stays within its bound, and the writable
 * callback fires once the peer reads again. A client that sends requests
 * without reading replies makes the server stop reading it (bounded
 * memory) while other clients are still served. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdatomic.h>

#include "tt_raw.h"
#include "tt_util.h"

enum { QUEUE_BYTES = 256 * 1024, MSG = 16 * 1024 };

/* A listener that accepts one connection and reads only when told. */
typedef struct lazy_server {
  int lfd, cfd;
  int port;
} lazy_server;

static void lazy_listen(lazy_server *s) {
  s->lfd = socket(AF_INET, SOCK_STREAM, 0);
  int small = 4096;
  setsockopt(s->lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  struct sockaddr_in sa = {.sin_family = AF_INET};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(listen(s->lfd, 4), 0);
  socklen_t len = sizeof(sa);
  getsockname(s->lfd, (struct sockaddr *)&sa, &len);
  s->port = ntohs(sa.sin_port);
  s->cfd = -1;
}

static void on_writable(void *arg, ht_peer *peer) {
  (void)peer;
  tt_counter_add(arg, 1);
}

static void test_slow_reader_queue_full(void **state) {
  (void)state;
  lazy_server ls;
  lazy_listen(&ls);
  char url[64];
  snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", ls.port);
  /* A messenger with a small queue bound. */
  ht_messenger *cli;
  ht_messenger_options opts;
  ht_messenger_options_init(&opts);
  opts.flavour = HT_MESSENGER_PLAIN;
  opts.write_queue_bytes = QUEUE_BYTES;
  assert_int_equal(ht_messenger_new(&opts, &cli), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  ls.cfd = accept(ls.lfd, NULL, NULL);
  assert_true(ls.cfd >= 0);
  tt_counter writable;
  tt_counter_init(&writable);
  assert_int_equal(ht_peer_on_writable(p, on_writable, &writable), 0);

  static char payload[MSG];
  memset(payload, 'b', sizeof(payload));
  int sent = 0, rc = 0;
  /* Kernel buffers take a few MB at most; the queue then fills. */
  for (int i = 0; i < 4000 && rc == 0; i++) {
    ht_payload pl = {payload, sizeof(payload), NULL, NULL};
    rc = ht_peer_send(p, "blob", &pl);
    if (rc == 0)
      sent++;
    else
      assert_int_equal(rc, HT_EQUEUEFULL);
    assert_true(ht_peer_queued_bytes(p) <= QUEUE_BYTES + MSG);
    if (i % 64 == 63)
      tt_sleep_ms(1); /* let the loop push bytes into the socket */
  }
  assert_int_equal(rc, HT_EQUEUEFULL);
  /* Keep pushing until the kernel buffers are full too: then the queue
   * stays full and every send fails fast. */
  int full_streak = 0;
  uint64_t stop = tt_now_ms() + 10000;
  while (full_streak < 200 && tt_now_ms() < stop) {
    ht_payload pl = {payload, sizeof(payload), NULL, NULL};
    rc = ht_peer_send(p, "blob", &pl);
    full_streak = rc == HT_EQUEUEFULL ? full_streak + 1 : 0;
    assert_true(rc == 0 || rc == HT_EQUEUEFULL);
    assert_true(ht_peer_queued_bytes(p) <= QUEUE_BYTES + MSG);
    tt_sleep_ms(1);
  }
  assert_int_equal(full_streak, 200);
  /* full by bytes: the message count says how many frames of MSG bytes
   * (plus a short header each) wait; nothing moves while the reader
   * sleeps */
  size_t queued = ht_peer_queued_msgs(p);
  assert_true(queued > 0);
  size_t per_frame = ht_peer_queued_bytes(p) / queued;
  assert_true(per_frame >= MSG && per_frame < MSG + 64);
  long before = tt_counter_get(&writable);
  /* The reader wakes up: the queue drains and the callback runs. */
  static char sink[65536];
  uint64_t until = tt_now_ms() + 10000;
  fcntl(ls.cfd, F_SETFL, O_NONBLOCK);
  while (tt_counter_get(&writable) == before && tt_now_ms() < until) {
    if (recv(ls.cfd, sink, sizeof(sink), 0) <= 0)
      tt_sleep_ms(1);
  }
  assert_int_equal(tt_counter_get(&writable), before + 1);
  /* writable: below half of both bounds */
  assert_true(ht_peer_queued_msgs(p) <= queued / 2 + 1);
  ht_payload pl = {payload, sizeof(payload), NULL, NULL};
  assert_int_equal(ht_peer_send(p, "blob", &pl), 0);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  close(ls.cfd);
  close(ls.lfd);
  tt_counter_destroy(&writable);
}

/* --- server side: a client that never reads its replies */

static atomic_long handled;

static void big_echo(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg;
  (void)msg;
  static char big[8192];
  atomic_fetch_add(&handled, 1);
  ht_payload p = {big, sizeof(big), NULL, NULL};
  ht_request_reply(req, 0, &p);
}

static void tweak_server(ht_messenger_options *o) {
  o->write_queue_bytes = 128 * 1024;
  o->max_inflight = 64;
}

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  atomic_store((atomic_int *)arg, status == 0 ? 1 : -1);
}

static void test_client_not_reading_replies(void **state) {
  (void)state;
  ht_messenger *srv = tt_messenger("srv", NULL, tweak_server);
  assert_int_equal(ht_messenger_handle(srv, "big", big_echo, NULL), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  int fd = tt_raw_connect(url);
  assert_true(fd >= 0);
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  fcntl(fd, F_SETFL, O_NONBLOCK);
  /* One encoded request, written over and over until the socket blocks. */
  uint8_t frame[64];
  size_t flen;
  ht_envelope env = {.version = 1, .type = HT_MSG_REQUEST, .sequence = 1,
                     .operation = "big", .payload = "q", .payload_len = 1};
  assert_int_equal(ht_frame_encode(&env, frame, sizeof(frame), &flen), 0);
  long written = 0;
  uint64_t until = tt_now_ms() + 3000;
  int stalls = 0;
  size_t off = 0;
  while (tt_now_ms() < until && stalls < 50) {
    ssize_t n = send(fd, frame + off, flen - off, 0);
    if (n > 0) {
      off += (size_t)n;
      if (off == flen) {
        off = 0;
        written++;
      }
      stalls = 0;
    } else {
      stalls++;
      tt_sleep_ms(2);
    }
  }
  /* The server stops reading long before everything is handled: the
   * count settles (unchanged for 200 ms) below what was written. */
  long h2 = atomic_load(&handled), h1 = -1;
  uint64_t settle_until = tt_now_ms() + 20000;
  while (h1 != h2 && tt_now_ms() < settle_until) {
    h1 = h2;
    tt_sleep_ms(200);
    h2 = atomic_load(&handled);
  }
  assert_int_equal(h1, h2);
  assert_true(h2 < written);
  /* Bound: replies queued ≤ queue bound + one read's worth of requests. */
  assert_true(h2 * 8192 < 64L * 1024 * 1024);
  /* Another client is still served. */
  ht_messenger *cli = tt_messenger("cli", NULL, NULL);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  atomic_int got = 0;
  ht_payload pl = {"x", 1, NULL, NULL};
  assert_int_equal(ht_peer_request(p, "big", &pl, NULL, on_reply, &got), 0);
  until = tt_now_ms() + 5000;
  while (atomic_load(&got) == 0 && tt_now_ms() < until)
    tt_sleep_ms(1);
  assert_int_equal(atomic_load(&got), 1);
  close(fd);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slow_reader_queue_full),
      cmocka_unit_test(test_client_not_reading_replies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
