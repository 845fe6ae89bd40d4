/* ZeroMQ DEALER/ROUTER side of the transport benchmark: a ROUTER echoes
 * [identity, payload]; the client keeps `depth` messages in flight on
 * each DEALER from one thread with zmq_poll (like the messenger's single
 * loop thread). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "bench.h"

static char payload[BENCH_PAYLOAD];

static int serve(const char *url) {
  void *ctx = zmq_ctx_new();
  void *r = zmq_socket(ctx, ZMQ_ROUTER);
  int hwm = 0;
  zmq_setsockopt(r, ZMQ_SNDHWM, &hwm, sizeof(hwm));
  zmq_setsockopt(r, ZMQ_RCVHWM, &hwm, sizeof(hwm));
  if (zmq_bind(r, url) != 0)
    return 1;
  for (;;) {
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    if (zmq_msg_recv(&id, r, 0) < 0 || zmq_msg_recv(&body, r, 0) < 0)
      return 1;
    zmq_msg_send(&id, r, ZMQ_SNDMORE);
    zmq_msg_send(&body, r, 0);
    zmq_msg_close(&id);
    zmq_msg_close(&body);
  }
}

static void *dealer(void *ctx, const char *url) {
  void *d = zmq_socket(ctx, ZMQ_DEALER);
  int hwm = 0;
  zmq_setsockopt(d, ZMQ_SNDHWM, &hwm, sizeof(hwm));
  zmq_setsockopt(d, ZMQ_RCVHWM, &hwm, sizeof(hwm));
  if (zmq_connect(d, url) != 0)
    return NULL;
  return d;
}

static int pingpong(const char *url, int n, double *lat_us) {
  void *ctx = zmq_ctx_new();
  void *d = dealer(ctx, url);
  char buf[BENCH_PAYLOAD];
  for (int i = 0; d != NULL && i < n; i++) {
    double t0 = bench_now();
    if (zmq_send(d, payload, sizeof(payload), 0) < 0 ||
        zmq_recv(d, buf, sizeof(buf), 0) < 0)
      return 1;
    lat_us[i] = (bench_now() - t0) * 1e6;
  }
  int linger = 0;
  zmq_setsockopt(d, ZMQ_LINGER, &linger, sizeof(linger));
  zmq_close(d);
  zmq_ctx_term(ctx);
  return d != NULL ? 0 : 1;
}

static int pipeline(const char *url, int conns, int depth, double seconds,
                    double *rps) {
  void *ctx = zmq_ctx_new();
  zmq_pollitem_t items[64];
  int outstanding[64];
  for (int c = 0; c < conns; c++) {
    items[c] = (zmq_pollitem_t){dealer(ctx, url), 0, ZMQ_POLLIN, 0};
    if (items[c].socket == NULL)
      return 1;
    for (int d = 0; d < depth; d++)
      zmq_send(items[c].socket, payload, sizeof(payload), 0);
    outstanding[c] = depth;
  }
  long done = 0, c0 = 0;
  double start = bench_now(), t0 = 0, t1 = 0;
  bool measuring = false, stop = false;
  int left = conns * depth;
  char buf[BENCH_PAYLOAD];
  while (left > 0) {
    if (zmq_poll(items, conns, 1000) < 0)
      return 1;
    for (int c = 0; c < conns; c++) {
      while (zmq_recv(items[c].socket, buf, sizeof(buf), ZMQ_DONTWAIT) >= 0) {
        done++;
        if (stop) {
          outstanding[c]--;
          left--;
        } else {
          zmq_send(items[c].socket, payload, sizeof(payload), 0);
        }
      }
    }
    double now = bench_now();
    if (!measuring && now - start >= BENCH_WARMUP_S) {
      measuring = true;
      c0 = done;
      t0 = now;
    } else if (measuring && !stop && now - t0 >= seconds) {
      stop = true;
      t1 = now;
      *rps = (double)(done - c0) / (t1 - t0);
    }
  }
  int linger = 0;
  for (int c = 0; c < conns; c++) {
    zmq_setsockopt(items[c].socket, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_close(items[c].socket);
  }
  zmq_ctx_term(ctx);
  return 0;
}

const bench_impl bench_zmq = {"zmq dealer/router", serve, pingpong, pipeline};
