/* A sampled span that no session records when it starts costs nothing
 * more: no clock read, no name looked up, no hook called, through the
 * span API and through the quiet starts the traced messenger uses; and
 * whether a span is written is decided at its start, so a recorder that
 * starts or stops meanwhile never gets half a span. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>

#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "common/clock.h"
#include "propagate/events.h"
#include "propagate/span_path.h"

static unsigned clock_reads, hooks, sides, records, starts, anns;

static uint64_t counting_clock(void) { return 1000 + ++clock_reads; }

static void r_start(const ht_trace_context *c, const ht_span_info *i, const void *d) {
  (void)c, (void)i, (void)d;
  hooks++;
  starts++;
}
static void r_ann(const ht_trace_context *c, const char *n, int in) {
  (void)c, (void)n, (void)in;
  hooks++;
  anns++;
}
static void r_kv_str(const ht_trace_context *c, const char *k, const char *v) {
  (void)c, (void)k, (void)v;
  hooks++;
}
static void r_kv_int(const ht_trace_context *c, const char *k, int64_t v) {
  (void)c, (void)k, (void)v;
  hooks++;
}
static void r_kvs(const ht_trace_context *c, const ht_kv *k, size_t n) {
  (void)c, (void)k, (void)n;
  hooks++;
}
static void r_status(const ht_trace_context *c, int32_t s, const char *m) {
  (void)c, (void)s, (void)m;
  hooks++;
}
static void r_msg(const ht_trace_context *c, int d, const char *a, uint32_t t, uint64_t s,
                  uint64_t z, const char *p) {
  (void)c, (void)d, (void)a, (void)t, (void)s, (void)z, (void)p;
  hooks++;
}
static const char *side_kv; /* the last side's key-value key */
static uint8_t side_frames, side_boundary; /* and its frames */
static void r_side(const ht_span_side *s) {
  assert_true(s->start != 0); /* a written span has its start */
  side_kv = s->kv_key;
  side_frames = s->frames;
  side_boundary = s->boundary;
  hooks++;
  sides++;
}
static const void *r_desc_ref(const ht_span_info *i) {
  hooks++;
  return i;
}
static const void *r_peer_ref(const char *p) {
  hooks++;
  return p;
}
static int r_recording(void) { return (int)records; }

static const ht_event_ops recorder = {r_start,    r_ann,      r_kv_str, r_kv_int,
                                      r_kvs,      r_status,   r_msg,    r_side,
                                      r_desc_ref, r_peer_ref, NULL,     r_recording, NULL};

/* The same behind a probe that watches calls while `watching` is set. */
static unsigned short watching;
static const ht_event_ops watched_recorder = {
    r_start,    r_ann,      r_kv_str, r_kv_int,    r_kvs,    r_status, r_msg,
    r_side,     r_desc_ref, r_peer_ref, NULL, r_recording, &watching};

static const ht_span_info info = {"op", HT_SPAN_CLIENT, "svc", "tcp://h:1"};

static int setup(void **state) {
  (void)state;
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  c.kind = c.root_kind = HT_SAMPLER_ALWAYS;
  assert_int_equal(ht_sampling_set(&c), 0);
  ht_events_install(&recorder);
  ht_clock_use(counting_clock);
  clock_reads = hooks = sides = records = starts = anns = 0;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ht_clock_use(NULL);
  ht_events_install(NULL);
  return 0;
}

/* The span API's two-sided hop, as bench/recording runs it. */
static void api_hop(const ht_span *root) {
  ht_span c, s;
  ht_span_init(&c);
  ht_span_init(&s);
  assert_int_equal(ht_span_start_child(&c, root, &info), 0);
  ht_span_annotate(&c, HT_ANN_CLIENT_SEND);
  assert_int_equal(ht_span_start_remote(&s, &c.ctx, &info), 0);
  ht_span_annotate(&s, HT_ANN_SERVER_RECV);
  ht_span_kv_int(&s, "bytes", 4096);
  ht_span_set_error(&s, 5, "five");
  ht_span_annotate(&s, HT_ANN_SERVER_SEND);
  ht_span_finish(&s);
  ht_span_annotate(&c, HT_ANN_CLIENT_RECV);
  ht_span_finish(&c);
}

/* The traced messenger's hop: quiet starts, references, one-event ends. */
static void quiet_hop(void) {
  ht_span c, s;
  assert_int_equal(ht_span_start_root_quiet(&c, HT_SAMPLE_YES), 0);
  assert_true(ht_span_is_sampled(&c)); /* still propagated as sampled */
  assert_int_equal(ht_span_start_remote_quiet(&s, &c.ctx), 0);
  assert_true(ht_span_is_sampled(&s));
  assert_null(ht_span_desc_ref(&s, &info));
  assert_null(ht_span_peer_ref(&s, "tcp://h:1"));
  ht_span_kv_int(&s, "bytes", 4096);
  ht_span_finish_side(&s, NULL, &info, 1, NULL, HT_SIDE_START_FRAME);
  ht_span_finish_side(&c, NULL, &info, 1, NULL, HT_SIDE_START_FRAME);
}

static void unrecorded_spans_read_no_clock_and_call_no_hook(void **state) {
  (void)state;
  ht_span root;
  ht_span_init(&root);
  assert_int_equal(ht_span_start_root(&root, &info, HT_SAMPLE_YES), 0);
  assert_true(ht_span_is_sampled(&root));
  for (int i = 0; i < 3; i++) {
    api_hop(&root);
    quiet_hop();
  }
  ht_span_finish(&root);
  assert_int_equal(clock_reads, 0);
  assert_int_equal(hooks, 0);
}

static void recorded_spans_still_record(void **state) {
  (void)state;
  records = 1;
  ht_span root;
  ht_span_init(&root);
  assert_int_equal(ht_span_start_root(&root, &info, HT_SAMPLE_YES), 0);
  api_hop(&root);
  ht_span_finish(&root);
  assert_int_equal(sides, 3);
  assert_true(clock_reads > 0);
}

/* Started unwritten, finished while recording: still nothing; started
 * written, finished after recording stopped: still whole (the recorder
 * decides what it can still write). */
static void the_start_decides_for_the_whole_span(void **state) {
  (void)state;
  ht_span late, early;
  ht_span_init(&late);
  ht_span_init(&early);
  assert_int_equal(ht_span_start_root(&late, &info, HT_SAMPLE_YES), 0);
  records = 1;
  assert_int_equal(ht_span_start_root(&early, &info, HT_SAMPLE_YES), 0);
  unsigned started = hooks;
  ht_span_kv_int(&late, "k", 1);
  ht_span_annotate(&late, HT_ANN_CLIENT_SEND);
  ht_span_finish(&late);
  assert_int_equal(hooks, started); /* nothing of `late` */
  records = 0;
  ht_span_kv_int(&early, "k", 1);
  ht_span_finish(&early);
  assert_int_equal(hooks, started + 1); /* its side, its kv in it */
  assert_int_equal(sides, 1);
  assert_string_equal(side_kv, "k");

  ht_span q;
  assert_int_equal(ht_span_start_root_quiet(&q, HT_SAMPLE_YES), 0);
  records = 1;
  assert_null(ht_span_desc_ref(&q, &info));
  ht_span_finish_side(&q, NULL, &info, 1, NULL, 0);
  assert_int_equal(sides, 1);
  assert_int_equal(ht_span_start_root_quiet(&q, HT_SAMPLE_YES), 0);
  records = 0;
  assert_non_null(ht_span_desc_ref(&q, &info));
  ht_span_finish_side(&q, NULL, &info, 1, NULL, 0);
  assert_int_equal(sides, 2);
}

/* A written span's boundary marks (a client's "cs"/"cr", a server's
 * "sr"/"ss") and its start with its names kept call no hook unless a
 * probe watched calls when it started; any other annotation does. */
static void boundary_marks_call_no_hook_unless_watched(void **state) {
  (void)state;
  ht_events_install(&watched_recorder);
  records = 1;
  ht_span_info server = info;
  server.kind = HT_SPAN_SERVER;
  ht_span c, s;
  ht_span_init(&c);
  ht_span_init(&s);
  assert_int_equal(ht_span_start_root(&c, &info, HT_SAMPLE_YES), 0);
  ht_span_annotate(&c, HT_ANN_CLIENT_SEND);
  ht_span_annotate(&c, HT_ANN_CLIENT_RECV);
  ht_span_finish(&c);
  assert_int_equal(starts + anns, 0);
  assert_int_equal(sides, 1);
  assert_int_equal(side_frames, HT_SIDE_START_FRAME | HT_SIDE_END_FRAME);
  assert_int_equal(side_boundary, 1);

  assert_int_equal(ht_span_start_root(&s, &server, HT_SAMPLE_YES), 0);
  watching = 1; /* too late for s */
  ht_span_annotate(&s, HT_ANN_SERVER_RECV);
  assert_int_equal(anns, 0);
  ht_span_annotate(&s, HT_ANN_SERVER_RECV); /* twice: a note */
  ht_span_annotate(&s, "retry");
  ht_span_annotate(&s, HT_ANN_CLIENT_SEND); /* not a server's boundary */
  assert_int_equal(anns, 3);
  ht_span_finish(&s);
  assert_int_equal(side_boundary, 0);

  anns = 0;
  assert_int_equal(ht_span_start_root(&s, &server, HT_SAMPLE_YES), 0);
  assert_int_equal(starts, 1);
  ht_span_annotate(&s, HT_ANN_SERVER_RECV);
  ht_span_annotate(&s, HT_ANN_SERVER_SEND);
  assert_int_equal(anns, 2);
  ht_span_finish(&s);
  assert_int_equal(side_frames, HT_SIDE_START_FRAME | HT_SIDE_END_FRAME);
  watching = 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(unrecorded_spans_read_no_clock_and_call_no_hook, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(recorded_spans_still_record, setup, teardown),
      cmocka_unit_test_setup_teardown(the_start_decides_for_the_whole_span, setup, teardown),
      cmocka_unit_test_setup_teardown(boundary_marks_call_no_hook_unless_watched, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
