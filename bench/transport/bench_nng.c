/* nng req/rep side of the transport benchmark: the server runs many rep
 * contexts (nng's documented way to serve requests in parallel); the
 * client pipelines with one req context per request in flight, driven
 * by aio callbacks on nng's own threads. */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define SERVER_CONTEXTS 1100

static char payload[BENCH_PAYLOAD];

typedef struct work {
  enum { W_INIT, W_RECV, W_SEND } state;
  nng_aio *aio;
  nng_ctx ctx;
} work;

static void server_cb(void *arg) {
  work *w = arg;
  switch (w->state) {
  case W_INIT:
    w->state = W_RECV;
    nng_ctx_recv(w->ctx, w->aio);
    break;
  case W_RECV:
    if (nng_aio_result(w->aio) != 0)
      return;
    nng_aio_set_msg(w->aio, nng_aio_get_msg(w->aio)); /* echo it back */
    w->state = W_SEND;
    nng_ctx_send(w->ctx, w->aio);
    break;
  case W_SEND:
    if (nng_aio_result(w->aio) != 0)
      nng_msg_free(nng_aio_get_msg(w->aio));
    w->state = W_RECV;
    nng_ctx_recv(w->ctx, w->aio);
    break;
  }
}

static int serve(const char *url) {
  nng_socket s;
  if (nng_rep0_open(&s) != 0)
    return 1;
  static work works[SERVER_CONTEXTS];
  for (int i = 0; i < SERVER_CONTEXTS; i++) {
    if (nng_aio_alloc(&works[i].aio, server_cb, &works[i]) != 0 ||
        nng_ctx_open(&works[i].ctx, s) != 0)
      return 1;
    works[i].state = W_INIT;
  }
  if (nng_listen(s, url, NULL, 0) != 0)
    return 1;
  for (int i = 0; i < SERVER_CONTEXTS; i++)
    server_cb(&works[i]);
  for (;;)
    pause();
}

static int pingpong(const char *url, int n, double *lat_us) {
  nng_socket s;
  if (nng_req0_open(&s) != 0 || nng_dial(s, url, NULL, 0) != 0)
    return 1;
  for (int i = 0; i < n; i++) {
    double t0 = bench_now();
    char *buf = NULL;
    size_t sz = 0;
    if (nng_send(s, payload, sizeof(payload), 0) != 0 ||
        nng_recv(s, &buf, &sz, NNG_FLAG_ALLOC) != 0)
      return 1;
    nng_free(buf, sz);
    lat_us[i] = (bench_now() - t0) * 1e6;
  }
  nng_close(s);
  return 0;
}

typedef struct pl_state {
  atomic_long done;
  atomic_int in_flight;
  atomic_bool stop;
  atomic_int errors;
} pl_state;

typedef struct client_work {
  enum { C_SEND, C_RECV } state;
  nng_aio *aio;
  nng_ctx ctx;
  pl_state *st;
} client_work;

static void client_send(client_work *w) {
  nng_msg *msg;
  if (nng_msg_alloc(&msg, 0) != 0 ||
      nng_msg_append(msg, payload, sizeof(payload)) != 0) {
    atomic_fetch_add(&w->st->errors, 1);
    atomic_fetch_sub(&w->st->in_flight, 1);
    return;
  }
  w->state = C_SEND;
  nng_aio_set_msg(w->aio, msg);
  nng_ctx_send(w->ctx, w->aio);
}

static void client_cb(void *arg) {
  client_work *w = arg;
  pl_state *st = w->st;
  if (nng_aio_result(w->aio) != 0) {
    if (w->state == C_SEND)
      nng_msg_free(nng_aio_get_msg(w->aio));
    atomic_fetch_add(&st->errors, 1);
    atomic_fetch_sub(&st->in_flight, 1);
    return;
  }
  if (w->state == C_SEND) {
    w->state = C_RECV;
    nng_ctx_recv(w->ctx, w->aio);
    return;
  }
  nng_msg_free(nng_aio_get_msg(w->aio));
  atomic_fetch_add_explicit(&st->done, 1, memory_order_relaxed);
  if (atomic_load_explicit(&st->stop, memory_order_relaxed))
    atomic_fetch_sub(&st->in_flight, 1);
  else
    client_send(w);
}

static int pipeline(const char *url, int conns, int depth, double seconds,
                    double *rps) {
  nng_socket socks[64];
  pl_state st = {0};
  int n = conns * depth;
  client_work *ws = calloc((size_t)n, sizeof(*ws));
  for (int c = 0; c < conns; c++)
    if (nng_req0_open(&socks[c]) != 0 || nng_dial(socks[c], url, NULL, 0) != 0)
      return 1;
  for (int i = 0; i < n; i++) {
    ws[i].st = &st;
    if (nng_aio_alloc(&ws[i].aio, client_cb, &ws[i]) != 0 ||
        nng_ctx_open(&ws[i].ctx, socks[i / depth]) != 0)
      return 1;
  }
  atomic_store(&st.in_flight, n);
  for (int i = 0; i < n; i++)
    client_send(&ws[i]);
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
  for (int i = 0; i < n; i++) {
    nng_aio_stop(ws[i].aio);
    nng_ctx_close(ws[i].ctx);
    nng_aio_free(ws[i].aio);
  }
  for (int c = 0; c < conns; c++)
    nng_close(socks[c]);
  free(ws);
  *rps = (double)(c1 - c0) / (t1 - t0);
  return atomic_load(&st.errors) == 0 ? 0 : 1;
}

const bench_impl bench_nng = {"nng req/rep", serve, pingpong, pipeline};
