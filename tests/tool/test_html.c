/* The waterfall page's data (out_html.c, html_strtab.c): times are exact
 * integer ns from the trace's start at epoch scale (through doubles they
 * moved by up to 256 ns) and saturate instead of overflowing; the string
 * table writes a text once, stays bounded and never adds on a lookup;
 * hostile texts cannot close the data block. The real exporter writes to
 * a memory stream; its text is read back here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/html_strtab.h"
#include "output/output.h"
#include "export_text.h"

static char *page(const trace *t) { return export_text(&output_html, t); }

/* The data block: from its opening tag to the first "</script". */
static char *data_block(const char *text) {
  const char *p = strstr(text, "id=\"data\">\n");
  assert_non_null(p);
  p += strlen("id=\"data\">\n");
  const char *end = strstr(p, "</script");
  assert_non_null(end);
  return strndup(p, (size_t)(end - p));
}

static void epoch_times_are_exact_ns(void **state) {
  (void)state;
  const int64_t base = 1795560768195745031; /* not a multiple of 256 */
  annotation ann[] = {{base + 1, "sr"}, {base + 1001, "ss"}};
  span root = {.id = 1, .name = "op", .service = "svc", .start_ns = base, .end_ns = base + 1003,
               .annotations = ann, .n_annotations = 2, .started = true, .ended = true,
               .vpid = 42, .vtid = -1, .clock_bound_ns = -1};
  span *ptrs[] = {&root};
  trace t = {.trace_lo = 7, .spans = ptrs, .n_spans = 1, .roots = ptrs, .n_roots = 1};
  char *text = page(&t), *data = data_block(text);
  /* header: start in epoch us (floor), duration 1003 ns */
  assert_non_null(strstr(data, "T[\"00000000000000000000000000000007\",1795560768195745,1003,1,"));
  /* span: start 0, duration 1003, annotations at +1 and +1001 ns, the pid */
  assert_non_null(strstr(data, "\t[[\"0000000000000001\",-1,"));
  assert_non_null(strstr(data, ",0,1003,[1,"));
  assert_non_null(strstr(data, ",1001,"));
  assert_non_null(strstr(data, "\"42\"")); /* hoptrace.pid */
  free(data);
  free(text);
}

static void hostile_times_saturate(void **state) {
  (void)state;
  annotation ann[] = {{INT64_MIN, "x"}};
  span a = {.id = 1, .start_ns = INT64_MAX, .end_ns = INT64_MAX, .started = true, .ended = true,
            .vpid = -1, .vtid = -1, .clock_bound_ns = -1};
  span b = {.id = 2, .parent_id = 99, .annotations = ann, .n_annotations = 1, .end_ns = 5,
            .ended = true, .vpid = -1, .vtid = -1, .clock_bound_ns = -1};
  span *ptrs[] = {&a, &b};
  trace t = {.trace_lo = 1, .spans = ptrs, .n_spans = 2, .roots = ptrs, .n_roots = 2};
  char *text = page(&t), *data = data_block(text);
  /* INT64_MAX - INT64_MIN: saturated (wrapped, it would be -1) */
  assert_non_null(strstr(data, ",9223372036854775807,"));
  assert_non_null(strstr(data, "\"0000000000000063\"")); /* parent id that never arrived */
  free(data);
  free(text);
}

static void texts_cannot_close_the_block(void **state) {
  (void)state;
  tag tags[] = {{.key = "</script><script>alert(1)</script>", .str_value = "</SCRIPT>"}};
  span s = {.id = 1, .name = "<!--<script>", .service = "a\nb", .tags = tags, .n_tags = 1,
            .vpid = -1, .vtid = -1, .clock_bound_ns = -1, .status = 5,
            .status_message = "</style>"};
  span *ptrs[] = {&s};
  trace t = {.trace_lo = 1, .spans = ptrs, .n_spans = 1, .roots = ptrs, .n_roots = 1};
  char *text = page(&t), *data = data_block(text);
  assert_null(strstr(data, "</"));
  assert_null(strstr(data, "<!--")); /* would keep the element open */
  /* one line a string, a trace or the aggregate critical path (last):
   * no raw newline inside a text */
  char *last = NULL;
  for (char *line = data; *line; line = strchr(line, '\n') + 1) {
    assert_true(*line == 'S' || *line == 'T' || *line == 'A');
    last = line;
  }
  assert_true(last != NULL && *last == 'A');
  free(data);
  free(text);
}

static void strtab_is_bounded(void **state) {
  (void)state;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  obuf *ob = obuf_new(f);
  html_strtab *t = html_strtab_new();
  assert_non_null(t);
  assert_int_equal(html_strtab_ref(t, NULL, "new"), -1); /* lookup only: not added */
  assert_int_equal(html_strtab_ref(t, ob, "a"), 0);
  assert_int_equal(html_strtab_ref(t, ob, NULL), 1);
  assert_int_equal(html_strtab_ref(t, ob, "a"), 0);
  assert_int_equal(html_strtab_ref(t, NULL, "a"), 0);
  char long_text[HTML_STRTAB_LONG + 2];
  memset(long_text, 'x', sizeof(long_text) - 1);
  long_text[sizeof(long_text) - 1] = '\0';
  assert_int_equal(html_strtab_ref(t, ob, long_text), -1);
  char name[16];
  for (int i = 2; i < HTML_STRTAB_MAX; i++) {
    snprintf(name, sizeof(name), "n%d", i);
    assert_int_equal(html_strtab_ref(t, ob, name), i);
  }
  assert_int_equal(html_strtab_ref(t, ob, "one too many"), -1);
  assert_int_equal(html_strtab_ref(t, ob, "n70"), 70);
  html_strtab_free(t);
  obuf_flush(ob);
  obuf_free(ob);
  fclose(f);
  assert_true(strncmp(text, "S\"a\"\nS\"\"\nS\"n2\"\n", 15) == 0);
  size_t lines = 0;
  for (char *p = text; *p; p++)
    lines += *p == '\n';
  assert_int_equal(lines, HTML_STRTAB_MAX); /* each text once */
  free(text);
}

/* The first trace's header: from "T[" to its tab. */
static char *trace_header(const char *data) {
  const char *t = strstr(data, "T[");
  assert_non_null(t);
  const char *tab = strchr(t, '\t');
  assert_non_null(tab);
  return strndup(t, (size_t)(tab - t));
}

/* A failed call (status ERROR by semconv.h: here a refused client span,
 * no server span) carries its error type and puts the trace in "errors
 * only"; a server span answering the caller's error (EINVAL: UNSET) has
 * its message and null, drawn as any other; the page draws ERROR red and
 * says so in its legend. */
static void failed_spans_are_marked(void **state) {
  (void)state;
  tag kv[] = {{.key = "error", .str_value = "HT_ENOTCONN"}};
  span refused = {.id = 1, .name = "replica_write", .service = "osd.0", .kind = 1,
                  .status = -21, .status_message = "not connected", .tags = kv, .n_tags = 1,
                  .peer = "tcp://10.0.0.3:6800", .start_ns = 100, .end_ns = 150,
                  .started = true, .ended = true, .vpid = -1, .vtid = -1,
                  .clock_bound_ns = -1};
  span *one[] = {&refused};
  trace failed = {.trace_lo = 1, .spans = one, .n_spans = 1, .roots = one, .n_roots = 1};
  char *text = page(&failed), *data = data_block(text);
  assert_non_null(strstr(data, "S\"ENOTCONN\"\n"));
  assert_non_null(strstr(data, "S\"not connected\"\n"));
  /* the span: status -21, then after its tags the message and the type */
  const char *sp = strstr(data, "\t[[\"0000000000000001\",-1,");
  assert_non_null(sp);
  assert_non_null(strstr(sp, ",1,-21,0,50,[],["));
  const char *tail = strstr(sp, "]]\n");
  assert_non_null(tail);
  assert_true(tail[-1] != 'l'); /* an index, not null: the error type */
  assert_non_null(strstr(text, "const ERR = '#d62728'"));
  assert_non_null(strstr(text, "failed (ERROR: refused, timed out, reset, error "));
  assert_non_null(strstr(text, "b.style.backgroundColor = s.err ? ERR : colourOf(s.svc)"));
  /* the report's aggregate critical path, on one line: the refused call
   * is its root operation's whole path */
  const char *agg = strstr(data, "\nA{\"operations\":[{\"operation\":\"replica_write\"");
  assert_non_null(agg);
  assert_non_null(strstr(agg, "\"share_all\":1,"));
  assert_true(strchr(agg + 1, '\n')[1] == '\0'); /* the block's last line */
  char *header = trace_header(data); /* flags 1: a span ERROR */
  assert_non_null(strstr(header, ",1,[")); /* flags, then [services] */
  free(header);
  free(data);
  free(text);

  annotation ann[] = {{100, "sr"}, {150, "ss"}};
  span caller_error = {.id = 2, .name = "osd_write", .service = "osd.0", .kind = 2,
                       .status = -1, .status_message = "invalid argument",
                       .annotations = ann, .n_annotations = 2, .start_ns = 100,
                       .end_ns = 150, .started = true, .ended = true, .vpid = -1, .vtid = -1,
                       .clock_bound_ns = -1};
  span *two[] = {&caller_error};
  trace unset = {.trace_lo = 2, .spans = two, .n_spans = 1, .roots = two, .n_roots = 1};
  text = page(&unset);
  data = data_block(text);
  assert_non_null(strstr(data, ",null]]\n"));
  assert_null(strstr(data, "S\"EINVAL\""));
  header = trace_header(data); /* flags 0: nothing failed */
  assert_non_null(strstr(header, ",0,["));
  free(header);
  free(data);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(epoch_times_are_exact_ns),
      cmocka_unit_test(hostile_times_saturate),
      cmocka_unit_test(texts_cannot_close_the_block),
      cmocka_unit_test(strtab_is_bounded),
      cmocka_unit_test(failed_spans_are_marked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
