/* A server process killed with SIGKILL in the middle of requests: every
 * pending request fails exactly once with HT_ECONNRESET, the client keeps
 * running, and the peer reconnects when a new server appears. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>

#include "tt_util.h"

enum { N = 200 };

static int ready_fd = -1;
static int held_count;

static void hold_and_count(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg;
  (void)req; /* never answered: the process dies holding it */
  (void)msg;
  if (++held_count == N) {
    char c = 'h';
    (void)!write(ready_fd, &c, 1);
  }
}

/* Child: serve until killed. Never returns. */
static void run_server(const char *url, int fd) {
  ready_fd = fd;
  ht_messenger *srv = tt_messenger("victim", NULL, NULL);
  if (ht_messenger_handle(srv, "hold", hold_and_count, NULL) != 0 ||
      ht_messenger_listen(srv, url, NULL, 0) != 0)
    _exit(2);
  char c = 'r';
  (void)!write(fd, &c, 1);
  for (int i = 0; i < 600; i++) /* bounded: 60 s at most */
    tt_sleep_ms(100);
  _exit(3);
}

static bool read_byte(int fd, char want, int timeout_ms) {
  uint64_t until = tt_now_ms() + (uint64_t)timeout_ms;
  while (tt_now_ms() < until) {
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n == 1)
      return c == want;
    if (n == 0)
      return false;
    tt_sleep_ms(5);
  }
  return false;
}

typedef struct outcome {
  tt_counter done;
  int calls[N];
  int status[N];
} outcome;

typedef struct ctx {
  outcome *o;
  int i;
} ctx;

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  ctx *c = arg;
  c->o->calls[c->i]++;
  c->o->status[c->i] = status;
  tt_counter_add(&c->o->done, 1);
}

static void tweak(ht_messenger_options *o) {
  o->reconnect_min_ms = 20;
  o->reconnect_max_ms = 100;
}

static void test_peer_killed_mid_request(void **state) {
  (void)state;
  char url[128];
  tt_unix_url(url, sizeof(url), "kill");
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    close(fds[0]);
    run_server(url, fds[1]);
  }
  close(fds[1]);
  assert_true(read_byte(fds[0], 'r', 10000));

  ht_messenger *cli = tt_messenger("cli", NULL, tweak);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  static outcome o;
  static ctx ctxs[N];
  tt_counter_init(&o.done);
  for (int i = 0; i < N; i++) {
    ctxs[i] = (ctx){&o, i};
    ht_payload pl = {"x", 1, NULL, NULL};
    assert_int_equal(ht_peer_request(p, "hold", &pl, NULL, on_reply, &ctxs[i]), 0);
  }
  /* The server holds all of them; then it dies. */
  assert_true(read_byte(fds[0], 'h', 10000));
  assert_int_equal(tt_counter_get(&o.done), 0);
  kill(child, SIGKILL);
  int wstatus;
  assert_int_equal(waitpid(child, &wstatus, 0), child);
  assert_true(WIFSIGNALED(wstatus));

  assert_int_equal(tt_counter_wait(&o.done, N, 10000), N);
  tt_sleep_ms(100); /* room for a wrong second callback */
  for (int i = 0; i < N; i++) {
    assert_int_equal(o.calls[i], 1);
    assert_int_equal(o.status[i], HT_ECONNRESET);
  }
  /* The client survives; a new server on the same address is found. */
  ht_messenger *srv = tt_messenger("heir", NULL, NULL);
  assert_int_equal(ht_messenger_handle(srv, "echo", tt_echo_handler, NULL), 0);
  assert_int_equal(ht_messenger_listen(srv, url, NULL, 0), 0);
  uint64_t until = tt_now_ms() + 5000;
  while (!ht_peer_connected(p) && tt_now_ms() < until)
    tt_sleep_ms(5);
  assert_true(ht_peer_connected(p));
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  close(fds[0]);
  tt_counter_destroy(&o.done);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_peer_killed_mid_request),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
