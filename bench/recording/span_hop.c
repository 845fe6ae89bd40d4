/* The two-sided hop through the span API, and its envelope codec alone
 * (hops.h). */
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>

#include "hops.h"
#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "hoptrace/wire.h"

#define PAYLOAD 64

static const ht_span_info root_info = {"bench", HT_SPAN_INTERNAL, "client.4", NULL};
static const ht_span_info client_info = {"osd_write", HT_SPAN_CLIENT, "client.4", NULL};
static const ht_span_info server_info = {"osd_write", HT_SPAN_SERVER, "osd.3",
                                         "tcp://127.0.0.1:6800"};
/* Interned once at setup (ht_span_info_intern), as Blkin's hop makes its
 * endpoint object once: each start then skips the names lookup. */
static const ht_span_info *client_names, *server_names;

/* One request's frame and the reader that decodes it, as on each side
 * of a connection. */
typedef struct wire {
  ht_frame_reader *reader;
  char payload[PAYLOAD];
  uint8_t frame[HT_FRAME_HEADER_MAX(16) + PAYLOAD];
} wire;

static void check(int rc, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "bench: %s: %s\n", what, ht_strerror(rc));
    exit(1);
  }
}

/* The request's envelope carrying `ctx` (when not NULL) encoded, then
 * decoded into *env as the server reads it. */
static void carry(wire *w, const ht_trace_context *ctx, ht_envelope *env) {
  ht_envelope out = {.type = HT_MSG_REQUEST, .sequence = 7, .operation = "osd_write",
                     .payload = w->payload, .payload_len = PAYLOAD};
  if (ctx != NULL) {
    out.has_trace = true;
    out.trace = *ctx;
  }
  size_t len = 0;
  check(ht_frame_encode(&out, w->frame, sizeof(w->frame), &len), "encode");
  /* past the 4-byte length prefix, as a reader hands a whole frame on */
  check(ht_envelope_decode(w->reader, w->frame + 4, len - 4, env), "decode");
}

static void two_sided(wire *w, const ht_span *root, unsigned n) {
  ht_span client, server;
  ht_span_init(&client); /* once: a finished span starts again */
  ht_span_init(&server);
  for (unsigned i = 0; i < n; i++) {
    ht_envelope env;
    ht_span_start_child(&client, root, client_names);
    ht_span_annotate(&client, HT_ANN_CLIENT_SEND);
    carry(w, &client.ctx, &env);
    ht_span_start_remote(&server, &env.trace, server_names);
    ht_span_annotate(&server, HT_ANN_SERVER_RECV);
    ht_span_kv_int(&server, "bytes", 4096);
    ht_span_annotate(&server, HT_ANN_SERVER_SEND);
    ht_span_finish(&server);
    ht_span_annotate(&client, HT_ANN_CLIENT_RECV);
    ht_span_finish(&client);
  }
}

/* The same frames with the same context, no span: what the codec costs
 * on its own, so that the hop's figure can be read without it. */
static void codec_only(wire *w, const ht_span *root, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    ht_envelope env;
    carry(w, &root->ctx, &env);
  }
}

static void run(void (*loop)(wire *, const ht_span *, unsigned), unsigned warm,
                unsigned n) {
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg);
  cfg.kind = HT_SAMPLER_RATIO; /* roots and remote contexts: every hop sampled */
  cfg.ratio = 1.0;
  check(ht_sampling_set(&cfg), "sampling");
  check(ht_span_info_intern(&client_info, &client_names), "intern");
  check(ht_span_info_intern(&server_info, &server_names), "intern");
  wire w = {0};
  for (size_t i = 0; i < PAYLOAD; i++)
    w.payload[i] = 'x';
  check(ht_frame_reader_new(0, &w.reader), "reader");
  ht_span root;
  ht_span_init(&root);
  ht_span_start_root(&root, &root_info, HT_SAMPLE_YES);
  loop(&w, &root, warm);
  CALLGRIND_START_INSTRUMENTATION;
  loop(&w, &root, n);
  CALLGRIND_STOP_INSTRUMENTATION;
  ht_span_finish(&root);
  ht_frame_reader_free(w.reader);
}

void hops_two_sided(unsigned warm, unsigned n) { run(two_sided, warm, n); }

void hops_codec(unsigned warm, unsigned n) { run(codec_only, warm, n); }
