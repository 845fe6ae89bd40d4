/* Helpers for the transport tests: a counter that loop-thread callbacks
 * bump and the test thread waits on (with a deadline, so a broken
 * messenger fails the test instead of hanging it), an echo handler, and
 * messenger construction with quiet logs. */
#ifndef HT_TT_UTIL_H
#define HT_TT_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "hoptrace/messenger.h"

typedef struct tt_counter {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  long count;
} tt_counter;

static inline void tt_counter_init(tt_counter *c) {
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->cond, NULL);
  c->count = 0;
}

static inline void tt_counter_destroy(tt_counter *c) {
  pthread_mutex_destroy(&c->lock);
  pthread_cond_destroy(&c->cond);
}

static inline void tt_counter_add(tt_counter *c, long n) {
  pthread_mutex_lock(&c->lock);
  c->count += n;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

static inline long tt_counter_get(tt_counter *c) {
  pthread_mutex_lock(&c->lock);
  long v = c->count;
  pthread_mutex_unlock(&c->lock);
  return v;
}

/* Waits until count >= target or timeout_ms passed; returns the count. */
static inline long tt_counter_wait(tt_counter *c, long target, int timeout_ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += timeout_ms / 1000;
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&c->lock);
  while (c->count < target) {
    if (pthread_cond_timedwait(&c->cond, &c->lock, &ts) != 0)
      break;
  }
  long v = c->count;
  pthread_mutex_unlock(&c->lock);
  return v;
}

static inline uint64_t tt_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline void tt_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Logs go to a counter (and stderr when TT_VERBOSE is set). */
typedef struct tt_log {
  tt_counter warnings;
  char last[512];
} tt_log;

static inline void tt_log_fn(void *arg, ht_log_level level, const char *msg) {
  tt_log *log = arg;
  if (getenv("TT_VERBOSE") != NULL)
    fprintf(stderr, "[log %d] %s\n", (int)level, msg);
  if (level <= HT_LOG_WARN) {
    pthread_mutex_lock(&log->warnings.lock);
    snprintf(log->last, sizeof(log->last), "%s", msg);
    pthread_mutex_unlock(&log->warnings.lock);
    tt_counter_add(&log->warnings, 1);
  }
}

static inline ht_messenger *tt_messenger(const char *name, tt_log *log,
                                         void (*tweak)(ht_messenger_options *)) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.name = name;
  o.flavour = HT_MESSENGER_PLAIN;
  if (log != NULL) {
    o.log = tt_log_fn;
    o.log_arg = log;
  }
  if (tweak != NULL)
    tweak(&o);
  ht_messenger *m = NULL;
  int rc = ht_messenger_new(&o, &m);
  if (rc != 0) {
    fprintf(stderr, "ht_messenger_new: %s\n", ht_strerror(rc));
    abort();
  }
  return m;
}

/* Echo: replies with the request's payload (copied), status 0. */
static inline void tt_echo_handler(void *arg, ht_request *req,
                                   const ht_envelope *msg) {
  (void)arg;
  if (req == NULL)
    return;
  ht_payload p = {msg->payload, msg->payload_len, NULL, NULL};
  ht_request_reply(req, 0, &p);
}

/* Unique Unix socket path for this process. */
static inline void tt_unix_url(char *buf, size_t cap, const char *tag) {
  snprintf(buf, cap, "unix:///tmp/ht-tt-%ld-%s.sock", (long)getpid(), tag);
}

/* One reply, kept: status, the peer's status and payload. */
typedef struct reply_box {
  tt_counter done;
  int status;
  int32_t peer_status;
  char payload[256];
  size_t len;
} reply_box;

static inline void box_init(reply_box *b) {
  memset(b, 0, sizeof(*b));
  tt_counter_init(&b->done);
}

static inline void box_reply(void *arg, int status, const ht_envelope *reply) {
  reply_box *b = arg;
  b->status = status;
  if (reply != NULL) {
    b->peer_status = reply->status;
    b->len = reply->payload_len < sizeof(b->payload) ? reply->payload_len
                                                      : sizeof(b->payload);
    if (b->len > 0)
      memcpy(b->payload, reply->payload, b->len);
  }
  tt_counter_add(&b->done, 1);
}

#endif
