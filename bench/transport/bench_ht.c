/* hoptrace messenger side of the transport benchmark. The client keeps
 * its requests going from the reply callback (loop thread), which is how
 * an application pipelines on this messenger. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "hoptrace/error.h"
#include "hoptrace/messenger.h"

static const char payload[BENCH_PAYLOAD] = "0123456789abcdef0123456789abcdef"
                                           "0123456789abcdef0123456789abcde";

static void noop_done(void *arg, int status) {
  (void)arg;
  (void)status;
}

static void echo(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg;
  ht_payload p = {msg->payload, msg->payload_len, NULL, NULL};
  ht_request_reply(req, 0, &p);
}

static ht_messenger *make(const char *name) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.name = name;
  o.flavour = HT_MESSENGER_PLAIN;
  ht_messenger *m;
  if (ht_messenger_new(&o, &m) != 0)
    return NULL;
  return m;
}

static int serve(const char *url) {
  ht_messenger *m = make("bench-server");
  if (m == NULL || ht_messenger_handle(m, "echo", echo, NULL) != 0 ||
      ht_messenger_listen(m, url, NULL, 0) != 0)
    return 1;
  for (;;)
    pause();
}

static int connect_all(ht_messenger *m, const char *url, int n, ht_peer **p) {
  for (int i = 0; i < n; i++) {
    if (ht_messenger_connect(m, url, &p[i]) != 0)
      return 1;
    double until = bench_now() + 5;
    while (!ht_peer_connected(p[i]) && bench_now() < until)
      bench_sleep(0.001);
    if (!ht_peer_connected(p[i]))
      return 1;
  }
  return 0;
}

/* --- ping-pong */

typedef struct pp_state {
  ht_peer *peer;
  int n, i;
  double *lat;
  double sent_at;
  pthread_mutex_t lock; /* the waiting thread blocks: no polling that */
  pthread_cond_t cond;  /* would keep a CPU awake and flatter latency */
  int finished;
} pp_state;

static void pp_finish(pp_state *s, int how) {
  pthread_mutex_lock(&s->lock);
  s->finished = how;
  pthread_cond_signal(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

static void pp_reply(void *arg, int status, const ht_envelope *reply);

static void pp_send(pp_state *s) {
  ht_payload p = {payload, sizeof(payload), noop_done, NULL};
  s->sent_at = bench_now();
  if (ht_peer_request(s->peer, "echo", &p, NULL, pp_reply, s) != 0)
    pp_finish(s, -1);
}

static void pp_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  pp_state *s = arg;
  if (status != 0) {
    pp_finish(s, -1);
    return;
  }
  s->lat[s->i++] = (bench_now() - s->sent_at) * 1e6;
  if (s->i < s->n)
    pp_send(s);
  else
    pp_finish(s, 1);
}

static int pingpong(const char *url, int n, double *lat_us) {
  ht_messenger *m = make("bench-client");
  ht_peer *p;
  if (m == NULL || connect_all(m, url, 1, &p) != 0)
    return 1;
  pp_state s = {.peer = p, .n = n, .lat = lat_us};
  pthread_mutex_init(&s.lock, NULL);
  pthread_cond_init(&s.cond, NULL);
  pp_send(&s);
  pthread_mutex_lock(&s.lock);
  while (s.finished == 0)
    pthread_cond_wait(&s.cond, &s.lock);
  pthread_mutex_unlock(&s.lock);
  ht_messenger_close(m, 0);
  pthread_mutex_destroy(&s.lock);
  pthread_cond_destroy(&s.cond);
  return s.finished == 1 ? 0 : 1;
}

/* --- pipelined */

typedef struct pl_state {
  atomic_long done;
  atomic_int in_flight;
  atomic_bool stop;
  atomic_int errors;
} pl_state;

typedef struct pl_slot {
  pl_state *st;
  ht_peer *peer;
} pl_slot;

static void pl_reply(void *arg, int status, const ht_envelope *reply);

static void pl_send(pl_slot *slot) {
  ht_payload p = {payload, sizeof(payload), noop_done, NULL};
  if (ht_peer_request(slot->peer, "echo", &p, NULL, pl_reply, slot) != 0) {
    atomic_fetch_add(&slot->st->errors, 1);
    atomic_fetch_sub(&slot->st->in_flight, 1);
  }
}

static void pl_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  pl_slot *slot = arg;
  pl_state *st = slot->st;
  if (status != 0)
    atomic_fetch_add(&st->errors, 1);
  atomic_fetch_add_explicit(&st->done, 1, memory_order_relaxed);
  if (status == 0 && !atomic_load_explicit(&st->stop, memory_order_relaxed))
    pl_send(slot);
  else
    atomic_fetch_sub(&st->in_flight, 1);
}

static int pipeline(const char *url, int conns, int depth, double seconds,
                    double *rps) {
  ht_messenger *m = make("bench-client");
  ht_peer *peers[64];
  if (m == NULL || conns > 64 || connect_all(m, url, conns, peers) != 0)
    return 1;
  pl_state st = {0};
  pl_slot *slots = calloc((size_t)(conns * depth), sizeof(*slots));
  atomic_store(&st.in_flight, conns * depth);
  for (int c = 0; c < conns; c++)
    for (int d = 0; d < depth; d++) {
      pl_slot *s = &slots[c * depth + d];
      *s = (pl_slot){&st, peers[c]};
      pl_send(s);
    }
  bench_sleep(BENCH_WARMUP_S);
  long c0 = atomic_load(&st.done);
  double t0 = bench_now();
  bench_sleep(seconds);
  long c1 = atomic_load(&st.done);
  double t1 = bench_now();
  atomic_store(&st.stop, true);
  double until = bench_now() + 10;
  while (atomic_load(&st.in_flight) > 0 && bench_now() < until)
    bench_sleep(0.001);
  ht_messenger_close(m, 0);
  free(slots);
  *rps = (double)(c1 - c0) / (t1 - t0);
  return atomic_load(&st.errors) == 0 ? 0 : 1;
}

const bench_impl bench_hoptrace = {"hoptrace", serve, pingpong, pipeline};
