/* The report's roll-ups (output/report_groups.h) on traces built by hand:
 * estimates weight each trace by 1/p and say "unknown" / ">=N" (a lower
 * bound) rather than invent a p; a timed-out status is a timeout, any
 * other an error; small groups are marked; the rows stay bounded however
 * many names arrive; the time spread puts each trace in the slice of its
 * start; per-hop rows carry sampled and estimated calls; slowest traces
 * that ran at one moment are said to. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hoptrace/error.h"
#include "output/output.h"
#include "output/report_groups.h"
#include "read/event.h"

/* A root client span and one server child, ending at +10 us and +6 us. */
typedef struct two {
  span client, server;
  span *spans[2], *roots[1];
  trace t;
} two;

static void make(two *w, uint64_t prob, const char *server, int32_t status) {
  memset(w, 0, sizeof(*w));
  w->client = (span){.id = 1, .name = "op", .service = "client", .start_ns = 1000000,
                     .end_ns = 1010000, .clock_bound_ns = -1, .kind = HOP_KIND_CLIENT,
                     .started = true, .ended = true};
  w->server = (span){.id = 2, .parent_id = 1, .name = "op", .service = server,
                     .start_ns = 1002000, .end_ns = 1008000, .clock_bound_ns = -1,
                     .status = status, .kind = HOP_KIND_SERVER, .started = true, .ended = true};
  w->spans[0] = &w->client;
  w->spans[1] = &w->server;
  w->roots[0] = &w->client;
  w->t = (trace){.spans = w->spans, .n_spans = 2, .roots = w->roots, .n_roots = 1,
                 .root_prob = prob};
}

/* The sampled count and estimate on the operation row of `label`, after
 * its client column (2 if found). */
static int row(const char *text, const char *label, unsigned long long *n, char est[16]) {
  char at[64];
  snprintf(at, sizeof(at), "\n  %s ", label);
  const char *line = strstr(text, at);
  return line ? sscanf(line + strlen(at), "%*s %llu %15s", n, est) : 0;
}

/* What the sections print, NUL-terminated (free it). */
static char *print(const report_groups *g) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  obuf *out = obuf_new(f);
  report_groups_print_source(g, out, 0);
  report_groups_print_rollups(g, out);
  assert_int_equal(obuf_flush(out), 0);
  obuf_free(out);
  fclose(f);
  return text;
}

static void estimates_weight_by_one_over_p(void **state) {
  (void)state;
  report_groups *g = report_groups_new();
  two w;
  for (int i = 0; i < 3; i++) { /* p = 0.25 */
    make(&w, UINT64_C(1) << 30, "osd.0", i == 0 ? HT_ETIMEDOUT : i == 1 ? HT_EPEERERROR : 0);
    assert_int_equal(report_groups_add(g, &w.t), 0);
  }
  make(&w, 0, "osd.0", 0); /* no probability recorded */
  assert_int_equal(report_groups_add(g, &w.t), 0);
  char *text = print(g);
  assert_non_null(strstr(text, "traces recorded: 4; estimated issued: at least 13 (12 from the 3"
                               " traces of known p, "));
  assert_non_null(strstr(text, "; + 1 traces of unknown p, counted once each)\n"));
  assert_non_null(strstr(text, "traces whose root recorded no sampling probability: 1 "));
  assert_non_null(strstr(text, "  0.25                            3                 12\n"));
  /* sampled est. est./s errors timeouts p50 p99 max, marked <100 */
  unsigned long long n, errors, timeouts;
  char est[16];
  assert_int_equal(row(text, "op", &n, est), 2);
  assert_true(n == 4);
  assert_string_equal(est, ">=13");
  char rate[16]; /* 13 at least, over the 10 us window */
  assert_int_equal(sscanf(strstr(text, "\n  op ") + 1, " op client %*u %*s %15s", rate), 1);
  assert_string_equal(rate, ">=1300000.0");
  const char *osd = strstr(text, "  osd.0   ");
  assert_non_null(osd);
  assert_int_equal(sscanf(osd, " osd.0 %llu %15s %*s %llu %llu", &n, est, &errors, &timeouts), 4);
  assert_true(n == 4 && errors == 1 && timeouts == 1);
  assert_string_equal(est, ">=13");
  assert_non_null(strstr(osd, "6.0        6.0  <100\n"));
  free(text);
  report_groups_free(g);
}

/* A root's probability outside (0, 1] (a hostile trace: p = 2, p =
 * 4.29e9, p = 0) is unknown, never a weight: 10 traces of p = 2 were
 * "estimated issued: 5", of p = 4.29e9 "0". */
static void impossible_probability_is_unknown(void **state) {
  (void)state;
  const uint64_t bad[] = {UINT64_C(1) << 33, (uint64_t)(4.29e9 * 4294967296.0), UINT64_MAX};
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    report_groups *g = report_groups_new();
    two w;
    for (int i = 0; i < 10; i++) {
      make(&w, bad[k], "osd.0", 0);
      assert_int_equal(report_groups_add(g, &w.t), 0);
    }
    assert_true(trace_weight(&w.t) == 0);
    char *text = print(g);
    assert_non_null(strstr(text, "traces recorded: 10; estimated issued: unknown"));
    assert_non_null(strstr(text, "impossible sampling probability (outside (0, 1]"));
    assert_non_null(strstr(text, "taken as unknown): 10\n"));
    unsigned long long n;
    char est[16];
    assert_int_equal(row(text, "op", &n, est), 2);
    assert_string_equal(est, "unknown");
    free(text);
    report_groups_free(g);
  }
  /* with traces of a real p: the impossible ones count once each */
  report_groups *g = report_groups_new();
  two w;
  make(&w, UINT64_C(1) << 31, "osd.0", 0); /* p = 0.5 */
  assert_int_equal(report_groups_add(g, &w.t), 0);
  make(&w, UINT64_C(1) << 33, "osd.0", 0);
  assert_int_equal(report_groups_add(g, &w.t), 0);
  char *text = print(g);
  assert_non_null(strstr(text, "estimated issued: at least 3 (2 from the 1 traces of known p"));
  assert_non_null(strstr(text, "taken as unknown): 1\n"));
  free(text);
  report_groups_free(g);
}

static void unknown_is_never_a_number(void **state) {
  (void)state;
  report_groups *g = report_groups_new();
  two w;
  make(&w, 0, "osd.0", 0);
  assert_int_equal(report_groups_add(g, &w.t), 0);
  char *text = print(g);
  assert_non_null(strstr(text, "estimated issued: unknown "));
  unsigned long long n;
  char est[16];
  assert_int_equal(row(text, "op", &n, est), 2);
  assert_true(n == 1);
  assert_string_equal(est, "unknown");
  free(text);
  report_groups_free(g);
}

static void rows_are_bounded(void **state) {
  (void)state;
  report_groups *g = report_groups_new();
  two w;
  char name[32];
  for (int i = 0; i < GROUPS_MAX + 44; i++) {
    snprintf(name, sizeof(name), "osd.%d", i);
    make(&w, UINT64_C(1) << 32, name, 0);
    assert_int_equal(report_groups_add(g, &w.t), 0);
  }
  char *text = print(g);
  const char *other = strstr(text, "  (other)  ");
  assert_non_null(other);
  unsigned long long n;
  assert_int_equal(sscanf(other, " (other) %llu", &n), 1);
  assert_true(n == 44);
  assert_null(strstr(text, "osd.256 "));
  assert_non_null(strstr(text, "osd.255 "));
  free(text);
  report_groups_free(g);
}

/* Moves all of w's times by ns. */
static void shift(two *w, int64_t ns) {
  w->client.start_ns += ns;
  w->client.end_ns += ns;
  w->server.start_ns += ns;
  w->server.end_ns += ns;
}

typedef struct slice {
  double from;
  unsigned long long n;
  char est[16], ratio[16];
} slice;

/* The time spread's rows into s (at most 16); how many, and its slice width. */
static int slices(const char *text, slice *s, double *width) {
  const char *at = strstr(text, "the window in 10 equal slices of ");
  assert_non_null(at);
  assert_int_equal(sscanf(at, "the window in 10 equal slices of %lf s", width), 1);
  at = strstr(at, "recorded/est.\n");
  assert_non_null(at);
  at += strlen("recorded/est.\n");
  int n = 0;
  while (n < 16 && sscanf(at, " %lf %llu %*f%% %15s %15s", &s[n].from, &s[n].n, s[n].est,
                          s[n].ratio) == 4) {
    n++;
    at = strchr(at, '\n') + 1;
  }
  return n;
}

/* 4 traces of p = 1/4 in the window's first second, 8 of p = 1 at
 * 5.1 .. 5.45 s, one of unknown p ending the 10 s window, added late
 * first (the bins must widen downwards): each lands in its own slice,
 * with its estimate and sampled fraction; every slice is as wide. */
static void time_spread_shows_when(void **state) {
  (void)state;
  report_groups *g = report_groups_new();
  two w;
  make(&w, 0, "osd.0", 0);
  shift(&w, INT64_C(10000000000) - 10000);
  assert_int_equal(report_groups_add(g, &w.t), 0);
  for (int i = 0; i < 8; i++) {
    make(&w, UINT64_C(1) << 32, "osd.0", 0);
    shift(&w, INT64_C(5100000000) + i * INT64_C(50000000));
    assert_int_equal(report_groups_add(g, &w.t), 0);
  }
  for (int i = 0; i < 4; i++) {
    make(&w, UINT64_C(1) << 30, "osd.0", 0);
    shift(&w, i * INT64_C(250000000));
    assert_int_equal(report_groups_add(g, &w.t), 0);
  }
  char *text = print(g);
  assert_non_null(strstr(text, "(10.000000 s, first span start to last span end)"));
  slice s[16];
  double width;
  int n = slices(text, s, &width);
  assert_int_equal(n, 10);
  assert_true(width >= 1.0 && width < 1.1);
  unsigned long long total = 0;
  for (int i = 0; i < n; i++) {
    total += s[i].n;
    /* equal slices, printed to 1 us, from the window's start to its end
     * (the first was shorter and the last ran past the end) */
    double step = s[i].from - (i > 0 ? s[i - 1].from : 0);
    assert_true(i == 0 ? step == 0 : step > width - 2e-6 && step < width + 2e-6);
    bool empty = i != 0 && i != 5 && i != 9;
    if (empty) {
      assert_true(s[i].n == 0);
      assert_string_equal(s[i].est, "0");
      assert_string_equal(s[i].ratio, "-");
    }
  }
  assert_true(total == 13);
  assert_true(s[9].from + width > 10.0 - 2e-6 && s[9].from + width < 10.0 + 2e-6);
  assert_true(s[0].from == 0 && s[0].n == 4);
  assert_string_equal(s[0].est, "16");
  assert_string_equal(s[0].ratio, "0.25");
  assert_true(s[5].from <= 5.1 && s[5].from + width > 5.45 && s[5].n == 8);
  assert_string_equal(s[5].est, "8");
  assert_string_equal(s[5].ratio, "1");
  assert_true(s[9].from <= 9.99999 && s[9].n == 1);
  assert_string_equal(s[9].est, "unknown");
  assert_string_equal(s[9].ratio, "-");
  free(text);
  report_groups_free(g);
}

/* The whole report (output_report) of traces into text (free it). */
static char *report(const trace *const *t, size_t n) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  obuf *out = obuf_new(f);
  output *o = output_report.open(out, NULL);
  assert_non_null(o);
  for (size_t i = 0; i < n; i++)
    output_report.trace(o, t[i]);
  bt_source_stats src = {0};
  assembler_stats st = {.traces = n, .spans = 2 * n};
  assert_int_equal(output_report.close(o, &src, &st), 0);
  assert_int_equal(obuf_flush(out), 0);
  obuf_free(out);
  fclose(f);
  return text;
}

/* Operations and servers listed by their time summed 1/p each, largest
 * first, whatever order they came in; an operation named by its root span
 * alone, the client's service in its own column. */
static void rows_by_time_largest_first(void **state) {
  (void)state;
  report_groups *g = report_groups_new();
  assert_non_null(g);
  two w;
  make(&w, UINT64_C(1) << 32, "osd.1", 0); /* quick: 10 us, serves 6 us */
  w.client.name = "osd_read";
  assert_int_equal(report_groups_add(g, &w.t), 0);
  make(&w, UINT64_C(1) << 31, "osd.0", 0); /* slow: 30 us at p = 0.5, serves 20 us */
  w.client.name = "osd_write";
  w.client.end_ns += 20000;
  w.server.end_ns += 14000;
  assert_int_equal(report_groups_add(g, &w.t), 0);
  make(&w, UINT64_C(1) << 32, "osd.0", 0); /* the same name from another client */
  w.client.name = "osd_write";
  w.client.service = "client.1";
  assert_int_equal(report_groups_add(g, &w.t), 0);
  char *text = print(g);
  const char *write = strstr(text, "\n  osd_write "), *read = strstr(text, "\n  osd_read ");
  const char *osd0 = strstr(text, "\n  osd.0 "), *osd1 = strstr(text, "\n  osd.1 ");
  assert_true(write != NULL && read != NULL && write < read);
  assert_true(osd0 != NULL && osd1 != NULL && osd0 < osd1);
  assert_non_null(strstr(text, "\n  osd_read                      client       "));
  assert_non_null(strstr(text, "\n  osd_write                     (several)    "));
  assert_null(strstr(text, "client osd_"));
  free(text);
  report_groups_free(g);
}

static void link_child(two *w) {
  w->client.children = w->spans + 1;
  w->client.n_children = 1;
  w->server.parent = &w->client;
}

/* A hop's row group says its calls sampled and estimated by 1/p, a lower
 * bound once a call of unknown p is among them, "unknown" when all are. */
static void hop_rows_carry_estimates(void **state) {
  (void)state;
  two w[5];
  const trace *t[5];
  for (int i = 0; i < 5; i++) {
    make(&w[i], i < 3 ? UINT64_C(1) << 30 : 0, i < 4 ? "osd.0" : "osd.9", 0);
    link_child(&w[i]);
    t[i] = &w[i].t;
  }
  char *text = report(t, 3);
  assert_non_null(strstr(text, "\nclient -> osd.0 op\n  calls: 3 sampled, est. 12; 100.0 % of the operation's"
                               " end-to-end time\n"
                               "  request net+queue           3 "));
  free(text);
  text = report(t, 5);
  assert_non_null(strstr(text, "\nclient -> osd.0 op\n  calls: 4 sampled, est. >=13; 92.9 % of the"
                               " operation's end-to-end time\n"));
  assert_non_null(strstr(text, "\nclient -> osd.9 op\n  calls: 1 sampled, est. unknown; 7.1 % of the"
                               " operation's end-to-end time\n"));
  free(text);
}

/* The whole report on one trace across two hosts whose clocks were
 * aligned: the slowest trace's gaps say when they happened and the
 * correction between the hosts' clocks. */
static void slowest_trace_shows_gaps_and_clock_correction(void **state) {
  (void)state;
  two w;
  make(&w, UINT64_C(1) << 32, "osd.0", 0);
  w.client.hostname = "a";
  w.server.hostname = "b";
  w.client.clock_bound_ns = 100;
  w.server.clock_shift_ns = 5000;
  w.server.clock_bound_ns = 200;
  link_child(&w);
  const trace *t[1] = {&w.t};
  char *text = report(t, 1);
  assert_non_null(strstr(text, "  started 1970-01-01T00:00:00.001000Z; largest network+queue gaps:\n"
                               "    request net+queue        2.0 us at +0.0 us  client -> osd.0 op"
                               "  (clock correction between the hosts: +5.000 us)\n"
                               "    reply net+queue          2.0 us at +8.0 us  client -> osd.0 op"));
  assert_non_null(strstr(text, "clock correction applied to span times: none"));
  free(text);
}

/* The slowest traces all running at one moment: the report says so (the
 * machine, not a hop); apart in time, it says nothing. */
static void slowest_at_one_moment_said(void **state) {
  (void)state;
  two w[3];
  const trace *t[3];
  for (int i = 0; i < 3; i++) {
    make(&w[i], UINT64_C(1) << 32, "osd.0", 0);
    int64_t shift = i * 3000; /* each starts 3 us after, ends inside the others */
    w[i].client.start_ns += shift;
    w[i].server.start_ns += shift;
    link_child(&w[i]);
    t[i] = &w[i].t;
  }
  char *text = report(t, 3);
  assert_non_null(strstr(text, "\nall 3 were running at one moment, 1970-01-01T00:00:00.001006Z"
                               " (their starts within 6.0 us): slow together, so look at the"
                               " machine"));
  free(text);
  w[2].client.start_ns = w[2].server.start_ns = 2000000; /* after the others ended */
  w[2].client.end_ns = 2010000;
  w[2].server.end_ns = 2008000;
  text = report(t, 3);
  assert_null(strstr(text, "at one moment"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(estimates_weight_by_one_over_p),
      cmocka_unit_test(unknown_is_never_a_number),
      cmocka_unit_test(impossible_probability_is_unknown),
      cmocka_unit_test(rows_are_bounded),
      cmocka_unit_test(rows_by_time_largest_first),
      cmocka_unit_test(time_spread_shows_when),
      cmocka_unit_test(hop_rows_carry_estimates),
      cmocka_unit_test(slowest_trace_shows_gaps_and_clock_correction),
      cmocka_unit_test(slowest_at_one_moment_said),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
