/* The assembler on hostile trace shapes: it stays linear in the input and
 * never shows a wrong trace as a right one (long parent chains, cycles). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "assemble/assemble.h"

typedef struct seen {
  int traces;
  size_t spans, roots, orphans, deepest;
  bool incomplete;
} seen;

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
  if (t->n_spans > 0)
    s->deepest = depth_of(t->spans[t->n_spans - 1]);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(long_chain_resolves_in_one_pass),
      cmocka_unit_test(cycle_above_a_chain_is_cut_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
