/* The queue and the posting thread (sender.h). One mutex guards the
 * queue and the counts; posts and back-off waits happen without it. */
#include "ship/sender.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/mono_wait.h"
#include "ship/http.h"
#include "ship/otlp_pb.h"
#include "ship/partial.h"
#include "ship/retry.h"

#define SHIP_MESSAGES 10 /* failed batches described; then only counted */
#define TICK_MS 100      /* the longest the thread sleeps without looking around */

typedef struct batch {
  struct batch *next;
  void *data;
  size_t len, spans;
} batch;

struct sender {
  sender_options o;
  ship_http *http;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t changed; /* queued, room made, finishing */
  batch *head, *tail;
  size_t queued_batches;
  bool finishing;
  _Atomic int64_t shutdown_at; /* monotonic ms; 0: no shutdown yet */
  /* The dead-collector detector: since when no post was accepted
   * (monotonic ms; 0: the last one was), written by the thread only */
  int64_t failing_since;
  atomic_bool dead; /* given up: every span from then on is dropped */
  ship_counts c;
  int messages;
  int64_t next_summary, started;
  unsigned seed;
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The shutdown starts at the first look after the signal. */
static bool out_of_time(sender *s) {
  int64_t at = atomic_load(&s->shutdown_at);
  if (at == 0 && s->o.interrupted != NULL && s->o.interrupted()) {
    int64_t zero = 0;
    atomic_compare_exchange_strong(&s->shutdown_at, &zero, now_ms() + SHIP_SHUTDOWN_MS);
    at = atomic_load(&s->shutdown_at);
  }
  return at != 0 && now_ms() >= at;
}

/* No post accepted for give_up_s seconds of posting: the collector is
 * taken for dead, once, said once. On the thread only. */
static bool gave_up(sender *s) {
  if (atomic_load(&s->dead))
    return true;
  if (s->o.give_up_s <= 0 || s->failing_since == 0 ||
      now_ms() - s->failing_since < (int64_t)s->o.give_up_s * 1000)
    return false;
  atomic_store(&s->dead, true);
  fprintf(stderr, "hoptrace: push: no batch accepted by %s for %d s: the collector is taken"
                  " for dead (--give-up-after); the spans from here on are not sent%s\n",
          s->o.url_shown, s->o.give_up_s, s->o.on_give_up != NULL ? ", the run ends" : "");
  if (s->o.on_give_up != NULL)
    s->o.on_give_up();
  return true;
}

static int abort_post(void *arg) { return out_of_time(arg) || gave_up(arg); }

/* Called with mu held. */
static void say(sender *s, size_t spans, const char *why, const char *detail) {
  if (s->messages++ >= SHIP_MESSAGES)
    return;
  fprintf(stderr, "hoptrace: push: batch of %zu spans %s%s%s%s\n", spans, why,
          detail && detail[0] ? ": " : "", detail ? detail : "",
          s->messages == SHIP_MESSAGES ? " (further failures only counted)" : "");
}

static void wait_ms(sender *s, int64_t ms) { mono_cond_wait_ms(&s->changed, &s->mu, ms); }

/* Called with mu held. */
static void maybe_summary(sender *s) {
  if (s->o.summary_every_s <= 0 || now_ms() < s->next_summary)
    return;
  s->next_summary = now_ms() + (int64_t)s->o.summary_every_s * 1000; /* no catching up */
  fprintf(stderr, "hoptrace: push to %s after %" PRId64 " s: ", s->o.url_shown,
          (now_ms() - s->started) / 1000);
  counts_print(stderr, &s->c);
  fputc('\n', stderr);
}

/* A reply's text for a message: printable, one line, short. */
static void reply_text(const http_result *r, char *buf, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < r->body_len && n + 1 < cap && n < 200; i++) {
    unsigned char ch = r->body[i];
    buf[n++] = ch >= ' ' && ch != 0x7f ? (char)ch : ' ';
  }
  buf[n] = '\0';
}

/* A 2xx reply: accepted, less the partial success's rejected (never
 * more than the batch, never negative: partial.h). mu held. */
static void accepted(sender *s, const batch *b, const http_result *r) {
  partial_success ps;
  partial_success_parse(s->o.cfg->format, r->body, r->body_len, b->spans, &ps);
  if (ps.unreadable)
    say(s, b->spans, "accepted with a reply that is no ExportTraceServiceResponse", NULL);
  if (ps.message[0] != '\0' && s->c.collector_message[0] == '\0')
    memcpy(s->c.collector_message, ps.message, sizeof(ps.message));
  s->c.rejected += ps.rejected;
  s->c.accepted += b->spans - ps.rejected;
  char why[160];
  if (ps.impossible) {
    s->c.partial_impossible++;
    s->c.partial_reported = ps.reported;
    s->c.partial_spans = b->spans;
    s->c.partial_counted = ps.rejected;
    snprintf(why, sizeof(why),
             "accepted with an impossible partial success (rejected %" PRId64
             ": the collector's error), counted as %" PRIu64 " rejected",
             ps.reported, ps.rejected);
    say(s, b->spans, why, ps.message);
  } else if (ps.rejected > 0) {
    snprintf(why, sizeof(why), "partly rejected (%" PRIu64 ")", ps.rejected);
    say(s, b->spans, why, ps.message);
  }
}

/* A failed post's end: dropped, by reason. mu held. */
static void dropped(sender *s, const batch *b, const http_result *r, int attempts) {
  char why[128], text[256];
  if (r->status == 0) {
    s->c.dropped_transport += b->spans;
    snprintf(why, sizeof(why), "dropped after %d attempts", attempts);
    say(s, b->spans, why, r->error);
    return;
  }
  bool retryable = retry_worth(r->status);
  if (retryable) {
    s->c.dropped_retryable += b->spans;
    snprintf(why, sizeof(why), "dropped: HTTP %ld after %d attempts", r->status, attempts);
  } else {
    s->c.dropped_status += b->spans;
    snprintf(why, sizeof(why), "dropped: HTTP %ld", r->status);
  }
  reply_text(r, text, sizeof(text));
  say(s, b->spans, why, text);
}

/* Posts b until it is answered for good, its retries run out or the
 * shutdown's time is up; accounts for its spans exactly once. Called
 * without mu. */
static void deliver(sender *s, batch *b) {
  int64_t first = now_ms();
  bool answered = false;
  for (int attempts = 1;; attempts++) {
    http_result r;
    if (out_of_time(s) || gave_up(s)) {
      pthread_mutex_lock(&s->mu);
      *(gave_up(s) ? &s->c.dropped_dead : &s->c.dropped_shutdown) += b->spans;
      pthread_mutex_unlock(&s->mu);
      return;
    }
    int64_t posted = now_ms();
    ship_http_post(s->http, b->data, b->len, &r);
    if (r.status >= 200 && r.status < 300)
      s->failing_since = 0;
    else if (s->failing_since == 0)
      s->failing_since = posted;
    pthread_mutex_lock(&s->mu);
    if (attempts == 1)
      s->c.batches++;
    if (r.status != 0 && !answered) {
      answered = true;
      s->c.sent += b->spans;
    }
    int64_t wait = retry_backoff_ms(attempts, &s->seed);
    int64_t after = retry_after_ms(r.retry_after, time(NULL));
    if (after >= 0)
      wait = after; /* the server knows best when it can take more */
    bool done = true;
    if (r.status >= 200 && r.status < 300)
      accepted(s, b, &r);
    else if (r.status == 0 && out_of_time(s))
      s->c.dropped_shutdown += b->spans; /* the post was aborted */
    else if (gave_up(s))
      s->c.dropped_dead += b->spans;
    else if (!retry_worth(r.status) || attempts >= RETRY_ATTEMPTS ||
             now_ms() + wait - first > (int64_t)s->o.retry_for_s * 1000)
      dropped(s, b, &r, attempts);
    else
      done = false;
    free(r.body);
    if (done) {
      pthread_mutex_unlock(&s->mu);
      return;
    }
    s->c.retries++;
    for (int64_t until = now_ms() + wait; now_ms() < until && !out_of_time(s) && !gave_up(s);) {
      int64_t left = until - now_ms();
      wait_ms(s, left < TICK_MS ? left : TICK_MS);
      maybe_summary(s);
    }
    pthread_mutex_unlock(&s->mu);
  }
}

static void *run(void *arg) {
  sender *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    maybe_summary(s);
    batch *b = s->head;
    if (b != NULL) {
      s->head = b->next;
      if (s->head == NULL)
        s->tail = NULL;
      s->queued_batches--;
      s->c.queue_bytes -= b->len;
      pthread_cond_broadcast(&s->changed);
      pthread_mutex_unlock(&s->mu);
      deliver(s, b);
      free(b->data);
      free(b);
      pthread_mutex_lock(&s->mu);
      continue;
    }
    if (s->finishing)
      break;
    if (s->o.idle != NULL) { /* it may queue a batch: without mu */
      pthread_mutex_unlock(&s->mu);
      s->o.idle(s->o.idle_arg);
      pthread_mutex_lock(&s->mu);
      if (s->head != NULL)
        continue;
    }
    if (!s->finishing)
      wait_ms(s, TICK_MS);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

sender *sender_new(const sender_options *o, char *err, size_t cap) {
  sender *s = calloc(1, sizeof(*s));
  if (s == NULL) {
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  s->o = *o;
  s->started = now_ms();
  s->next_summary = s->started + (int64_t)o->summary_every_s * 1000;
  s->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)s;
  if ((s->http = ship_http_new(o->cfg, err, cap)) == NULL) {
    free(s);
    return NULL;
  }
  ship_http_set_abort(s->http, abort_post, s);
  pthread_mutex_init(&s->mu, NULL);
  mono_cond_init(&s->changed); /* its timed waits: mono_wait.h */
  if (pthread_create(&s->thread, NULL, run, s) != 0) {
    snprintf(err, cap, "cannot start the sending thread");
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->changed);
    ship_http_free(s->http);
    free(s);
    return NULL;
  }
  return s;
}

void sender_put(sender *s, void *data, size_t len, size_t spans) {
  batch *b = malloc(sizeof(*b));
  pthread_mutex_lock(&s->mu);
  if (b == NULL) {
    s->c.dropped_encode += spans;
    say(s, spans, "dropped", "out of memory queueing it");
    goto out;
  }
  while (s->head != NULL && s->c.queue_bytes + len > s->o.queue_bytes && !out_of_time(s)) {
    if (s->o.drop_when_full) {
      s->c.dropped_queue += spans;
      say(s, spans, "dropped", "the queue is full (--queue-mib)");
      goto out;
    }
    wait_ms(s, TICK_MS);
  }
  if (out_of_time(s)) {
    s->c.dropped_shutdown += spans;
    goto out;
  }
  if (atomic_load(&s->dead)) { /* nobody to send it to */
    s->c.dropped_dead += spans;
    goto out;
  }
  *b = (batch){.data = data, .len = len, .spans = spans};
  if (s->tail)
    s->tail->next = b;
  else
    s->head = b;
  s->tail = b;
  s->queued_batches++;
  s->c.queue_bytes += len;
  if (s->c.queue_bytes > s->c.queue_peak_bytes)
    s->c.queue_peak_bytes = s->c.queue_bytes;
  if (s->queued_batches > s->c.queue_peak_batches)
    s->c.queue_peak_batches = s->queued_batches;
  pthread_cond_broadcast(&s->changed);
  data = NULL;
  b = NULL;
out:
  pthread_mutex_unlock(&s->mu);
  free(data);
  free(b);
}

void sender_read(sender *s, size_t spans) {
  pthread_mutex_lock(&s->mu);
  s->c.read += spans;
  pthread_mutex_unlock(&s->mu);
}

void sender_drop_encode(sender *s, size_t spans) {
  pthread_mutex_lock(&s->mu);
  s->c.dropped_encode += spans;
  say(s, spans, "dropped", "out of memory encoding it");
  pthread_mutex_unlock(&s->mu);
}

void sender_replaced(sender *s, uint64_t sequences) {
  pthread_mutex_lock(&s->mu);
  s->c.replaced += sequences;
  pthread_mutex_unlock(&s->mu);
}

void sender_finish(sender *s, bool quiet, ship_counts *out) {
  pthread_mutex_lock(&s->mu);
  s->finishing = true;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  *out = s->c;
  out->collector_dead = atomic_load(&s->dead);
  if (!quiet || counts_dropped(out) + out->rejected + out->partial_impossible > 0) {
    fprintf(stderr, "hoptrace: pushed to %s: ", s->o.url_shown);
    counts_print(stderr, out);
    fputc('\n', stderr);
  }
  if (atomic_load(&s->shutdown_at) != 0)
    fprintf(stderr, "hoptrace: push: interrupted: %" PRIu64 " spans not delivered at shutdown "
                    "(flushed for at most %d s)\n", out->dropped_shutdown, SHIP_SHUTDOWN_MS / 1000);
  ship_http_free(s->http);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->changed);
  free(s);
}
