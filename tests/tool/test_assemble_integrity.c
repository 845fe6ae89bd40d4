/* The assembler on hostile trace shapes: it stays linear in the input and
 * never shows a wrong trace as a right one (long parent chains, cycles,
 * span ids used twice, spans ending before they start). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/assemble.h"
#include "output/output.h"
#include "export_text.h"

typedef struct seen {
  int traces;
  size_t spans, roots, orphans, deepest, duplicate_ids, backwards;
  size_t tagged_duplicate; /* spans carrying SPAN_ID_DUPLICATE_KEY */
  int64_t back_ns;         /* the last END_BEFORE_START_KEY value */
  bool incomplete;
  char zipkin[4096];       /* the trace's Zipkin export, when small */
} seen;

static const tag *find_tag(const span *s, const char *key) {
  for (uint32_t i = 0; i < s->n_tags; i++)
    if (strcmp(s->tags[i].key, key) == 0)
      return &s->tags[i];
  return NULL;
}

static void zipkin_of(const trace *t, char *buf, size_t cap) {
  char *text = export_text(&output_zipkin, t);
  snprintf(buf, cap, "%s", text);
  free(text);
}

/* Depth of s below its root, walking one parent at a time: the test's
 * own check that the chain came out whole (the deepest span only). */
static size_t depth_of(const span *s) {
  size_t d = 0;
  for (const span *p = s->parent; p != NULL; p = p->parent)
    d++;
  return d;
}

static void on_ready(void *user, const trace *t) {
  seen *s = user;
  s->traces++;
  s->spans = t->n_spans;
  s->roots = t->n_roots;
  s->orphans = t->orphans;
  s->incomplete = t->incomplete;
  s->duplicate_ids = t->duplicate_ids;
  s->backwards = t->backwards;
  if (t->n_spans > 0)
    s->deepest = depth_of(t->spans[t->n_spans - 1]);
  for (size_t i = 0; i < t->n_spans; i++) {
    const tag *g;
    s->tagged_duplicate += find_tag(t->spans[i], SPAN_ID_DUPLICATE_KEY) != NULL;
    if ((g = find_tag(t->spans[i], END_BEFORE_START_KEY)) != NULL)
      s->back_ns = g->int_value;
  }
  if (t->n_spans <= 4)
    zipkin_of(t, s->zipkin, sizeof(s->zipkin));
}

static hop_event side(uint64_t trace, uint64_t id, uint64_t parent, int64_t start, int64_t end) {
  hop_event e = {.kind = HOP_SPAN_SIDE, .ts_ns = end, .start_ns = start, .trace_lo = trace,
                 .span_id = id, .parent_id = parent, .vpid = 1, .vtid = 1, .procname = "p",
                 .hostname = "h", .name = "op", .service = "svc", .endpoint = "",
                 .annotation = "", .end_annotation = "", .peer = ""};
  return e;
}

static void add(assembler *a, hop_event e) { assert_int_equal(assembler_add(a, &e), 0); }

/* Each span the previous one's child, 300,000 deep: a cycle check that
 * walks to the root from every span makes 4.5e10 steps (the ctest
 * timeout ends it); one pass makes 300,000. */
static void long_chain_resolves_in_one_pass(void **state) {
  (void)state;
  enum { N = 300000 };
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  for (uint64_t i = 1; i <= N; i++)
    add(a, side(5, i, i - 1, (int64_t)i, (int64_t)(2 * N - i)));
  assembler_flush(a);
  assert_int_equal(s.traces, 1);
  assert_int_equal(s.spans, N);
  assert_int_equal(s.roots, 1);
  assert_int_equal(s.deepest, N - 1);
  assert_false(s.incomplete);
  assembler_free(a);
}

/* A cycle hanging under a chain: the cycle is cut once, where it closed;
 * the spans below it keep their parents. */
static void cycle_above_a_chain_is_cut_once(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  add(a, side(6, 10, 12, 1, 100)); /* 10 -> 12 -> 11 -> 10 */
  add(a, side(6, 11, 10, 2, 90));
  add(a, side(6, 12, 11, 3, 80));
  for (uint64_t i = 1; i <= 5; i++) /* 1 -> 10, 2 -> 1, ... */
    add(a, side(6, i, i == 1 ? 10 : i - 1, (int64_t)(10 + i), 50));
  assembler_flush(a);
  assert_int_equal(s.traces, 1);
  assert_int_equal(s.spans, 8);
  assert_int_equal(s.roots, 1);
  assert_int_equal(s.orphans, 1);
  assert_int_equal(s.deepest, 7); /* span 5: under 4, 3, 2, 1 and the cut cycle's 3 */
  assert_true(s.incomplete);
  assembler_free(a);
}

/* 100,000 span sides with one span id: 100,000 spans, each flagged and
 * counted, never one span standing for all of them. */
static void spans_sharing_an_id_are_kept_apart(void **state) {
  (void)state;
  enum { N = 100000 };
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  add(a, side(8, 1, 0, 0, 10 * N));
  for (int64_t i = 0; i < N; i++)
    add(a, side(8, 2, 1, 1 + 2 * i, 2 + 2 * i));
  assembler_flush(a);
  assert_int_equal(s.traces, 1);
  assert_int_equal(s.spans, N + 1);
  assert_int_equal(s.duplicate_ids, N);
  assert_int_equal(s.tagged_duplicate, N);
  assert_int_equal(assembler_get_stats(a)->duplicate_id_spans, N);
  assert_int_equal(assembler_get_stats(a)->spans, N + 1);
  assembler_free(a);
}

/* Interleaved starts and ends of one id: the ends go to the latest span,
 * the earlier one is left unfinished and the trace incomplete. */
static void interleaved_duplicates_leave_the_trace_incomplete(void **state) {
  (void)state;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  hop_event start = side(9, 3, 0, 0, 0);
  start.kind = HOP_SPAN_START;
  hop_event end = start;
  end.kind = HOP_SPAN_END;
  start.ts_ns = 1, add(a, start);
  start.ts_ns = 2, add(a, start);
  end.ts_ns = 3, add(a, end);
  end.ts_ns = 4, add(a, end);
  assembler_flush(a);
  assert_int_equal(s.spans, 2);
  assert_int_equal(s.duplicate_ids, 2);
  assert_true(s.incomplete);
  assembler_free(a);
}

/* A span ending 5,000 s before it starts: flagged with how far back,
 * counted, and Zipkin writes no duration rather than a false 1 us. */
static void span_ending_before_its_start_is_flagged(void **state) {
  (void)state;
  const int64_t S = 1000000000;
  seen s = {0};
  assembler *a = assembler_new(on_ready, &s, 0, 0);
  add(a, side(10, 1, 0, 100000 * S, 100000 * S + 5));
  add(a, side(10, 2, 1, 100000 * S + 1, 95000 * S + 1));
  assembler_flush(a);
  assert_int_equal(s.traces, 1);
  assert_int_equal(s.backwards, 1);
  assert_int_equal(s.back_ns, 5000 * S);
  assert_int_equal(assembler_get_stats(a)->backwards_spans, 1);
  assert_non_null(strstr(s.zipkin, "\"" END_BEFORE_START_KEY "\":\"5000000000000\""));
  const char *child = strstr(s.zipkin, "\"id\":\"0000000000000002\"");
  assert_non_null(child);
  const char *next = strstr(child, "\n");
  const char *dur = strstr(child, "\"duration\"");
  assert_true(dur == NULL || (next != NULL && dur > next));
  assembler_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(long_chain_resolves_in_one_pass),
      cmocka_unit_test(cycle_above_a_chain_is_cut_once),
      cmocka_unit_test(spans_sharing_an_id_are_kept_apart),
      cmocka_unit_test(interleaved_duplicates_leave_the_trace_incomplete),
      cmocka_unit_test(span_ending_before_its_start_is_flagged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
