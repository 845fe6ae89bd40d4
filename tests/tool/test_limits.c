/* The tool's memory limits (read/limits.h) on synthetic events: past
 * each, what is dropped is counted, the traces it touched are tagged on
 * their root (and incomplete when a part is gone), and nothing grows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/assemble.h"
#include "output/output.h"
#include "read/limits.h"
#include "read/names.h"

#define MS 1000000ll

static int reset(void **state) {
  (void)state;
  ht_limits = (tool_limits)TOOL_LIMITS_DEFAULT;
  ht_drops = (tool_drops){0};
  return 0;
}

typedef struct seen {
  int traces, incomplete;
  size_t name_len; /* the first trace's first span's name */
  char root_tags[8][512]; /* the first traces' root tags, "key=value;..." */
  char why[256];          /* the first trace's incomplete reason */
} seen;

static void on_ready(void *user, const trace *t) {
  seen *s = user;
  int i = s->traces++;
  s->incomplete += t->incomplete;
  if (i == 0 && t->n_spans > 0)
    s->name_len = strlen(t->spans[0]->name);
  if (i == 0)
    trace_incomplete_reason(t, s->why, sizeof(s->why));
  if (i >= 8 || t->n_roots == 0)
    return;
  const span *root = t->roots[0];
  size_t n = 0;
  for (uint32_t k = 0; k < root->n_tags && n < sizeof(s->root_tags[i]); k++) {
    const tag *g = &root->tags[k];
    if (g->is_int)
      n += (size_t)snprintf(s->root_tags[i] + n, sizeof(s->root_tags[i]) - n, "%s=%lld;",
                            g->key, (long long)g->int_value);
    else
      n += (size_t)snprintf(s->root_tags[i] + n, sizeof(s->root_tags[i]) - n, "%s=%.8s;",
                            g->key, g->str_value);
  }
}

/* A whole span side (started and ended) of trace `trace`. */
static hop_event side(int64_t ts, uint64_t trace, uint64_t span, uint64_t parent) {
  return (hop_event){.kind = HOP_SPAN_SIDE, .ts_ns = ts, .start_ns = ts - 1,
                     .trace_lo = trace, .span_id = span, .parent_id = parent, .vpid = 1,
                     .vtid = 1, .procname = "p", .hostname = "h", .name = "op",
                     .service = "svc", .endpoint = "", .peer = "", .annotation = "",
                     .end_annotation = ""};
}

static void add(assembler *a, hop_event e) { assert_int_equal(assembler_add(a, &e), 0); }

/* The end of the input: one trace written, incomplete or not. */
static void one_trace_written(assembler *a, const seen *s, int incomplete) {
  assembler_flush(a);
  assert_int_equal(s->traces, 1);
  assert_int_equal(s->incomplete, incomplete);
}

/* Past --max-open-traces the least recently active trace is written
 * before its grace: a complete one whole, an incomplete one marked. */
static void too_many_open_traces_are_written_early(void **state) {
  (void)state;
  ht_limits.open_traces = 2;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 2000 * MS, 30000 * MS);
  add(a, side(1, 1, 1, 0));     /* trace 1: complete */
  add(a, side(2, 2, 2, 99));    /* trace 2: its parent not yet there */
  add(a, side(3, 3, 3, 0));     /* a third: trace 1 goes, whole */
  assert_int_equal(s.traces, 1);
  assert_int_equal(s.incomplete, 0);
  assert_null(strstr(s.root_tags[0], "hoptrace.limit"));
  add(a, side(4, 4, 4, 0));     /* a fourth: trace 2 goes, incomplete */
  assert_int_equal(s.traces, 2);
  assert_int_equal(s.incomplete, 1);
  assert_non_null(strstr(s.root_tags[1], "hoptrace.limit.written_early="));
  assert_int_equal(ht_drops.early_traces, 2);
  assert_int_equal(ht_drops.early_incomplete, 1);
  assert_true(limits_dropped());
  assembler_flush(a);
  assert_int_equal(s.traces, 4);
  assert_int_equal(assembler_get_stats(a)->open_traces_peak, 3);
  assembler_free(a);
}

static void count_emitted(void *user, const trace *t) {
  (void)t;
  (*(int *)user)++;
}

/* The emitted callback sees every trace handed out, those written early
 * past a limit too (a follower of snapshots remembers them as written),
 * and none the keep callback declined. */
static bool keep_odd(void *user, const trace *t) {
  (void)user;
  return t->trace_lo % 2 == 1;
}

static void emitted_sees_early_traces(void **state) {
  (void)state;
  ht_limits.open_traces = 2;
  seen s = {0};
  int emitted = 0;
  assembler *a = assembler_new(on_ready, &s, 2000 * MS, 30000 * MS);
  assembler_set_emitted(a, count_emitted, &emitted);
  assembler_set_keep(a, keep_odd, NULL);
  add(a, side(1, 1, 1, 0));
  add(a, side(2, 2, 2, 0));
  add(a, side(3, 3, 3, 0)); /* trace 1 written early */
  assert_int_equal(emitted, 1);
  assert_int_equal(s.traces, 1);
  add(a, side(4, 5, 5, 0)); /* trace 2 declined: not emitted */
  assert_int_equal(emitted, 1);
  assembler_flush(a);
  assert_int_equal(emitted, 3);
  assert_int_equal(s.traces, 3);
  assembler_free(a);
}

/* Past --max-trace-spans a trace's new spans are dropped: counted, the
 * trace incomplete, its root says how many. */
static void spans_past_a_traces_limit_are_dropped(void **state) {
  (void)state;
  ht_limits.trace_spans = 3;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  add(a, side(10, 7, 1, 0));
  for (uint64_t i = 2; i <= 10; i++)
    add(a, side(10 + (int64_t)i, 7, i, 1));
  one_trace_written(a, &s, 1);
  assert_int_equal(assembler_get_stats(a)->spans, 3);
  assert_non_null(strstr(s.root_tags[0], "hoptrace.limit.dropped_spans=7;"));
  assert_string_equal(s.why, "7 span event(s) dropped past --max-trace-spans");
  assert_int_equal(ht_drops.trace_spans, 7);
  assembler_free(a);
}

/* A string longer than --max-string is cut where a UTF-8 sequence
 * starts, counted, and the root says how many of its trace's were. */
static void long_strings_are_cut(void **state) {
  (void)state;
  ht_limits.string_bytes = 64;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  hop_event e = side(10, 5, 1, 0);
  char name[80];
  memset(name, 'a', 63);
  memcpy(name + 63, "\xc3\xa9xyz", 6); /* the cut falls inside the é */
  e.name = name;
  add(a, e);
  one_trace_written(a, &s, 0); /* every span there */
  assert_non_null(strstr(s.root_tags[0], "hoptrace.limit.strings_cut=1;"));
  assert_int_equal(ht_drops.strings, 1);
  assert_int_equal(s.name_len, 63);
  assembler_free(a);
}

static hop_event desc(uint32_t id, int64_t vpid, const char *name) {
  return (hop_event){.kind = HOP_DESC, .hostname = "h", .vpid = vpid, .procname = "",
                     .desc_id = id, .name = name, .service = "svc", .endpoint = ""};
}

static void put(names *n, hop_event e) { assert_int_equal(names_apply(n, &e), 0); }

/* The name tables: past --max-names a new entry is not kept (those kept
 * stay, and can be written again), an id no span can name never is. */
static void name_tables_stay_bounded(void **state) {
  (void)state;
  ht_limits.names = 3;
  names *n = names_new();
  assert_non_null(n);
  put(n, desc(1, 1, "a"));
  put(n, desc(2, 1, "b"));
  put(n, desc(3, 1, "c"));
  put(n, desc(4, 1, "d"));       /* past the limit */
  put(n, desc(2, 1, "b2"));      /* written again: replaces, no new entry */
  put(n, desc(70000, 1, "big")); /* above 16 bits */
  assert_int_equal(ht_drops.names, 2);
  hop_event e = {.kind = HOP_SPAN_SIDE, .hostname = "h", .vpid = 1, .procname = "x",
                 .desc_id = 2, .span_id = 1, .trace_lo = 1};
  assert_int_equal(names_apply(n, &e), 1);
  assert_string_equal(e.name, "b2");
  names_free(n);
}

/* Span sides waiting for their names count as open spans: past the
 * limit a side goes on unnamed at once (counted), never held. */
static void sides_waiting_for_names_stay_bounded(void **state) {
  (void)state;
  ht_limits.open_spans = 2;
  names *n = names_new();
  assert_non_null(n);
  for (uint64_t i = 1; i <= 3; i++) {
    hop_event e = {.kind = HOP_SPAN_SIDE, .hostname = "h", .vpid = 1, .procname = "x",
                   .desc_id = 9, .span_id = i, .trace_lo = 1};
    assert_int_equal(names_apply(n, &e), i <= 2 ? 0 : 1);
  }
  assert_int_equal(names_unresolved(n), 1);
  names_free(n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(too_many_open_traces_are_written_early, reset),
      cmocka_unit_test_setup(emitted_sees_early_traces, reset),
      cmocka_unit_test_setup(spans_past_a_traces_limit_are_dropped, reset),
      cmocka_unit_test_setup(long_strings_are_cut, reset),
      cmocka_unit_test_setup(name_tables_stay_bounded, reset),
      cmocka_unit_test_setup(sides_waiting_for_names_stay_bounded, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
