/* The measured loops (hops.h). */
#include "hops.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#include "bench_pair.h"
#include "hoptrace/error.h"
#include "hoptrace/span.h"

#define PAYLOAD 64

static const ht_span_info root_info = {"bench", HT_SPAN_INTERNAL, "client.4", NULL};
static const ht_span_info hop_info = {"osd_write", HT_SPAN_CLIENT, "client.4",
                                      "tcp://127.0.0.1:6800"};

static void span_hops(const ht_span *parent, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    ht_span s;
    ht_span_start_child(&s, parent, &hop_info);
    ht_span_annotate(&s, HT_ANN_CLIENT_SEND);
    ht_span_annotate(&s, HT_ANN_SERVER_RECV);
    ht_span_kv_int(&s, "bytes", 4096);
    ht_span_annotate(&s, HT_ANN_SERVER_SEND);
    ht_span_annotate(&s, HT_ANN_CLIENT_RECV);
    ht_span_finish(&s);
  }
}

void hops_span(unsigned warm, unsigned n) {
  ht_span root;
  ht_span_start_root(&root, &root_info, HT_SAMPLE_YES);
  span_hops(&root, warm);
  CALLGRIND_START_INSTRUMENTATION;
  span_hops(&root, n);
  CALLGRIND_STOP_INSTRUMENTATION;
  ht_span_finish(&root);
}

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
  bench_pair_open(&pair, traced, 1.0);
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
