/* Transport benchmark: one interface, three implementations (hoptrace's
 * messenger, nng req/rep, ZeroMQ DEALER/ROUTER), same workload: 64-byte
 * echo requests on loopback, server in a separate process. */
#ifndef HT_BENCH_TRANSPORT_H
#define HT_BENCH_TRANSPORT_H

#include <stdint.h>
#include <time.h>

#define BENCH_PAYLOAD 64

typedef struct bench_impl {
  const char *name;
  /* Serves echo on url until the process is killed. */
  int (*serve)(const char *url);
  /* n sequential round trips on one connection; latencies in µs. */
  int (*pingpong)(const char *url, int n, double *lat_us);
  /* conns connections, depth requests in flight on each; after a warm-up
   * counts completions for `seconds`; returns requests per second. */
  int (*pipeline)(const char *url, int conns, int depth, double seconds,
                  double *rps);
} bench_impl;

extern const bench_impl bench_hoptrace;
#ifdef HAVE_NNG
extern const bench_impl bench_nng;
#endif
#ifdef HAVE_ZMQ
extern const bench_impl bench_zmq;
#endif

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void bench_sleep(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

#define BENCH_WARMUP_S 0.2

#endif
