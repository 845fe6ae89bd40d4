/* Integration driver: builds a small span tree through the public API and
 * writes the events it expects LTTng to have recorded (one canonical line
 * per event, ids included; schema 2, see finish()) to the file named by
 * argv[2].
 *   span_tree sampled FILE    root forced sampled: 4 spans, kvs, status
 *   span_tree unsampled FILE  sampler "never": the same calls, FILE empty
 * Prints the provider state before and after ht_tracing_init()
 * ("before_init=...", "provider=loaded|disabled|missing") on stdout.
 * Built twice: with the static library and with the shared one. Exit 0
 * on success. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "hoptrace/tracing.h"

static FILE *expect;

static void ids(const ht_span *s) {
  fprintf(expect, " trace_id_hi=%" PRIu64 " trace_id_lo=%" PRIu64
                  " span_id=%" PRIu64 " parent_span_id=%" PRIu64,
          s->ctx.trace_id_hi, s->ctx.trace_id_lo, s->ctx.span_id,
          s->ctx.parent_span_id);
}

/* Expected-line helpers: only sampled spans record. */
#define EXPECT(s, event, ...)                                                  \
  do {                                                                         \
    if (ht_span_is_sampled(s)) {                                               \
      fprintf(expect, "hoptrace:%s", event);                                   \
      ids(s);                                                                  \
      fprintf(expect, __VA_ARGS__);                                            \
      fputc('\n', expect);                                                     \
    }                                                                          \
  } while (0)

/* Schema 3: a span is one event when it finishes: `span` (`span_k` with
 * its integer key-value) when its marks are only its frames (a client's
 * "cs"/"cr", a server's "sr"/"ss"), else span_a with its marks;
 * check_trace.py puts its desc id's names (kind/name/service/endpoint) in
 * place of the id, and checks the times given as "*" (start, and the
 * marks set). */
static const ht_span_info *names_of[8];
static const ht_span *spans_of[8];
static size_t n_named;

static int start(ht_span *s, const ht_span_info *i) {
  if (n_named < 8) {
    spans_of[n_named] = s;
    names_of[n_named++] = i;
  }
  return 0;
}

/* A root's span_a carries the probability its trace was sampled with
 * (hoptrace_schema.h ROOT_P): the active sampler's for a default root. */
static uint64_t root_prob(const ht_span *s) {
  ht_sampling_config cfg = {.size = sizeof(cfg)};
  ht_sampler *sampler = NULL;
  ht_sampling_get(&cfg);
  if (s->ctx.parent_span_id != 0 || ht_sampler_new(&cfg, &sampler) != 0)
    return 0;
  uint64_t p = ht_sampler_root_probability(sampler, HT_SAMPLE_DEFAULT);
  ht_sampler_free(sampler);
  return p;
}

/* marks: which of "cssc" the span was given; kv: its kept key-value's
 * fields (" key=... value=..."), or "". */
static void finish(ht_span *s, int status, const char *marks, const char *kv) {
  const ht_span_info *i = NULL;
  for (size_t k = 0; k < n_named; k++)
    if (spans_of[k] == s)
      i = names_of[k];
  uint64_t p = root_prob(s);
  char prob[40] = "";
  if (p != 0)
    snprintf(prob, sizeof(prob), " root_prob=%" PRIu64, p);
  /* its frames' marks: "c--c" for a client, "-ss-" for a server */
  const char *own = i->kind == HT_SPAN_CLIENT ? "c--c" : i->kind == HT_SPAN_SERVER ? "-ss-" : "----";
  int side = 1;
  for (int k = 0; k < 4; k++)
    side &= marks[k] == '-' || marks[k] == own[k];
  int client = i->kind == HT_SPAN_CLIENT;
  /* hoptrace_schema.h HT_SCHEMA_FLAG_START_FRAME, _END_FRAME */
  unsigned frames = !side ? 0u
                    : (marks[client ? 0 : 1] != '-' ? 0x40u : 0u) |
                          (marks[client ? 3 : 2] != '-' ? 0x80u : 0u);
  unsigned flags = (unsigned)(s->ctx.flags & 0xff) | (p != 0 ? 0x10u : 0u) | frames;
  if (side)
    EXPECT(s, kv[0] ? "span_k" : "span",
           " start=*%s desc=%d/%s/%s/%s peer=0 flags=%u vpid=%d vtid=%d status=%d%s",
           prob, (int)i->kind, i->name, i->service, i->endpoint, flags,
           (int)getpid(), (int)gettid(), status, kv);
  else
    EXPECT(s, "span_a",
           " start=*%s desc=%d/%s/%s/%s peer=0 flags=%u vpid=%d vtid=%d status=%d"
           " cs=%s sr=%s ss=%s cr=%s",
           prob, (int)i->kind, i->name, i->service, i->endpoint, flags,
           (int)getpid(), (int)gettid(), status, marks[0] == 'c' ? "*" : "0",
           marks[1] == 's' ? "*" : "0", marks[2] == 's' ? "*" : "0",
           marks[3] == 'c' ? "*" : "0");
  ht_span_finish(s);
}

static int build_tree(void) {
  ht_span root, a, b, g;
  ht_span_init(&root);
  ht_span_init(&a);
  ht_span_init(&b);
  ht_span_init(&g);
  ht_span_info ri = {"req", HT_SPAN_CLIENT, "client", "tcp://127.0.0.1:1"};
  if (ht_span_start_root(&root, &ri, HT_SAMPLE_DEFAULT) != 0)
    return 1;
  start(&root, &ri);
  ht_span_annotate(&root, HT_ANN_CLIENT_SEND); /* kept: its start frame */
  ht_span_kv_str(&root, "http.method", "GET");
  EXPECT(&root, "tag_s", " key=\"http.method\" value=\"GET\"");
  ht_span_msg_send(&root, HT_MSG_REQUEST, 7, 128, "tcp://127.0.0.1:2");
  EXPECT(&root, "frame",
         " dir=0 type=1 seq=7 size=128 annotation=\"\" peer_text=\"tcp://127.0.0.1:2\"");

  ht_span_info ai = {"osd_write", HT_SPAN_SERVER, "osd.1", "tcp://127.0.0.1:2"};
  if (ht_span_start_child(&a, &root, &ai) != 0)
    return 1;
  start(&a, &ai);
  ht_span_annotate(&a, HT_ANN_SERVER_RECV);
  ht_span_kv_int(&a, "bytes", -4096); /* kept: in its span_k */
  ht_kv kvs[] = {{"pool", HT_KV_STR, "rbd", 0},
                 {"objects", HT_KV_INT, NULL, 3},
                 {"replica", HT_KV_STR, "osd.2", 0}};
  ht_span_kvs(&a, kvs, 3);
  EXPECT(&a, "tag_s", " key=\"pool\" value=\"rbd\"");
  EXPECT(&a, "tag_i", " key=\"objects\" value=3");
  EXPECT(&a, "tag_s", " key=\"replica\" value=\"osd.2\"");

  ht_span_info gi = {"replica_write", HT_SPAN_SERVER, "osd.2",
                     "tcp://127.0.0.1:3"};
  if (ht_span_start_remote(&g, &a.ctx, &gi) != 0)
    return 1;
  start(&g, &gi);
  ht_span_msg_recv(&g, HT_MSG_REQUEST, 9, 4096, "tcp://127.0.0.1:2");
  EXPECT(&g, "frame",
         " dir=1 type=1 seq=9 size=4096 annotation=\"\" peer_text=\"tcp://127.0.0.1:2\"");
  finish(&g, 0, "----", "");
  ht_span_annotate(&a, HT_ANN_SERVER_SEND);
  finish(&a, 0, "-ss-", " key=\"bytes\" value=-4096");

  ht_span_info bi = {"checksum", HT_SPAN_INTERNAL, "client", "local"};
  if (ht_span_start_local(&b, &root.ctx, &bi) != 0)
    return 1;
  start(&b, &bi);
  ht_span_set_error(&b, HT_EIO, "crc mismatch");
  EXPECT(&b, "error", " code=%d message=\"crc mismatch\"", HT_EIO);
  ht_span_annotate(&b, HT_ANN_CLIENT_SEND); /* not its frame: a span_a */
  finish(&b, HT_EIO, "c---", "");

  ht_span_annotate(&root, HT_ANN_CLIENT_RECV);
  finish(&root, 0, "c--c", "");
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "sampled") && strcmp(argv[1], "unsampled"))) {
    fprintf(stderr, "usage: %s sampled|unsampled EXPECTED_FILE\n", argv[0]);
    return 2;
  }
  static const char *const names[] = {"uninitialised", "loaded", "disabled",
                                      "missing"};
  /* The loader's constructor has run already (shared library, or a static
   * link that pulled the loader in by referencing ht_tracing_*). */
  printf("before_init=%s\n", names[ht_tracing_provider_state()]);
  ht_tracing_init(); /* idempotent */
  printf("provider=%s\n", names[ht_tracing_provider_state()]);
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg);
  cfg.kind = strcmp(argv[1], "sampled") == 0 ? HT_SAMPLER_ALWAYS
                                              : HT_SAMPLER_NEVER;
  if (ht_sampling_set(&cfg) != 0)
    return 1;
  expect = fopen(argv[2], "w");
  if (!expect)
    return 1;
  int rc = build_tree();
  if (fclose(expect) != 0)
    rc = 1;
  ht_sampling_stats st = {.size = sizeof(st)};
  ht_sampling_get_stats(&st);
  printf("traces_started=%" PRIu64 " sampled=%" PRIu64 " dropped=%" PRIu64 "\n",
         st.traces_started, st.traces_sampled, st.traces_dropped);
  return rc;
}
