/* The report's roll-ups (output/report_groups.h) on traces built by hand:
 * estimates weight each trace by 1/p and say "unknown" / "+?" rather than
 * invent one; a timed-out status is a timeout, any other an error; small
 * groups are marked; the rows stay bounded however many names arrive. */
#include <setjmp.h>
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

/* The sampled count and estimate on the row of `label` (2 if found). */
static int row(const char *text, const char *label, unsigned long long *n, char est[16]) {
  char at[64];
  snprintf(at, sizeof(at), "\n  %s ", label);
  const char *line = strstr(text, at);
  return line ? sscanf(line + strlen(at), "%llu %15s", n, est) : 0;
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
  assert_non_null(strstr(text, "traces recorded: 4; estimated issued: 12+? "));
  assert_non_null(strstr(text, "traces whose root recorded no sampling probability: 1 "));
  assert_non_null(strstr(text, "  0.25                            3                 12\n"));
  /* sampled est. est./s errors timeouts p50 p99 max, marked <100 */
  unsigned long long n, errors, timeouts;
  char est[16];
  assert_int_equal(row(text, "client op", &n, est), 2);
  assert_true(n == 4);
  assert_string_equal(est, "12+?");
  const char *osd = strstr(text, "  osd.0   ");
  assert_non_null(osd);
  assert_int_equal(sscanf(osd, " osd.0 %llu %15s %*s %llu %llu", &n, est, &errors, &timeouts), 4);
  assert_true(n == 4 && errors == 1 && timeouts == 1);
  assert_string_equal(est, "12+?");
  assert_non_null(strstr(osd, "6.0        6.0  <100\n"));
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
  assert_int_equal(row(text, "client op", &n, est), 2);
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
  span *children[1] = {&w.server};
  w.client.children = children;
  w.client.n_children = 1;
  w.server.parent = &w.client;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  obuf *out = obuf_new(f);
  output *o = output_report.open(out, NULL);
  assert_non_null(o);
  output_report.trace(o, &w.t);
  bt_source_stats src = {0};
  assembler_stats st = {.traces = 1, .spans = 2};
  assert_int_equal(output_report.close(o, &src, &st), 0);
  assert_int_equal(obuf_flush(out), 0);
  obuf_free(out);
  fclose(f);
  assert_non_null(strstr(text, "  started 1970-01-01T00:00:00.001000Z; largest network+queue gaps:\n"
                               "    request net+queue        2.0 us at +0.0 us  client -> osd.0 op"
                               "  (clock correction between the hosts: +5.000 us)\n"
                               "    reply net+queue          2.0 us at +8.0 us  client -> osd.0 op"));
  assert_non_null(strstr(text, "clock correction applied to span times: none"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(estimates_weight_by_one_over_p),
      cmocka_unit_test(unknown_is_never_a_number),
      cmocka_unit_test(rows_are_bounded),
      cmocka_unit_test(slowest_trace_shows_gaps_and_clock_correction),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
