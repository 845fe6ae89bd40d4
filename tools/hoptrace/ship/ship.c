/* The pushing output format (ship.h): traces -> batches -> the sender's
 * queue. Runs on the pipeline's writer thread; the sender's thread cuts
 * a batch that has waited SHIP_BATCH_MS when it has nothing else to do,
 * hence the lock around the batch in hand. */
#include "ship/ship.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ship/config.h"
#include "ship/otlp_pb.h"
#include "ship/retry.h"
#include "ship/sender.h"

/* one run a process: main configures it before the run, reads the
 * counts after */
static ship_options g_opts;
static ship_config g_cfg;
static ship_counts g_counts;
static char g_url[2048];

struct output {
  sender *snd;
  pthread_mutex_t mu;        /* the batch in hand */
  pb_batch *pb;              /* otlp: the batch being filled */
  const output_format *json; /* otlp-json, zipkin: the writer of a batch */
  output *doc;               /* its document, NULL between batches */
  obuf *doc_buf;
  FILE *doc_file;
  char *doc_text;
  size_t doc_len;
  size_t in_batch;
  int64_t batch_start; /* monotonic ms of its first span */
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int doc_open(output *o) {
  o->doc_text = NULL;
  o->doc_len = 0;
  o->doc_file = open_memstream(&o->doc_text, &o->doc_len);
  o->doc_buf = o->doc_file ? obuf_new(o->doc_file) : NULL;
  output_info info = {.follow = true}; /* a batch: no per-resource spill */
  o->doc = o->doc_buf ? o->json->open(o->doc_buf, &info) : NULL;
  if (o->doc == NULL) {
    obuf_free(o->doc_buf);
    if (o->doc_file)
      fclose(o->doc_file);
    free(o->doc_text);
    return -1;
  }
  return 0;
}

static size_t batch_bytes(const output *o) {
  if (o->pb != NULL)
    return pb_batch_bytes(o->pb);
  if (o->doc == NULL)
    return 0;
  long at = ftell(o->doc_file);
  return (at > 0 ? (size_t)at : 0) + (size_t)(o->doc_buf->p - o->doc_buf->buf);
}

/* The batch in hand to the queue. o->mu held. */
static void flush_batch(output *o) {
  size_t spans = o->in_batch;
  o->in_batch = 0;
  if (spans == 0)
    return;
  if (o->pb != NULL) {
    size_t len;
    uint64_t replaced = pb_batch_replaced(o->pb);
    uint8_t *bytes = pb_batch_take(o->pb, &len);
    if (replaced > 0)
      sender_replaced(o->snd, replaced);
    if (bytes == NULL)
      sender_drop_encode(o->snd, spans);
    else
      sender_put(o->snd, bytes, len, spans);
    return;
  }
  int rc = o->json->close(o->doc, NULL, NULL);
  o->doc = NULL;
  if (obuf_flush(o->doc_buf) != 0)
    rc = -1;
  if (o->doc_buf->replaced > 0)
    sender_replaced(o->snd, o->doc_buf->replaced);
  obuf_free(o->doc_buf);
  if (fclose(o->doc_file) != 0)
    rc = -1;
  if (rc != 0) {
    sender_drop_encode(o->snd, spans);
    free(o->doc_text);
  } else {
    sender_put(o->snd, o->doc_text, o->doc_len, spans);
  }
  o->doc_text = NULL;
}

/* On the sender's thread when it is idle: a batch that waited long
 * enough goes. Never waits for the writer's thread. */
static void time_cut(void *arg) {
  output *o = arg;
  if (pthread_mutex_trylock(&o->mu) != 0)
    return;
  if (o->in_batch > 0 && now_ms() - o->batch_start >= SHIP_BATCH_MS)
    flush_batch(o);
  pthread_mutex_unlock(&o->mu);
}

/* The URL without user:password@ (the summary may be logged). */
static void url_for_message(char *buf, size_t cap) {
  const char *u = g_cfg.url, *scheme = strstr(u, "://");
  const char *host = scheme ? scheme + 3 : u;
  const char *at = strchr(host, '@'), *slash = strchr(host, '/');
  if (at != NULL && (slash == NULL || at < slash))
    snprintf(buf, cap, "%.*s%s", (int)(host - u), u, at + 1);
  else
    snprintf(buf, cap, "%s", u);
}

static output *ship_open(obuf *out, const output_info *info) {
  (void)out; /* nothing goes to the output file */
  output *o = calloc(1, sizeof(*o));
  if (o == NULL)
    return NULL;
  pthread_mutex_init(&o->mu, NULL);
  o->json = g_cfg.format == SHIP_ZIPKIN ? &output_zipkin : &output_otlp;
  if (g_cfg.format == SHIP_OTLP_PROTO && (o->pb = pb_batch_new()) == NULL) {
    free(o);
    return NULL;
  }
  url_for_message(g_url, sizeof(g_url));
  sender_options so = {
      .cfg = &g_cfg,
      .queue_bytes = (size_t)(g_opts.queue_mib ? g_opts.queue_mib : SHIP_QUEUE_MIB) << 20,
      .drop_when_full = info->follow, /* a live input cannot wait */
      .summary_every_s = g_opts.summary_every,
      .retry_for_s = g_opts.retry_for ? g_opts.retry_for : RETRY_FOR_MS / 1000,
      .give_up_s = g_opts.give_up_after == 0 ? SHIP_GIVE_UP_S
                   : g_opts.give_up_after < 0  ? 0
                                               : g_opts.give_up_after,
      .on_give_up = g_opts.stop_run,
      .interrupted = g_opts.interrupted,
      .idle = time_cut,
      .idle_arg = o,
      .url_shown = g_url,
  };
  char err[256];
  if ((o->snd = sender_new(&so, err, sizeof(err))) == NULL) {
    fprintf(stderr, "hoptrace: push: %s\n", err);
    pb_batch_free(o->pb);
    pthread_mutex_destroy(&o->mu);
    free(o);
    return NULL;
  }
  return o;
}

/* Adds spans [i, i + take) of t to the batch in hand. o->mu held. */
static void add_spans(output *o, const trace *t, size_t i, size_t take) {
  sender_read(o->snd, take);
  if (o->in_batch == 0)
    o->batch_start = now_ms();
  if (o->pb != NULL) {
    for (size_t k = 0; k < take; k++) {
      if (pb_batch_add(o->pb, t, t->spans[i + k]) == 0)
        o->in_batch++;
      else
        sender_drop_encode(o->snd, 1);
    }
  } else if (o->doc != NULL || doc_open(o) == 0) {
    trace slice = *t;
    slice.spans = t->spans + i;
    slice.n_spans = take;
    o->json->trace(o->doc, &slice);
    o->in_batch += take;
  } else {
    sender_drop_encode(o->snd, take);
  }
}

/* A trace's spans, cut at batch boundaries (a slice of a trace is
 * written as a trace of those spans). */
static void ship_trace(output *o, const trace *t) {
  pthread_mutex_lock(&o->mu);
  for (size_t i = 0; i < t->n_spans;) {
    size_t take = SHIP_BATCH_SPANS - o->in_batch;
    if (take > t->n_spans - i)
      take = t->n_spans - i;
    add_spans(o, t, i, take);
    i += take;
    if (o->in_batch == SHIP_BATCH_SPANS || batch_bytes(o) >= SHIP_BATCH_BYTES ||
        (o->in_batch > 0 && now_ms() - o->batch_start >= SHIP_BATCH_MS))
      flush_batch(o);
  }
  pthread_mutex_unlock(&o->mu);
}

static int ship_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  pthread_mutex_lock(&o->mu);
  flush_batch(o);
  pthread_mutex_unlock(&o->mu);
  sender_finish(o->snd, g_opts.quiet, &g_counts); /* the thread ends: o is ours alone */
  pb_batch_free(o->pb);
  pthread_mutex_destroy(&o->mu);
  free(o);
  ship_config_free(&g_cfg);
  return 0;
}

static const output_format output_ship = {"push", ship_open, ship_trace, ship_close};

const output_format *ship_output(const ship_options *opts) {
  char err[512];
  if (ship_config_load(&g_cfg, opts->to, opts->format ? opts->format : "otlp",
                       opts->headers_file, err, sizeof(err)) != 0) {
    fprintf(stderr, "hoptrace: --to: %s\n", err);
    return NULL;
  }
  g_opts = *opts;
  memset(&g_counts, 0, sizeof(g_counts));
  return &output_ship;
}

int ship_exit_status(int rc) {
  uint64_t lost = counts_dropped(&g_counts) + g_counts.rejected;
  if (lost > 0)
    fprintf(stderr, "hoptrace: %" PRIu64 " spans not delivered%s\n", lost,
            g_opts.allow_drops || rc != 0 || g_counts.collector_dead
                ? ""
                : " (--allow-drops to exit 0)");
  if (rc == 0 && (g_counts.collector_dead || (!g_opts.allow_drops && lost > 0)))
    return 2;
  return rc;
}
