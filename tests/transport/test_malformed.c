/* Hostile input from raw sockets: malformed envelopes, oversized length
 * prefixes, truncated frames, and too many connections. Each bad
 * connection is closed with a logged reason; the server survives and a
 * well-behaved client is served before, during and after. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>

#include "tt_raw.h"
#include "tt_util.h"

enum { MAX_FRAME = 4096, MAX_CONNS = 4 };

typedef struct fixture {
  tt_log log;
  ht_messenger *srv, *cli;
  ht_peer *good;
  char url[128];
} fixture;

static void tweak_server(ht_messenger_options *o) {
  o->max_frame = MAX_FRAME;
  o->max_connections = MAX_CONNS;
}

enum { FRAME_TIMEOUT_MS = 300 };

static void tweak_slow_server(ht_messenger_options *o) {
  tweak_server(o);
  o->frame_timeout_ms = FRAME_TIMEOUT_MS;
}

static int setup_with(void **state, void (*tweak)(ht_messenger_options *)) {
  fixture *f = calloc(1, sizeof(*f));
  tt_counter_init(&f->log.warnings);
  f->srv = tt_messenger("srv", &f->log, tweak);
  f->cli = tt_messenger("cli", NULL, NULL);
  assert_int_equal(ht_messenger_handle(f->srv, "echo", tt_echo_handler, NULL), 0);
  assert_int_equal(ht_messenger_listen(f->srv, "tcp://127.0.0.1:0", f->url, sizeof(f->url)), 0);
  assert_int_equal(ht_messenger_connect(f->cli, f->url, &f->good), 0);
  *state = f;
  return 0;
}

static int setup(void **state) { return setup_with(state, tweak_server); }

static int setup_slow(void **state) {
  return setup_with(state, tweak_slow_server);
}

static int teardown(void **state) {
  fixture *f = *state;
  assert_int_equal(ht_messenger_close(f->cli, 0), 0);
  assert_int_equal(ht_messenger_close(f->srv, 0), 0);
  tt_counter_destroy(&f->log.warnings);
  free(f);
  return 0;
}

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  int *out = arg;
  __atomic_store_n(out, status == 0 && reply->payload_len == 2 ? 1 : -1,
                   __ATOMIC_SEQ_CST);
}

/* The good client still gets an echo. */
static void assert_served(fixture *f) {
  int got = 0;
  ht_payload p = {"ok", 2, NULL, NULL};
  assert_int_equal(ht_peer_request(f->good, "echo", &p, NULL, on_reply, &got), 0);
  uint64_t until = tt_now_ms() + 5000;
  while (__atomic_load_n(&got, __ATOMIC_SEQ_CST) == 0 && tt_now_ms() < until)
    tt_sleep_ms(1);
  assert_int_equal(__atomic_load_n(&got, __ATOMIC_SEQ_CST), 1);
}

/* Sends bytes on a fresh raw connection; expects the server to close it
 * and to log a warning naming `reason`. */
static void expect_rejected(fixture *f, const void *bytes, size_t len,
                            const char *reason) {
  assert_served(f);
  long warnings = tt_counter_get(&f->log.warnings);
  int fd = tt_raw_connect(f->url);
  assert_true(fd >= 0);
  assert_int_equal(send(fd, bytes, len, 0), (ssize_t)len);
  assert_int_equal(tt_raw_closed_by_peer(fd, 5000), 1);
  close(fd);
  assert_true(tt_counter_wait(&f->log.warnings, warnings + 1, 5000) > warnings);
  pthread_mutex_lock(&f->log.warnings.lock);
  assert_non_null(strstr(f->log.last, reason));
  pthread_mutex_unlock(&f->log.warnings.lock);
  assert_served(f);
}

static void test_garbage_envelope(void **state) {
  uint8_t frame[4 + 8];
  tt_put_be32(frame, 8);
  memset(frame + 4, 0xff, 8); /* an endless varint */
  expect_rejected(*state, frame, sizeof(frame), "bad frame");
}

static void test_oversized_prefix(void **state) {
  uint8_t frame[4 + 16] = {0};
  tt_put_be32(frame, 64u * 1024u * 1024u); /* no allocation may follow */
  expect_rejected(*state, frame, sizeof(frame), "frame length exceeds");
}

static void test_valid_prefix_bad_type(void **state) {
  /* A well-formed protobuf with an unknown message type 99: field 2
   * (type), varint. */
  uint8_t frame[4 + 4] = {0, 0, 0, 4, 0x08, 0x01, 0x10, 99};
  expect_rejected(*state, frame, sizeof(frame), "bad frame");
}

static void test_truncated_then_close(void **state) {
  fixture *f = *state;
  assert_served(f);
  int fd = tt_raw_connect(f->url);
  uint8_t part[4 + 3] = {0, 0, 0, 100, 1, 2, 3};
  assert_int_equal(send(fd, part, sizeof(part), 0), (ssize_t)sizeof(part));
  close(fd); /* half a frame, then gone */
  assert_served(f);
}

/* Slowloris: a frame announced and then dripped, or stalled,
 * closes its connection frame_timeout_ms after its first byte. */
static void expect_slow_frame_closed(fixture *f, int drip_ms) {
  assert_served(f);
  long warnings = tt_counter_get(&f->log.warnings);
  int fd = tt_raw_connect(f->url);
  assert_true(fd >= 0);
  uint8_t start[4 + 10] = {0};
  tt_put_be32(start, 1000);
  assert_int_equal(send(fd, start, sizeof(start), 0), (ssize_t)sizeof(start));
  uint64_t t0 = tt_now_ms(), until = t0 + 10 * FRAME_TIMEOUT_MS;
  int closed = 0;
  while (!closed && tt_now_ms() < until) {
    if (drip_ms > 0) /* one byte at a time: progress, never a whole frame */
      (void)!send(fd, "x", 1, MSG_NOSIGNAL);
    closed = tt_raw_closed_by_peer(fd, drip_ms > 0 ? drip_ms : 50);
  }
  close(fd);
  assert_true(closed);
  assert_true(tt_now_ms() - t0 >= FRAME_TIMEOUT_MS - 20);
  assert_true(tt_counter_wait(&f->log.warnings, warnings + 1, 5000) > warnings);
  pthread_mutex_lock(&f->log.warnings.lock);
  assert_non_null(strstr(f->log.last, "frame incomplete"));
  pthread_mutex_unlock(&f->log.warnings.lock);
  assert_served(f);
}

static void test_slow_drip_frame_closed(void **state) {
  expect_slow_frame_closed(*state, 50);
}

static void test_stalled_frame_closed(void **state) {
  expect_slow_frame_closed(*state, 0);
}

/* A slow but honest sender is not: every frame arrives whole within the
 * limit (here in two halves), even if the connection lives far longer. */
static void test_slow_whole_frames_kept(void **state) {
  fixture *f = *state;
  ht_envelope env = {.version = HT_WIRE_VERSION, .type = HT_MSG_ONEWAY,
                     .operation = "echo", .payload = "hi", .payload_len = 2};
  uint8_t frame[128];
  size_t len = 0;
  assert_int_equal(ht_frame_encode(&env, frame, sizeof(frame), &len), 0);
  int fd = tt_raw_connect(f->url);
  assert_true(fd >= 0);
  long warnings = tt_counter_get(&f->log.warnings);
  for (int i = 0; i < 6; i++) {
    assert_int_equal(send(fd, frame, len / 2, 0), (ssize_t)(len / 2));
    tt_sleep_ms(FRAME_TIMEOUT_MS / 4);
    assert_int_equal(send(fd, frame + len / 2, len - len / 2, 0), (ssize_t)(len - len / 2));
    tt_sleep_ms(FRAME_TIMEOUT_MS / 2);
  }
  /* 6 x 225 ms = 1.35 s open, > 4 x the frame limit */
  assert_int_equal(tt_raw_closed_by_peer(fd, FRAME_TIMEOUT_MS), 0);
  close(fd);
  assert_int_equal(tt_counter_get(&f->log.warnings), warnings);
  assert_served(f);
}

static void test_many_bad_clients(void **state) {
  fixture *f = *state;
  for (int i = 0; i < 50; i++) {
    int fd = tt_raw_connect(f->url);
    assert_true(fd >= 0);
    uint8_t junk[64];
    memset(junk, i, sizeof(junk));
    tt_put_be32(junk, (uint32_t)(i % 2 ? 60 : 1u << 30));
    (void)!send(fd, junk, sizeof(junk), 0);
    close(fd);
  }
  assert_served(f);
}

static void test_connection_limit(void **state) {
  fixture *f = *state;
  /* The good client holds one connection; fill the rest. */
  int fds[MAX_CONNS - 1];
  for (int i = 0; i < MAX_CONNS - 1; i++) {
    fds[i] = tt_raw_connect(f->url);
    assert_true(fds[i] >= 0);
  }
  assert_served(f); /* all accepted by now */
  long warnings = tt_counter_get(&f->log.warnings);
  int extra = tt_raw_connect(f->url);
  assert_true(extra >= 0);
  assert_int_equal(tt_raw_closed_by_peer(extra, 5000), 1);
  close(extra);
  assert_true(tt_counter_wait(&f->log.warnings, warnings + 1, 5000) > warnings);
  assert_non_null(strstr(f->log.last, "refused"));
  /* Slots free up when connections go. */
  close(fds[0]);
  tt_sleep_ms(50);
  int again = tt_raw_connect(f->url);
  assert_int_equal(tt_raw_closed_by_peer(again, 300), 0);
  close(again);
  for (int i = 1; i < MAX_CONNS - 1; i++)
    close(fds[i]);
  assert_served(f);
}

static void tweak_backoff(ht_messenger_options *o) {
  o->reconnect_min_ms = 10;
  o->reconnect_max_ms = 1000;
}

/* A server that accepts and drops at once (its limit is reached) must see
 * the client back off: ~7 attempts in 700 ms, not one every 10 ms. */
static void test_reconnect_backs_off(void **state) {
  fixture *f = *state;
  int fds[MAX_CONNS - 1];
  for (int i = 0; i < MAX_CONNS - 1; i++)
    fds[i] = tt_raw_connect(f->url);
  assert_served(f); /* the limit is now full */
  long before = tt_counter_get(&f->log.warnings);
  tt_log quiet;
  tt_counter_init(&quiet.warnings);
  ht_messenger *c2 = tt_messenger("c2", &quiet, tweak_backoff);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(c2, f->url, &p), 0);
  tt_sleep_ms(700);
  assert_int_equal(ht_messenger_close(c2, 0), 0);
  long attempts = tt_counter_get(&f->log.warnings) - before;
  assert_true(attempts >= 2);
  assert_true(attempts <= 12);
  for (int i = 0; i < MAX_CONNS - 1; i++)
    close(fds[i]);
  tt_counter_destroy(&quiet.warnings);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_garbage_envelope, setup, teardown),
      cmocka_unit_test_setup_teardown(test_oversized_prefix, setup, teardown),
      cmocka_unit_test_setup_teardown(test_valid_prefix_bad_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncated_then_close, setup, teardown),
      cmocka_unit_test_setup_teardown(test_many_bad_clients, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slow_drip_frame_closed, setup_slow, teardown),
      cmocka_unit_test_setup_teardown(test_stalled_frame_closed, setup_slow, teardown),
      cmocka_unit_test_setup_teardown(test_slow_whole_frames_kept, setup_slow, teardown),
      cmocka_unit_test_setup_teardown(test_connection_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reconnect_backs_off, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
