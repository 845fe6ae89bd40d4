/* The report's critical path (output/report_critical.h) and its
 * aggregate (output/report_cpagg.h) on traces built by hand, with the
 * shares worked out on paper: a write whose primary waits for the slower
 * of two replicas; 99 such writes and one where a replica's service is
 * slow (the slowest 1 % is that one alone); weights of 1/p; a child
 * outside its parent clamped and counted; operations bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/report_cpagg.h"
#include "output/report_critical.h"
#include "read/event.h"
#include "write_trace.h"

#define P1 (UINT64_C(1) << 32)

/* The ns of a row (service [-> server] operation phase) of operation 0. */
static void shares(const cp_agg *a, const char *label, double *all, double *tail) {
  cp_op_summary s;
  cp_row *rows;
  size_t n;
  cp_agg_op(a, 0, &s, &rows, &n);
  *all = *tail = -1;
  for (size_t i = 0; i < n; i++) {
    char l[200];
    snprintf(l, sizeof(l), "%s%s%s %s %s", rows[i].service, rows[i].server ? " -> " : "",
             rows[i].server ? rows[i].server : "", rows[i].operation,
             cp_phase_names[rows[i].phase]);
    if (strcmp(l, label) == 0) {
      *all = rows[i].all_ns / s.e2e_ns;
      *tail = rows[i].tail_ns / s.tail_e2e_ns;
    }
  }
  free(rows);
}

static void sums_to_one(const cp_agg *a) {
  for (size_t o = 0; o < cp_agg_ops(a); o++) {
    cp_op_summary s;
    cp_row *rows;
    size_t n;
    cp_agg_op(a, o, &s, &rows, &n);
    double all = 0, tail = 0;
    for (size_t i = 0; i < n; i++) {
      all += rows[i].all_ns;
      tail += rows[i].tail_ns;
    }
    assert_true(all > s.e2e_ns * (1 - 1e-9) && all < s.e2e_ns * (1 + 1e-9));
    assert_true(tail > s.tail_e2e_ns * (1 - 1e-9) && tail < s.tail_e2e_ns * (1 + 1e-9));
    free(rows);
  }
}

/* The report's section, NUL-terminated (free it). */
static char *printed(const cp_agg *a) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  obuf *out = obuf_new(f);
  cp_agg_print(a, out);
  assert_int_equal(obuf_flush(out), 0);
  obuf_free(out);
  fclose(f);
  return text;
}

#define assert_near(x, want) assert_true((x) > (want)-1e-12 && (x) < (want) + 1e-12)

typedef struct seen {
  int64_t ns[CP_PHASES];
  int spans;
} seen;

static void on_span(void *user, const span *s, int depth, int64_t lo, int64_t hi) {
  (void)s, (void)depth, (void)lo, (void)hi;
  ((seen *)user)->spans++;
}

static void on_segment(void *user, const span *s, const span *server, int phase, int64_t ns) {
  (void)s, (void)server;
  ((seen *)user)->ns[phase] += ns;
}

/* One write: the slower replica (osd.2) is on the path, osd.1 is not. */
static void one_trace_by_phase(void **state) {
  (void)state;
  write w;
  make(&w, 0, P1);
  seen got = {0};
  cp_visitor v = {on_span, on_segment, &got};
  cp_stats st = {0};
  cp_scratch scratch = {0};
  assert_int_equal(cp_walk(&w.t, &v, &st, &scratch), 0);
  cp_scratch_free(&scratch);
  assert_int_equal(got.spans, 4); /* client, osd.0, its call to osd.2, osd.2 */
  assert_int_equal(got.ns[CP_CLIENT_QUEUE], 200);
  assert_int_equal(got.ns[CP_REQUEST], 100 + 50);
  assert_int_equal(got.ns[CP_SERVICE], 210 + 290);
  assert_int_equal(got.ns[CP_REPLY], 100 + 50);
  assert_int_equal(got.ns[CP_WAIT_CHILD], 0);
  assert_int_equal(st.clamped, 0);

  cp_agg *a = cp_agg_new();
  assert_int_equal(cp_agg_add(a, &w.t), 0);
  double all, tail;
  shares(a, "osd.2 replica_write service self time", &all, &tail);
  assert_near(all, 0.29);
  shares(a, "osd.0 -> osd.2 replica_write request net+queue", &all, &tail);
  assert_near(all, 0.05);
  shares(a, "client osd_write client queue", &all, &tail);
  assert_near(all, 0.2);
  shares(a, "osd.1 replica_write service self time", &all, &tail);
  assert_true(all < 0); /* never on the path */
  sums_to_one(a);
  cp_agg_free(a);
}

/* 99 writes and a slow one (osd.2 +1 ms): the slowest 1 % is that one. */
static void slowest_percent_is_the_slow_trace(void **state) {
  (void)state;
  cp_agg *a = cp_agg_new();
  write w;
  for (int i = 0; i < 100; i++) {
    make(&w, i == 42 ? 1000000 : 0, P1);
    assert_int_equal(cp_agg_add(a, &w.t), 0);
  }
  double all, tail;
  shares(a, "osd.2 replica_write service self time", &all, &tail);
  /* all: (99 * 290 + 1000290) / (99 * 1000 + 1001000); tail: the slow one */
  double want_all = (99.0 * 290 + 1000290) / (99.0 * 1000 + 1001000);
  assert_near(all, want_all);
  assert_near(tail, 1000290.0 / 1001000);
  shares(a, "osd.0 osd_write service self time", &all, &tail);
  assert_near(tail, 210.0 / 1001000);
  sums_to_one(a);
  cp_op_summary s;
  cp_row *rows;
  size_t n;
  cp_agg_op(a, 0, &s, &rows, &n);
  assert_int_equal(s.traces, 100);
  assert_near(s.tail_est, 1);
  assert_int_equal(rows[0].phase, CP_SERVICE); /* the largest share at p99 first */
  assert_string_equal(rows[0].service, "osd.2");
  free(rows);

  char *text = printed(a);
  assert_non_null(strstr(text, "operation osd_write: 100 traces (est. 100), "));
  assert_non_null(strstr(text, "     99.9%  osd.2 replica_write: service self time\n"));
  assert_non_null(strstr(text, "    100.0%      100.0%  total\n"));
  free(text);
  cp_agg_free(a);
}

/* A trace of p = 0.5 counts twice one of p = 1. */
static void weighted_by_one_over_p(void **state) {
  (void)state;
  cp_agg *a = cp_agg_new();
  write w;
  make(&w, 0, P1 / 2);
  assert_int_equal(cp_agg_add(a, &w.t), 0);
  make(&w, 1000, P1);
  assert_int_equal(cp_agg_add(a, &w.t), 0);
  double all, tail;
  shares(a, "osd.2 replica_write service self time", &all, &tail);
  double want = (2 * 290.0 + 1290) / (2 * 1000.0 + 2000);
  assert_near(all, want);
  sums_to_one(a);
  cp_agg_free(a);
}

/* A server span that starts before its client sent (clocks of two
 * hosts): clamped to its parent, counted, shares still whole. */
static void child_outside_parent_is_clamped(void **state) {
  (void)state;
  write w;
  make(&w, 0, P1);
  w.s2.start_ns -= 140; /* starts 90 ns before its client r2 */
  cp_agg *a = cp_agg_new();
  assert_int_equal(cp_agg_add(a, &w.t), 0);
  sums_to_one(a);
  double all, tail;
  shares(a, "osd.0 -> osd.2 replica_write request net+queue", &all, &tail);
  assert_true(all < 0); /* clamped away: no request phase left */
  shares(a, "osd.2 replica_write service self time", &all, &tail);
  assert_near(all, 0.34);
  char *text = printed(a);
  assert_non_null(strstr(text, "  1 child span(s) outside their parent (clocks of two hosts, or a"
                               " detached child): clamped to it, 0.1 us cut off"));
  free(text);
  cp_agg_free(a);
}

/* Hostile names: operations stay bounded, the rest is "(other)". */
static void operations_are_bounded(void **state) {
  (void)state;
  cp_agg *a = cp_agg_new();
  write w;
  char name[32];
  for (int i = 0; i < CPAGG_OPS + 50; i++) {
    make(&w, 0, P1);
    snprintf(name, sizeof(name), "op%d", i);
    w.c.name = name;
    assert_int_equal(cp_agg_add(a, &w.t), 0);
  }
  assert_int_equal(cp_agg_ops(a), CPAGG_OPS + 1);
  cp_op_summary s;
  cp_row *rows;
  size_t n;
  cp_agg_op(a, CPAGG_OPS, &s, &rows, &n);
  assert_string_equal(s.name, "(other)");
  assert_int_equal(s.traces, 50);
  free(rows);
  sums_to_one(a);
  cp_agg_free(a);
}

/* Times at int64's extremes (write_trace.h make_far): the rows stay
 * positive and add up to the end-to-end time, INT64_MAX. */
static void int64_extremes_add_up(void **state) {
  (void)state;
  far_trace f;
  make_far(&f, P1);
  cp_agg *a = cp_agg_new();
  assert_int_equal(cp_agg_add(a, &f.t), 0);
  cp_op_summary s;
  cp_row *rows;
  size_t n;
  cp_agg_op(a, 0, &s, &rows, &n);
  assert_true(s.e2e_ns == (double)INT64_MAX && s.tail_from_ns > 0);
  for (size_t i = 0; i < n; i++)
    assert_true(rows[i].all_ns > 0 && rows[i].tail_ns >= 0);
  free(rows);
  sums_to_one(a);
  cp_agg_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_trace_by_phase),
      cmocka_unit_test(slowest_percent_is_the_slow_trace),
      cmocka_unit_test(weighted_by_one_over_p),
      cmocka_unit_test(child_outside_parent_is_clamped),
      cmocka_unit_test(operations_are_bounded),
      cmocka_unit_test(int64_extremes_add_up),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
