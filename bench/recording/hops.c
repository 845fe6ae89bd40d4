/* The messenger hops (hops.h). */
#include "hops.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#include "bench_pair.h"
#include "hoptrace/error.h"

#define PAYLOAD 64

/* Requests one at a time: each reply sends the next from the client's
 * loop thread (no current context there, so each is a new root trace,
 * as in bench/messenger); the last one wakes the main thread. */
typedef struct chain {
  ht_peer *peer;
  const char *op;
  unsigned left;
  int status, done;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  char payload[PAYLOAD];
} chain;

static void on_reply(void *arg, int status, const ht_envelope *reply);

static int send_next(chain *c) {
  ht_payload p = {c->payload, PAYLOAD, NULL, NULL};
  return ht_peer_request(c->peer, c->op, &p, NULL, on_reply, c);
}

static void finish(chain *c, int status) {
  pthread_mutex_lock(&c->lock);
  c->status = status;
  c->done = 1;
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  chain *c = arg;
  if (status == 0 && --c->left > 0)
    status = send_next(c);
  if (status != 0 || c->left == 0)
    finish(c, status);
}

static void run_chain(chain *c, unsigned n) {
  c->left = n;
  c->done = 0;
  int rc = n > 0 ? send_next(c) : 0;
  if (rc != 0 || n == 0)
    finish(c, rc);
  pthread_mutex_lock(&c->lock);
  while (!c->done)
    pthread_cond_wait(&c->cond, &c->lock);
  pthread_mutex_unlock(&c->lock);
  if (c->status != 0) {
    fprintf(stderr, "bench: request failed: %s\n", ht_strerror(c->status));
    exit(1);
  }
}

void hops_messenger(int traced, int kv, unsigned warm, unsigned n) {
  bench_pair pair;
  /* HT_BENCH_RATIO: another head-sampling ratio (bench/flight: flight
   * mode keeps 1 % and records every request in memory) */
  const char *r = getenv("HT_BENCH_RATIO");
  bench_pair_open(&pair, traced, r != NULL ? atof(r) : 1.0);
  chain c = {.peer = pair.peer, .op = kv ? "echo_kv" : "echo"};
  pthread_mutex_init(&c.lock, NULL);
  pthread_cond_init(&c.cond, NULL);
  memset(c.payload, 'x', PAYLOAD);
  run_chain(&c, warm);
  CALLGRIND_START_INSTRUMENTATION;
  run_chain(&c, n);
  CALLGRIND_STOP_INSTRUMENTATION;
  bench_pair_close(&pair);
  pthread_mutex_destroy(&c.lock);
  pthread_cond_destroy(&c.cond);
}
