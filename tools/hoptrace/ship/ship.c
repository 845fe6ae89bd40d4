/* The pushing output format (ship.h): traces -> batches -> POST ->
 * counts. Runs on the pipeline's writer thread: a post blocks it, and
 * the writer's bounded queue holds the reader back meanwhile. */
#include "ship/ship.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ship/config.h"
#include "ship/http.h"
#include "ship/otlp_pb.h"

#define SHIP_MESSAGES 10 /* failed batches described; then only counted */

typedef struct ship_counts {
  uint64_t read, sent, accepted, rejected, batches;
  uint64_t dropped_status, dropped_retryable, dropped_transport, dropped_encode;
} ship_counts;

/* one run a process: main configures it before the run, reads the
 * counts after */
static ship_options g_opts;
static ship_config g_cfg;
static ship_counts g_counts;

struct output {
  ship_http *http;
  pb_batch *pb;              /* otlp: the batch being filled */
  const output_format *json; /* otlp-json, zipkin: the writer of a batch */
  output *doc;               /* its document, NULL between batches */
  obuf *doc_buf;
  FILE *doc_file;
  char *doc_text;
  size_t doc_len;
  size_t in_batch;
  int messages;
};

static uint64_t dropped(const ship_counts *c) {
  return c->dropped_status + c->dropped_retryable + c->dropped_transport + c->dropped_encode;
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

static void say(output *o, size_t spans, const char *why, const char *detail) {
  if (o->messages++ >= SHIP_MESSAGES)
    return;
  fprintf(stderr, "hoptrace: push: batch of %zu spans %s%s%s%s\n", spans, why,
          detail && detail[0] ? ": " : "", detail ? detail : "",
          o->messages == SHIP_MESSAGES ? " (further failures only counted)" : "");
}

/* OTLP/JSON's partialSuccess.rejectedSpans ("3" or 3). */
static int64_t json_rejected(const http_result *r) {
  const char *p = r->body ? strstr((const char *)r->body, "\"rejectedSpans\"") : NULL;
  if (p == NULL)
    return 0;
  p += strlen("\"rejectedSpans\"");
  while (*p == ' ' || *p == ':' || *p == '"' || *p == '\t')
    p++;
  return strtoll(p, NULL, 10);
}

static void account(output *o, size_t spans, const http_result *r) {
  ship_counts *c = &g_counts;
  char text[256];
  if (r->status != 0) /* sent: a server answered the request */
    c->sent += spans;
  if (r->status == 0) {
    c->dropped_transport += spans;
    say(o, spans, "dropped", r->error);
  } else if (r->status >= 200 && r->status < 300) {
    int64_t rejected = 0;
    char msg[256] = "";
    if (g_cfg.format == SHIP_OTLP_PROTO &&
        pb_response_parse(r->body, r->body_len, &rejected, msg, sizeof(msg)) != 0)
      say(o, spans, "accepted with a reply that is no ExportTraceServiceResponse", NULL);
    if (g_cfg.format == SHIP_OTLP_JSON)
      rejected = json_rejected(r);
    if (rejected < 0 || (uint64_t)rejected > spans)
      rejected = (int64_t)spans;
    c->rejected += (uint64_t)rejected;
    c->accepted += spans - (uint64_t)rejected;
    if (rejected > 0) {
      char why[64];
      snprintf(why, sizeof(why), "partly rejected (%" PRId64 ")", rejected);
      say(o, spans, why, msg);
    }
  } else {
    int retryable = r->status == 429 || r->status == 502 || r->status == 503 || r->status == 504;
    char why[96];
    snprintf(why, sizeof(why), "dropped: HTTP %ld%s", r->status,
             retryable ? " (retries are not implemented yet)" : "");
    if (retryable)
      c->dropped_retryable += spans;
    else
      c->dropped_status += spans;
    reply_text(r, text, sizeof(text));
    say(o, spans, why, text);
  }
}

static void post(output *o, const void *data, size_t len, size_t spans) {
  http_result r;
  ship_http_post(o->http, data, len, &r);
  account(o, spans, &r);
  free(r.body);
  g_counts.batches++;
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

static void flush_batch(output *o) {
  size_t spans = o->in_batch;
  o->in_batch = 0;
  if (spans == 0)
    return;
  if (o->pb != NULL) {
    size_t len;
    uint8_t *bytes = pb_batch_take(o->pb, &len);
    if (bytes == NULL) {
      g_counts.dropped_encode += spans;
      say(o, spans, "dropped", "out of memory encoding it");
      return;
    }
    post(o, bytes, len, spans);
    free(bytes);
    return;
  }
  int rc = o->json->close(o->doc, NULL, NULL);
  o->doc = NULL;
  if (obuf_flush(o->doc_buf) != 0)
    rc = -1;
  obuf_free(o->doc_buf);
  if (fclose(o->doc_file) != 0)
    rc = -1;
  if (rc != 0) {
    g_counts.dropped_encode += spans;
    say(o, spans, "dropped", "out of memory encoding it");
  } else {
    post(o, o->doc_text, o->doc_len, spans);
  }
  free(o->doc_text);
}

static output *ship_open(obuf *out, const output_info *info) {
  (void)out; /* nothing goes to the output file */
  (void)info;
  output *o = calloc(1, sizeof(*o));
  char err[256];
  if (o == NULL || (o->http = ship_http_new(&g_cfg, err, sizeof(err))) == NULL) {
    if (o != NULL)
      fprintf(stderr, "hoptrace: push: %s\n", err);
    free(o);
    return NULL;
  }
  if (g_cfg.format == SHIP_OTLP_PROTO && (o->pb = pb_batch_new()) == NULL) {
    ship_http_free(o->http);
    free(o);
    return NULL;
  }
  o->json = g_cfg.format == SHIP_ZIPKIN ? &output_zipkin : &output_otlp;
  return o;
}

/* A trace's spans, cut at batch boundaries (a slice of a trace is
 * written as a trace of those spans). */
static void ship_trace(output *o, const trace *t) {
  size_t i = 0;
  while (i < t->n_spans) {
    size_t take = SHIP_BATCH_SPANS - o->in_batch;
    if (take > t->n_spans - i)
      take = t->n_spans - i;
    g_counts.read += take;
    if (o->pb != NULL) {
      for (size_t k = 0; k < take; k++) {
        if (pb_batch_add(o->pb, t, t->spans[i + k]) == 0) {
          o->in_batch++;
        } else {
          g_counts.dropped_encode++;
          say(o, 1, "dropped", "out of memory encoding it");
        }
      }
    } else if (o->doc != NULL || doc_open(o) == 0) {
      trace slice = *t;
      slice.spans = t->spans + i;
      slice.n_spans = take;
      o->json->trace(o->doc, &slice);
      o->in_batch += take;
    } else {
      g_counts.dropped_encode += take;
      say(o, take, "dropped", "out of memory encoding it");
    }
    i += take;
    if (o->in_batch == SHIP_BATCH_SPANS)
      flush_batch(o);
  }
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

static int ship_close(output *o, const bt_source_stats *src, const assembler_stats *st) {
  (void)src;
  (void)st;
  flush_batch(o);
  ship_http_free(o->http);
  pb_batch_free(o->pb);
  free(o);
  const ship_counts *c = &g_counts;
  if (!g_opts.quiet || dropped(c) + c->rejected > 0) {
    char url[2048];
    url_for_message(url, sizeof(url));
    fprintf(stderr,
            "hoptrace: pushed to %s: %" PRIu64 " spans read, %" PRIu64 " sent, %" PRIu64
            " accepted, %" PRIu64 " rejected, %" PRIu64 " dropped (%" PRIu64
            " refused by HTTP status, %" PRIu64 " retryable status, %" PRIu64
            " connection, %" PRIu64 " encoding), %" PRIu64 " batches\n",
            url, c->read, c->sent, c->accepted, c->rejected, dropped(c), c->dropped_status,
            c->dropped_retryable, c->dropped_transport, c->dropped_encode, c->batches);
  }
  ship_config_free(&g_cfg);
  return 0;
}

static const output_format output_ship = {"push", ship_open, ship_trace, ship_close};

const output_format *ship_output(const ship_options *opts) {
  char err[512];
  if (ship_config_load(&g_cfg, opts->to, opts->format ? opts->format : "otlp", err,
                       sizeof(err)) != 0) {
    fprintf(stderr, "hoptrace: --to: %s\n", err);
    return NULL;
  }
  g_opts = *opts;
  memset(&g_counts, 0, sizeof(g_counts));
  return &output_ship;
}

int ship_exit_status(int rc) {
  if (rc == 0 && !g_opts.allow_drops && dropped(&g_counts) + g_counts.rejected > 0) {
    fprintf(stderr, "hoptrace: %" PRIu64 " spans not delivered (--allow-drops to exit 0)\n",
            dropped(&g_counts) + g_counts.rejected);
    return 2;
  }
  return rc;
}
