/* The assembler on synthetic event sequences: when traces are emitted,
 * what makes them incomplete, and that open traces stay bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "assemble/assemble.h"
#include "output/otlp_map.h"
#include "output/output.h"

#define MS 1000000ll

typedef struct seen {
  int traces;
  size_t spans[64];
  int incomplete[64];
  size_t orphans[64], unfinished[64];
  int lossy[64];
  size_t roots[64];
  uint64_t ids[64];
  char reason[64][128];
} seen;

static void on_ready(void *user, const trace *t) {
  seen *s = user;
  int i = s->traces++;
  if (i >= 64)
    return;
  s->spans[i] = t->n_spans;
  s->incomplete[i] = t->incomplete;
  s->orphans[i] = t->orphans;
  s->unfinished[i] = t->unfinished;
  s->lossy[i] = t->lossy;
  s->roots[i] = t->n_roots;
  s->ids[i] = t->trace_lo;
  trace_incomplete_reason(t, s->reason[i], sizeof(s->reason[i]));
}

/* The index of trace `id` among those emitted, failing when absent. */
static int emitted(const seen *s, uint64_t id) {
  for (int i = 0; i < s->traces && i < 64; i++)
    if (s->ids[i] == id)
      return i;
  fail_msg("trace %llu never emitted", (unsigned long long)id);
  return -1;
}

static hop_event ev(hop_event_kind kind, int64_t ts, uint64_t trace, uint64_t span,
                    uint64_t parent) {
  hop_event e = {.kind = kind, .ts_ns = ts, .trace_lo = trace, .span_id = span,
                 .parent_id = parent, .vpid = 1, .vtid = 1, .procname = "p",
                 .hostname = "h", .name = "op", .service = "svc", .endpoint = "",
                 .key = "k", .str_value = "v", .message = "", .peer = ""};
  return e;
}

static void add(assembler *a, hop_event e) { assert_int_equal(assembler_add(a, &e), 0); }

static void span_events(assembler *a, int64_t t0, uint64_t trace, uint64_t span,
                        uint64_t parent) {
  add(a, ev(HOP_SPAN_START, t0, trace, span, parent));
  add(a, ev(HOP_ANNOTATION, t0 + 1, trace, span, parent));
  add(a, ev(HOP_KV_STR, t0 + 2, trace, span, parent));
  add(a, ev(HOP_SPAN_END, t0 + 10, trace, span, parent));
}

static void complete_trace_waits_for_grace(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 100 * MS, 1000 * MS);
  span_events(a, 0, 7, 1, 0);
  span_events(a, 1, 7, 2, 1);
  assembler_tick(a, 50 * MS);
  assert_int_equal(s.traces, 0); /* still within grace */
  span_events(a, 60 * MS, 7, 3, 1); /* a late child joins */
  assembler_tick(a, 200 * MS);
  assert_int_equal(s.traces, 1);
  assert_int_equal(s.spans[0], 3);
  assert_false(s.incomplete[0]);
  assert_int_equal(s.roots[0], 1);
  assembler_flush(a);
  assert_int_equal(s.traces, 1);
  assembler_free(a);
}

static void orphan_and_unfinished_are_reported(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 10 * MS, 50 * MS);
  span_events(a, 0, 1, 10, 99);                   /* parent 99 never comes */
  add(a, ev(HOP_SPAN_START, 5, 2, 20, 0));        /* never ends */
  add(a, ev(HOP_ANNOTATION, 6, 3, 30, 0));        /* never starts or ends */
  assembler_tick(a, 20 * MS);
  assert_int_equal(s.traces, 0); /* incomplete: waits for the timeout */
  assembler_tick(a, 100 * MS);
  assert_int_equal(s.traces, 3);
  for (int i = 0; i < 3; i++)
    assert_true(s.incomplete[i]);
  assert_int_equal(s.orphans[0], 1);
  assert_int_equal(s.unfinished[1], 1);
  assert_int_equal(s.unfinished[2], 1);
  const assembler_stats *st = assembler_get_stats(a);
  assert_int_equal(st->incomplete_traces, 3);
  assert_int_equal(st->timed_out_traces, 3);
  assembler_free(a);
}

static void discards_mark_open_traces(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 10 * MS, 50 * MS);
  span_events(a, 0, 1, 1, 0);
  hop_loss loss = {.hostname = "", .events = 3, .begin_ns = 1, .end_ns = 2};
  assembler_discarded(a, &loss);
  span_events(a, 5 * MS, 2, 2, 0); /* begins after the loss */
  assembler_flush(a);
  assert_int_equal(s.traces, 2);
  assert_true(s.lossy[0] && s.incomplete[0]);
  assert_false(s.lossy[1] || s.incomplete[1]);
  assembler_free(a);
}

typedef struct probs {
  int traces;
  char p[4][32], invalid[4][32], child_invalid[4][32];
} probs;

static void on_ready_probs(void *user, const trace *t) {
  probs *s = user;
  int i = s->traces++;
  if (i >= 4)
    return;
  const span *root = NULL, *child = NULL;
  for (size_t k = 0; k < t->n_spans; k++)
    *(t->spans[k]->parent_id == 0 ? &root : &child) = t->spans[k];
  char buf[32];
  const char *v = root ? root_sampling_probability(t, root, buf, sizeof(buf)) : NULL;
  snprintf(s->p[i], sizeof(s->p[i]), "%s", v ? v : "-");
  v = root ? root_sampling_probability_invalid(t, root, buf, sizeof(buf)) : NULL;
  snprintf(s->invalid[i], sizeof(s->invalid[i]), "%s", v ? v : "-");
  v = child ? root_sampling_probability_invalid(t, child, buf, sizeof(buf)) : NULL;
  snprintf(s->child_invalid[i], sizeof(s->child_invalid[i]), "%s", v ? v : "-");
}

/* A root's sampling probability outside (0, 1] (a hostile trace) is
 * flagged on the root span (hoptrace.sampling.probability.invalid, its
 * value), never written as the probability, and counted. */
static void impossible_probability_is_flagged(void **state) {
  (void)state;
  probs s = {0};
  assembler *a = assembler_new(on_ready_probs, &s, 10 * MS, 50 * MS);
  const uint64_t p[4] = {UINT64_C(1) << 33, UINT64_MAX, UINT64_C(1) << 30, UINT64_C(1) << 32};
  for (uint64_t tr = 1; tr <= 4; tr++) {
    hop_event root = ev(HOP_SPAN_SIDE, 10, tr, 1, 0);
    root.start_ns = 1;
    root.annotation = root.end_annotation = "";
    root.root_prob = p[tr - 1];
    add(a, root);
    hop_event child = ev(HOP_SPAN_SIDE, 9, tr, 2, 1);
    child.start_ns = 2;
    child.annotation = child.end_annotation = "";
    add(a, child);
    if (tr == 1) { /* a later valid p does not clear the flag */
      root.root_prob = UINT64_C(1) << 31;
      root.span_id = 3;
      add(a, root);
    }
  }
  assembler_flush(a);
  assert_int_equal(s.traces, 4);
  assert_string_equal(s.p[0], "-");
  assert_string_equal(s.invalid[0], "2");
  assert_string_equal(s.p[1], "-");
  assert_string_equal(s.invalid[1], "0");
  assert_string_equal(s.p[2], "0.25");
  assert_string_equal(s.invalid[2], "-");
  assert_string_equal(s.p[3], "1");
  assert_string_equal(s.invalid[3], "-");
  for (int i = 0; i < 4; i++)
    assert_string_equal(s.child_invalid[i], "-");
  assert_int_equal(assembler_get_stats(a)->invalid_prob_traces, 2);
  assembler_free(a);
}

typedef struct starts {
  int traces;
  int64_t otlp_start[4], otlp_end[4], shown[4];
  char unfinished[4][96];
  int incomplete[4];
} starts;

static void on_ready_starts(void *user, const trace *t) {
  starts *s = user;
  int i = (int)t->trace_lo - 1;
  s->traces++;
  if (i < 0 || i >= 4)
    return;
  for (size_t k = 0; k < t->n_spans; k++) {
    const span *sp = t->spans[k];
    if (sp->id != 1)
      continue;
    otlp_span_fields f;
    otlp_span_fields_get(sp, &f);
    s->otlp_start[i] = f.start_ns;
    s->otlp_end[i] = f.end_ns;
    s->shown[i] = span_shown_start_ns(sp);
    const char *u = span_unfinished(sp, s->unfinished[i], sizeof(s->unfinished[i]));
    if (u == NULL)
      snprintf(s->unfinished[i], sizeof(s->unfinished[i]), "-");
  }
  s->incomplete[i] = t->incomplete;
}

/* A root never started (only its tags, or only its end, seen) is shown
 * from the earliest time known for it, never at 0 (1970), and flagged
 * (never-finished roots were exported at timestamp 0). */
static void unfinished_root_is_not_at_epoch(void **state) {
  (void)state;
  starts s = {0};
  const int64_t T = 1700000000ll * 1000000000ll; /* 2023 */
  assembler *a = assembler_new(on_ready_starts, &s, 10 * MS, 50 * MS);
  /* trace 1: the root's tag at T + 5 ms, its child whole from T + 6 ms */
  add(a, ev(HOP_KV_STR, T + 5 * MS, 1, 1, 0));
  span_events(a, T + 6 * MS, 1, 2, 1);
  /* trace 2: an end without a start */
  add(a, ev(HOP_SPAN_END, T + 7 * MS, 2, 1, 0));
  /* trace 3: the root's tag after its child started: the child's start */
  span_events(a, T + 8 * MS, 3, 2, 1);
  add(a, ev(HOP_KV_STR, T + 9 * MS, 3, 1, 0));
  /* trace 4: a whole root: its own start, no flag */
  span_events(a, T + 10 * MS, 4, 1, 0);
  assembler_flush(a);
  assert_int_equal(s.traces, 4);
  assert_true(s.otlp_start[0] == T + 5 * MS);
  assert_true(s.otlp_end[0] == T + 5 * MS);
  assert_true(s.shown[0] == T + 5 * MS);
  assert_string_equal(s.unfinished[0],
                      "unfinished root: never started: shown from the earliest time known for "
                      "it; never ended");
  assert_true(s.otlp_start[1] == T + 7 * MS);
  assert_string_equal(s.unfinished[1],
                      "unfinished root: never started: shown from the earliest time known for it");
  assert_true(s.otlp_start[2] == T + 8 * MS);
  assert_true(s.otlp_start[3] == T + 10 * MS);
  assert_string_equal(s.unfinished[3], "-");
  assert_true(s.incomplete[0] && s.incomplete[1] && s.incomplete[2]);
  assert_false(s.incomplete[3]);
  assembler_free(a);
}

/* One span of `trace` recorded on `host`: a schema 2/3 span side, one
 * event at its end. */
static void side_on(assembler *a, const char *host, int64_t start, int64_t end,
                    uint64_t trace, uint64_t span, uint64_t parent) {
  hop_event e = ev(HOP_SPAN_SIDE, end, trace, span, parent);
  e.hostname = host;
  e.start_ns = start;
  e.annotation = e.end_annotation = "";
  add(a, e);
}

/* A loss one host's stream reported marks the open traces with a span
 * on that host, and names it; the other hosts' traces stay complete. A
 * span side that was running on that host during the loss and arrives
 * after it (a side is written at its end) marks its trace too. A loss of
 * a stream without a hostname marks every open trace, as before. */
static void a_loss_marks_only_its_hosts_traces(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 10 * MS, 50 * MS);
  side_on(a, "host-a", 0, 1 * MS, 1, 1, 0);        /* trace 1: host-a only */
  side_on(a, "host-b", 0, 1 * MS, 2, 1, 0);        /* trace 2: host-b only */
  side_on(a, "host-a", 0, 2 * MS, 3, 1, 0);        /* trace 3: both */
  side_on(a, "host-b", 1 * MS, 2 * MS, 3, 2, 1);
  side_on(a, "host-a", 2 * MS, 3 * MS, 4, 1, 0);   /* trace 4: a, then b ... */
  hop_loss loss = {.hostname = "host-b", .events = 5, .begin_ns = 3 * MS, .end_ns = 4 * MS};
  assembler_discarded(a, &loss);
  side_on(a, "host-b", 3 * MS, 5 * MS, 4, 2, 1);   /* ... ran on b during the loss */
  side_on(a, "host-a", 2 * MS, 5 * MS, 5, 1, 0);   /* trace 5: a, then b ... */
  side_on(a, "host-b", 4 * MS + 1, 6 * MS, 5, 2, 1); /* ... started after it */
  assembler_flush(a);
  assert_int_equal(s.traces, 5);
  int t1 = emitted(&s, 1), t2 = emitted(&s, 2), t3 = emitted(&s, 3), t4 = emitted(&s, 4),
      t5 = emitted(&s, 5);
  assert_false(s.lossy[t1] || s.incomplete[t1]);
  assert_false(s.lossy[t5] || s.incomplete[t5]);
  assert_true(s.lossy[t2] && s.incomplete[t2]);
  assert_true(s.lossy[t3] && s.incomplete[t3]);
  assert_true(s.lossy[t4] && s.incomplete[t4]);
  assert_string_equal(s.reason[t2], "LTTng discarded events on host host-b");
  assert_string_equal(s.reason[t3], "LTTng discarded events on host host-b");
  assert_string_equal(s.reason[t4], "LTTng discarded events on host host-b");
  assert_string_equal(s.reason[t1], "");
  assert_int_equal(assembler_get_stats(a)->lossy_traces, 3);
  assembler_free(a);

  /* lost packets (no times) of a stream with no hostname: every open trace */
  s = (seen){0};
  a = assembler_new(on_ready, &s, 10 * MS, 50 * MS);
  side_on(a, "host-a", 0, 1 * MS, 1, 1, 0);
  side_on(a, "host-b", 0, 1 * MS, 2, 1, 0);
  loss = (hop_loss){.hostname = "", .packets = 1};
  assembler_discarded(a, &loss);
  assembler_flush(a);
  assert_int_equal(s.traces, 2);
  assert_true(s.lossy[0] && s.lossy[1]);
  assert_string_equal(s.reason[0], "LTTng discarded events");
  assembler_free(a);
}

#define SEC 1000000000ll

/* Live and idle: the assembler's "now" runs on from the last event's
 * trace time at the monotonic clock's pace, whatever the wall clock
 * says. A host whose clock is hours off the machine's: a complete trace
 * goes out once the grace has passed in trace time (not at once), an
 * incomplete one once the timeout has (not never); events arriving again
 * anchor the idle time anew. */
static void idle_time_follows_the_trace_clock(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 2 * SEC, 10 * SEC);
  /* the trace's clock: 5 hours behind, then 5 hours ahead of the wall */
  for (int k = 0; k < 2; k++) {
    s = (seen){0};
    int64_t skew = (k == 0 ? -5 : 5) * 3600 * SEC;
    int64_t t0 = 1700000000 * SEC + skew, mono = 1000 * SEC + k * 100000 * SEC;
    span_events(a, t0, 10 + k, 1, 0);             /* complete */
    add(a, ev(HOP_SPAN_START, t0 + 5, 20 + k, 1, 0)); /* never ends */
    assembler_idle(a, mono);                      /* the first idle call anchors */
    assembler_idle(a, mono + 1 * SEC);
    assert_int_equal(s.traces, 0);                /* 1 s: within the grace */
    assert_true(assembler_now(a) <= t0 + 1 * SEC + 10);
    assembler_idle(a, mono + 2 * SEC + 100);
    assert_int_equal(s.traces, 1);                /* past the grace */
    assert_int_equal(s.ids[0], 10 + k);
    assert_false(s.incomplete[0]);
    assembler_idle(a, mono + 9 * SEC);
    assert_int_equal(s.traces, 1);                /* the other waits for its timeout */
    /* an event arrives after 9 s idle (its trace time only 0.5 s on:
     * the live stream lags): the idle time starts again from it */
    add(a, ev(HOP_SPAN_START, t0 + SEC / 2, 30 + k, 1, 0));
    int64_t again = mono + 9 * SEC + 1;
    assembler_idle(a, again);
    assembler_idle(a, again + 3 * SEC);
    assert_int_equal(s.traces, 1);
    assembler_idle(a, again + 9600 * MS);         /* 20+k quiet 10.1 s, 30+k 9.6 s */
    assert_int_equal(s.traces, 2);
    assert_int_equal(s.ids[1], 20 + k);
    assert_true(s.incomplete[1]);
    assembler_idle(a, again + 10 * SEC);
    assert_int_equal(s.traces, 3);
    assert_int_equal(s.ids[2], 30 + k);
  }
  assembler_free(a);
}

static void open_traces_stay_bounded(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 1 * MS, 10 * MS);
  for (uint64_t t = 1; t <= 100000; t++) {
    int64_t at = (int64_t)t * MS;
    span_events(a, at, t, 1, 0);
    span_events(a, at + 100, t, 2, 1);
    assembler_tick(a, at + 200);
  }
  assembler_flush(a);
  const assembler_stats *st = assembler_get_stats(a);
  assert_int_equal(st->traces, 100000);
  assert_int_equal(st->incomplete_traces, 0);
  assert_true(st->open_traces_peak <= 3);
  assembler_free(a);
}

static void parent_cycles_are_cut_and_reported(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  span_events(a, 0, 9, 1, 2);  /* 1's parent is 2 ... */
  span_events(a, 5, 9, 2, 1);  /* ... and 2's parent is 1 */
  span_events(a, 9, 9, 3, 3);  /* its own parent */
  assembler_flush(a);
  assert_int_equal(s.traces, 1);
  assert_int_equal(s.spans[0], 3);
  assert_int_equal(s.roots[0], 2); /* every span still reachable */
  assert_int_equal(s.orphans[0], 2);
  assert_true(s.incomplete[0]);
  assembler_free(a);
}

static void vectored_kvs_become_tags(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  hop_kv kvs[] = {{"a", false, 0, "x"}, {"b", true, 42, ""}};
  hop_event e = ev(HOP_KVS, 1, 5, 1, 0);
  e.kvs = kvs;
  e.n_kvs = 2;
  add(a, ev(HOP_SPAN_START, 0, 5, 1, 0));
  add(a, e);
  add(a, ev(HOP_SPAN_END, 2, 5, 1, 0));
  assembler_flush(a);
  assert_int_equal(s.traces, 1);
  assert_false(s.incomplete[0]);
  assembler_free(a);
}

/* What a one-span trace holds, to compare two event sequences. */
typedef struct span_view {
  size_t n_annotations;
  char annotations[4][8];
  int64_t annotation_ns[4];
  char peer[32];
  bool started, ended;
  int64_t start_ns, end_ns;
  int32_t status;
  int kind;
  char name[16], service[16];
} span_view;

static void on_one_span(void *user, const trace *t) {
  span_view *v = user;
  assert_int_equal(t->n_spans, 1);
  const span *s = t->spans[0];
  memset(v, 0, sizeof(*v));
  v->n_annotations = s->n_annotations;
  for (size_t i = 0; i < s->n_annotations && i < 4; i++) {
    snprintf(v->annotations[i], sizeof(v->annotations[i]), "%s", s->annotations[i].value);
    v->annotation_ns[i] = s->annotations[i].ts_ns;
  }
  snprintf(v->peer, sizeof(v->peer), "%s", s->peer ? s->peer : "");
  v->started = s->started;
  v->ended = s->ended;
  v->start_ns = s->start_ns;
  v->end_ns = s->end_ns;
  v->status = s->status;
  v->kind = s->kind;
  snprintf(v->name, sizeof(v->name), "%s", s->name ? s->name : "");
  snprintf(v->service, sizeof(v->service), "%s", s->service ? s->service : "");
}

static hop_event msg(hop_event_kind kind, int64_t ts, const char *name,
                     uint64_t size, const char *peer) {
  hop_event e = ev(kind, ts, 9, 1, 0);
  e.name = name;
  e.size = size;
  e.peer = peer;
  e.msg_type = 1;
  return e;
}

/* hop_send / hop_recv (the traced messenger's folded events) give the
 * span exactly what an annotation plus a msg_send / msg_recv give. */
static void folded_hop_events_equal_annotation_plus_message(void **state) {
  (void)state;
  span_view apart, folded;
  assembler *a = assembler_new(on_one_span, &apart, 0, 0);
  add(a, ev(HOP_SPAN_START, 0, 9, 1, 0));
  add(a, ev(HOP_ANNOTATION, 5, 9, 1, 0)); /* name "op" stands for "cs" */
  add(a, msg(HOP_MSG_SEND, 5, "", 100, "tcp://a:1"));
  add(a, msg(HOP_MSG_RECV, 20, "", 40, ""));
  hop_event cr = ev(HOP_ANNOTATION, 20, 9, 1, 0);
  cr.name = "cr";
  add(a, cr);
  add(a, ev(HOP_SPAN_END, 30, 9, 1, 0));
  assembler_flush(a);
  assembler_free(a);
  a = assembler_new(on_one_span, &folded, 0, 0);
  add(a, ev(HOP_SPAN_START, 0, 9, 1, 0));
  add(a, msg(HOP_HOP_SEND, 5, "op", 100, "tcp://a:1"));
  add(a, msg(HOP_HOP_RECV, 20, "cr", 40, ""));
  add(a, ev(HOP_SPAN_END, 30, 9, 1, 0));
  assembler_flush(a);
  assembler_free(a);
  assert_int_equal(folded.n_annotations, 2);
  assert_memory_equal(&apart, &folded, sizeof(apart));
  /* a hop event without a name is a message only */
  a = assembler_new(on_one_span, &folded, 0, 0);
  add(a, ev(HOP_SPAN_START, 0, 9, 1, 0));
  add(a, msg(HOP_HOP_SEND, 5, "", 100, "p"));
  add(a, ev(HOP_SPAN_END, 30, 9, 1, 0));
  assembler_flush(a);
  assembler_free(a);
  assert_int_equal(folded.n_annotations, 0);
  assert_string_equal(folded.peer, "p"); /* the message's peer is kept */
}

/* span_start_send .. span_end_recv (a span's start and end with its
 * first and last hop) give what span_start + hop_send ... hop_recv +
 * span_end give. */
static void folded_start_and_end_equal_the_separate_events(void **state) {
  (void)state;
  span_view apart, folded;
  for (int k = 0; k < 2; k++) {
    assembler *a = assembler_new(on_one_span, k ? &folded : &apart, 0, 0);
    hop_event start = msg(k ? HOP_SPAN_START_SEND : HOP_SPAN_START, 5, "op", 100, "tcp://a:1");
    start.annotation = "cs";
    hop_event end = msg(k ? HOP_SPAN_END_RECV : HOP_SPAN_END, 20, "op", 40, "");
    end.annotation = "cr";
    end.status = 7;
    add(a, start);
    if (!k)
      add(a, msg(HOP_HOP_SEND, 5, "cs", 100, "tcp://a:1"));
    if (!k)
      add(a, msg(HOP_HOP_RECV, 20, "cr", 40, ""));
    add(a, end);
    assembler_flush(a);
    assembler_free(a);
  }
  assert_int_equal(folded.n_annotations, 2);
  assert_string_equal(folded.peer, "tcp://a:1");
  assert_true(folded.started && folded.ended);
  assert_int_equal(folded.start_ns, 5);
  assert_int_equal(folded.end_ns, 20);
  assert_int_equal(folded.status, 7);
  assert_string_equal(folded.name, "op");
  assert_memory_equal(&apart, &folded, sizeof(apart));
}

/* A schema 2 span side (one event: start, end and their frames, names
 * already resolved by read/names.c) gives what the folded start and end
 * events give; without its end frame (a timed-out call) no "cr". */
static void span_side_equals_the_folded_events(void **state) {
  (void)state;
  span_view folded, side, no_end;
  for (int k = 0; k < 3; k++) {
    assembler *a = assembler_new(on_one_span, k == 0 ? &folded : k == 1 ? &side : &no_end, 0, 0);
    if (k == 0) {
      hop_event start = msg(HOP_SPAN_START_SEND, 5, "op", 100, "tcp://a:1");
      start.annotation = "cs";
      hop_event end = msg(HOP_SPAN_END_RECV, 20, "op", 40, "");
      end.annotation = "cr";
      end.status = 7;
      add(a, start);
      add(a, end);
    } else {
      hop_event e = msg(HOP_SPAN_SIDE, 20, "op", 0, "tcp://a:1");
      e.start_ns = 5;
      e.annotation = "cs";
      e.end_annotation = k == 1 ? "cr" : "";
      e.status = 7;
      add(a, e);
    }
    assembler_flush(a);
    assembler_free(a);
  }
  assert_int_equal(side.n_annotations, 2);
  assert_int_equal(side.annotation_ns[0], 5);
  assert_int_equal(side.annotation_ns[1], 20);
  assert_memory_equal(&folded, &side, sizeof(side));
  assert_int_equal(no_end.n_annotations, 1);
  assert_true(no_end.started && no_end.ended);
  assert_int_equal(no_end.start_ns, 5);
  assert_int_equal(no_end.end_ns, 20);
}

/* A span API span written as a side (its "cs"/"cr" its frames) and as a
 * span_a (the same times as marks), each after a note it wrote while it
 * ran: the same span, annotations by time. */
static void side_frames_and_marks_sort_after_notes(void **state) {
  (void)state;
  span_view v[2];
  for (int k = 0; k < 2; k++) {
    assembler *a = assembler_new(on_one_span, &v[k], 0, 0);
    add(a, msg(HOP_ANNOTATION, 12, "retry", 0, ""));
    hop_event e = msg(HOP_SPAN_SIDE, 20, "op", 0, "");
    e.start_ns = 5;
    e.annotation = k == 0 ? "cs" : "";
    e.end_annotation = k == 0 ? "cr" : "";
    if (k == 1) {
      e.marks_ns[0] = 5;
      e.marks_ns[3] = 20;
    }
    add(a, e);
    assembler_flush(a);
    assembler_free(a);
  }
  assert_int_equal(v[0].n_annotations, 3);
  assert_string_equal(v[0].annotations[0], "cs");
  assert_string_equal(v[0].annotations[1], "retry");
  assert_string_equal(v[0].annotations[2], "cr");
  assert_memory_equal(&v[0], &v[1], sizeof(v[0]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(side_frames_and_marks_sort_after_notes),
      cmocka_unit_test(complete_trace_waits_for_grace),
      cmocka_unit_test(orphan_and_unfinished_are_reported),
      cmocka_unit_test(discards_mark_open_traces),
      cmocka_unit_test(a_loss_marks_only_its_hosts_traces),
      cmocka_unit_test(idle_time_follows_the_trace_clock),
      cmocka_unit_test(open_traces_stay_bounded),
      cmocka_unit_test(parent_cycles_are_cut_and_reported),
      cmocka_unit_test(vectored_kvs_become_tags),
      cmocka_unit_test(folded_hop_events_equal_annotation_plus_message),
      cmocka_unit_test(folded_start_and_end_equal_the_separate_events),
      cmocka_unit_test(span_side_equals_the_folded_events),
      cmocka_unit_test(impossible_probability_is_flagged),
      cmocka_unit_test(unfinished_root_is_not_at_epoch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
