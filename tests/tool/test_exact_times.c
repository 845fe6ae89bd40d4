/* The exports' times from integer ns (epoch scale, negative, the int64
 * limits): Chrome's exact to the ns, Zipkin's microseconds covering the
 * span and its annotations. Chrome's spans of one thread that partly
 * overlap (concurrent requests, sibling replica writes) go to separate
 * tracks: no two complete events of a (pid, tid) partly overlap, each
 * annotation on its span's track and inside it. The real exporters write
 * to a memory stream; their text is read back here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/chrome_lanes.h"
#include "output/json.h"
#include "output/output.h"

/* "-12.345" -> -12345 (ns); exactly three decimals or the test fails. */
static int64_t us_text_ns(const char *p) {
  int neg = *p == '-';
  p += neg;
  int64_t v = 0;
  for (; *p >= '0' && *p <= '9'; p++)
    v = v * 10 + (*p - '0');
  assert_int_equal(*p, '.');
  for (int i = 1; i <= 3; i++) {
    assert_true(p[i] >= '0' && p[i] <= '9');
    v = v * 10 + (p[i] - '0');
  }
  assert_false(p[4] >= '0' && p[4] <= '9');
  return neg ? -v : v;
}

static const char *after(const char *line, const char *key) {
  const char *p = strstr(line, key);
  assert_non_null(p);
  return p + strlen(key);
}

static char *ns_text(int64_t ns) {
  char *text = NULL;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  obuf *o = obuf_new(f);
  json_ns_as_us(o, ns);
  obuf_flush(o);
  obuf_free(o);
  fclose(f);
  return text;
}

static void ns_are_written_exactly(void **state) {
  (void)state;
  static const struct {
    int64_t ns;
    const char *text;
  } cases[] = {{0, "0.000"},
               {1, "0.001"},
               {-1, "-0.001"},
               {999, "0.999"},
               {-1000, "-1.000"},
               {1795560768195745031, "1795560768195745.031"},
               {INT64_MAX, "9223372036854775.807"},
               {INT64_MIN, "-9223372036854775.808"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *text = ns_text(cases[i].ns);
    assert_string_equal(text, cases[i].text);
    if (cases[i].ns != INT64_MIN) /* its magnitude is not an int64 */
      assert_true(us_text_ns(text) == cases[i].ns);
    free(text);
  }
}

static void lanes_keep_nesting_and_split_partial_overlaps(void **state) {
  (void)state;
  span root = {.id = 1}, c1 = {.id = 2, .parent = &root}, c2 = {.id = 3, .parent = &root};
  span g = {.id = 4, .parent = &c1}, other = {.id = 5}, early = {.id = 6, .parent = &root};
  span next = {.id = 7}, in_next = {.id = 8, .parent = &next};
  chrome_lanes l = {0};
  chrome_lanes_next_trace(&l);
  assert_int_equal(chrome_lane_place(&l, 1, 7, &root, 0, 100), 0);
  assert_int_equal(chrome_lane_place(&l, 1, 7, &c1, 10, 50), 0);   /* in its parent */
  assert_int_equal(chrome_lane_place(&l, 1, 7, &c2, 20, 60), 1);   /* partly overlaps c1 */
  assert_int_equal(chrome_lane_place(&l, 1, 7, &g, 30, 40), 0);    /* in its parent c1 */
  assert_int_equal(chrome_lane_place(&l, 1, 7, &other, 55, 58), 2); /* in root, not its child */
  assert_int_equal(chrome_lane_place(&l, 1, 7, &early, 5, 8), 3);  /* before every lane's latest */
  assert_int_equal(chrome_lane_place(&l, 1, 7, &next, 100, 200), 0); /* after them all */
  assert_int_equal(chrome_lane_place(&l, 1, 8, &c2, 20, 60), 0);   /* another thread */
  assert_int_equal(chrome_lane_place(&l, 1, 7, &in_next, 150, 150), 0); /* zero length */
  chrome_lanes_next_trace(&l); /* ids of another trace are no ancestors */
  assert_int_equal(chrome_lane_place(&l, 1, 7, &in_next, 160, 170), 1);
  assert_true(l.forced == 0);
  /* Every lane full: the last one restarts, counted. */
  for (int i = 0; i < CHROME_LANES_MAX; i++)
    assert_int_equal(chrome_lane_place(&l, 2, 9, &other, 1000 - i, 2000 + i), i);
  assert_int_equal(chrome_lane_place(&l, 2, 9, &other, -100, -99), CHROME_LANES_MAX - 1);
  assert_true(l.forced == 1);
  assert_true(chrome_lane_tid(4194303, CHROME_LANES_MAX - 1) <= UINT32_MAX);
  assert_true(chrome_lane_tid(4194303, 1) > 4194303);
  assert_true(chrome_lane_tid(5, 0) == 5);
  chrome_lanes_free(&l);
}

/* The real exporter's document for one trace. */
static char *export_doc(const output_format *format, const trace *t) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  obuf *ob = obuf_new(f);
  output *o = format->open(ob, &(output_info){0});
  assert_non_null(o);
  format->trace(o, t);
  assert_int_equal(format->close(o, &(bt_source_stats){0}, &(assembler_stats){0}), 0);
  assert_int_equal(obuf_flush(ob), 0);
  obuf_free(ob);
  fclose(f);
  return text;
}

/* One thread's spans as a messenger makes them: two concurrent requests,
 * a write whose two replica writes run at once, a span before the epoch. */
#define N_SPANS 8
static const struct {
  int64_t start, end;
  int parent; /* index, -1: root */
} shape[N_SPANS] = {
    {1795560768195745031, 1795560768195778601, -1}, /* request A */
    {1795560768195750000, 1795560768195790999, -1}, /* request B, overlaps A */
    {1795560768195752001, 1795560768195760002, 0},  /* in A */
    {1795560768195800000, 1795560768195900000, -1}, /* write */
    {1795560768195810000, 1795560768195850001, 3},  /* replica 1 */
    {1795560768195810000, 1795560768195850000, 3},  /* replica 2, same start */
    {1795560768195820000, 1795560768195860000, 3},  /* replica 3, partly */
    {-1501, -1, -1},
};

static void export_has_exact_times_and_no_partial_overlap(void **state) {
  (void)state;
  span spans[N_SPANS];
  span *ptrs[N_SPANS];
  annotation ann[N_SPANS][2];
  for (int i = 0; i < N_SPANS; i++) {
    ann[i][0] = (annotation){shape[i].start, "cs"};
    ann[i][1] = (annotation){shape[i].end, "cr"};
    spans[i] = (span){.id = 0x100u + (uint64_t)i, .name = "op", .service = "osd.0",
                      .endpoint = "", .procname = "p", .start_ns = shape[i].start,
                      .end_ns = shape[i].end, .clock_bound_ns = -1, .annotations = ann[i],
                      .vpid = 10, .vtid = 11, .n_annotations = 2, .started = true, .ended = true};
    ptrs[i] = &spans[i];
  }
  for (int i = 0; i < N_SPANS; i++)
    if (shape[i].parent >= 0) {
      spans[i].parent = &spans[shape[i].parent];
      spans[i].parent_id = spans[i].parent->id;
    }
  trace t = {.trace_lo = 1, .spans = ptrs, .n_spans = N_SPANS};
  char *text = export_doc(&output_chrome, &t), *copy = strdup(text);
  assert_non_null(copy);
  /* times are written from the document's origin (otherData), in full */
  assert_non_null(strstr(text, "\"time_origin_unix_ns\":\""));
  int64_t origin = strtoll(after(text, "\"time_origin_unix_ns\":\""), NULL, 10);
  int64_t tid[N_SPANS], start[N_SPANS], end[N_SPANS];
  int seen = 0, instants = 0;
  for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    if (strstr(line, "\"ph\":\"X\"") != NULL) {
      int i = (int)(strtoull(after(line, "\"span_id\":\""), NULL, 16) - 0x100u);
      assert_true(i >= 0 && i < N_SPANS);
      tid[i] = strtoll(after(line, "\"tid\":"), NULL, 10);
      start[i] = origin + us_text_ns(after(line, "\"ts\":"));
      end[i] = start[i] + us_text_ns(after(line, "\"dur\":"));
      assert_true(start[i] == shape[i].start && end[i] == shape[i].end);
      seen++;
    }
  }
  assert_int_equal(seen, N_SPANS);
  for (int a = 0; a < N_SPANS; a++)
    for (int b = 0; b < N_SPANS; b++)
      if (a != b && tid[a] == tid[b] && start[a] < start[b] && start[b] < end[a] &&
          end[a] < end[b])
        fail_msg("spans %d and %d partly overlap on tid %lld", a, b, (long long)tid[a]);
  /* One inside another on a track is drawn as its child: only if it is. */
  for (int a = 0; a < N_SPANS; a++)
    for (int b = 0; b < N_SPANS; b++)
      if (a != b && tid[a] == tid[b] && start[a] <= start[b] && end[b] <= end[a] &&
          (start[a] != start[b] || end[a] != end[b]) && shape[b].parent != a)
        fail_msg("span %d drawn inside span %d, not its parent", b, a);
  assert_true(tid[0] == 11 && tid[1] != 11); /* the thread keeps the first */
  /* Annotations: on the span's track, inside it */
  for (char *line = strtok(copy, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    if (strstr(line, "\"ph\":\"i\"") == NULL)
      continue;
    int i = (int)(strtoull(after(line, "\"span_id\":\""), NULL, 16) - 0x100u);
    int64_t at = origin + us_text_ns(after(line, "\"ts\":"));
    assert_true(strtoll(after(line, "\"tid\":"), NULL, 10) == tid[i]);
    assert_true(at >= start[i] && at <= end[i]);
    instants++;
  }
  assert_int_equal(instants, 2 * N_SPANS);
  free(text);
  free(copy);
}

/* Start rounded down, end up: [-1.501, -0.001] us is -2 + 2. */
static void zipkin_rounds_a_span_outwards(void **state) {
  (void)state;
  static const struct {
    int64_t start, end;
    const char *want;
  } cases[] = {
      {-1501, -1, "\"timestamp\":-2,\"duration\":2,"},
      {1795560768195745031, 1795560768195778601,
       "\"timestamp\":1795560768195745,\"duration\":34,"},
      {1000, 1000, "\"timestamp\":1,\"duration\":1,"},
      {999, 1001, "\"timestamp\":0,\"duration\":2,"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    annotation ann[2] = {{cases[i].start, "sr"}, {cases[i].end, "ss"}};
    span s = {.id = 1, .name = "op", .service = "osd.0", .start_ns = cases[i].start,
              .end_ns = cases[i].end, .clock_bound_ns = -1, .annotations = ann,
              .vpid = -1, .vtid = -1, .n_annotations = 2, .started = true, .ended = true};
    span *ptr = &s;
    trace t = {.trace_lo = 1, .spans = &ptr, .n_spans = 1};
    char *text = export_doc(&output_zipkin, &t);
    if (strstr(text, cases[i].want) == NULL)
      fail_msg("case %zu: want %s in %s", i, cases[i].want, text);
    char ann_ts[64];
    snprintf(ann_ts, sizeof(ann_ts), "{\"timestamp\":%lld,\"value\":\"ss\"}",
             (long long)(cases[i].end / 1000 - (cases[i].end % 1000 < 0)));
    assert_non_null(strstr(text, ann_ts));
    free(text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ns_are_written_exactly),
      cmocka_unit_test(lanes_keep_nesting_and_split_partial_overlaps),
      cmocka_unit_test(export_has_exact_times_and_no_partial_overlap),
      cmocka_unit_test(zipkin_rounds_a_span_outwards),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
