/* The report's per-hop blocks (output/report_hops.h) on traces built by
 * hand: grouped by operation, the one with the most end-to-end time
 * first, each operation's hops by their share of its end-to-end time,
 * whatever order the spans came in; the JSON in the same order; errors
 * and timeouts said only where there are any, "no errors" once. */
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
#include "read/event.h"

#define SPANS 6

/* A trace built span by span: each span's parent given by index. */
typedef struct built {
  span s[SPANS];
  span *all[SPANS], *roots[1], *kids[SPANS][SPANS];
  trace t;
} built;

static span *add(built *b, int parent, int8_t kind, const char *service, const char *name,
                 int64_t start_us, int64_t end_us) {
  size_t i = b->t.n_spans++;
  span *s = &b->s[i];
  *s = (span){.id = i + 1, .name = name, .service = service, .start_ns = start_us * 1000,
              .end_ns = end_us * 1000, .clock_bound_ns = -1, .kind = kind, .started = true,
              .ended = true, .children = b->kids[i]};
  b->all[i] = s;
  if (parent < 0) {
    b->roots[0] = s;
    b->t.n_roots = 1;
  } else {
    span *p = &b->s[parent];
    s->parent_id = p->id;
    s->parent = p;
    p->children[p->n_children++] = s;
  }
  return s;
}

static void start(built *b) {
  memset(b, 0, sizeof(*b));
  b->t = (trace){.spans = b->all, .roots = b->roots, .root_prob = UINT64_C(1) << 32};
}

/* A write: the client to osd.0, which calls osd.2 (quick, its spans
 * first) and osd.1 (slow). rep_status: osd.1's replica's status. */
static void write_trace(built *b, int32_t rep_status) {
  start(b);
  add(b, -1, HOP_KIND_CLIENT, "client", "write", 0, 100);
  add(b, 0, HOP_KIND_SERVER, "osd.0", "write", 2, 98);
  add(b, 1, HOP_KIND_CLIENT, "osd.0", "rep", 5, 15);
  add(b, 2, HOP_KIND_SERVER, "osd.2", "rep", 6, 14);
  add(b, 1, HOP_KIND_CLIENT, "osd.0", "rep", 5, 90);
  add(b, 4, HOP_KIND_SERVER, "osd.1", "rep", 6, 89)->status = rep_status;
}

/* A read: the client to osd.3, short. */
static void read_trace(built *b) {
  start(b);
  add(b, -1, HOP_KIND_CLIENT, "client", "read", 0, 20);
  add(b, 0, HOP_KIND_SERVER, "osd.3", "read", 2, 18);
}

static char *run(const output_format *fmt, built *b, size_t n) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  obuf *out = obuf_new(f);
  output *o = fmt->open(out, NULL);
  assert_non_null(o);
  for (size_t i = 0; i < n; i++)
    fmt->trace(o, &b[i].t);
  bt_source_stats src = {0};
  assembler_stats st = {.traces = n};
  assert_int_equal(fmt->close(o, &src, &st), 0);
  assert_int_equal(obuf_flush(out), 0);
  obuf_free(out);
  fclose(f);
  return text;
}

/* Where `needle` is in text, after `from` (asserted present). */
static const char *after(const char *text, const char *from, const char *needle) {
  const char *at = strstr(from != NULL ? from : text, needle);
  if (at == NULL)
    fail_msg("%s: not found in order in\n%s", needle, text);
  return at + 1;
}

/* The read first in the input, the write's slow replica last: the write
 * (more end-to-end time) comes first, its hops by share. */
static void blocks_by_operation_then_share(void **state) {
  (void)state;
  built b[3];
  read_trace(&b[0]);
  write_trace(&b[1], 0);
  write_trace(&b[2], 0);
  char *text = run(&output_report, b, 3);
  const char *at = after(text, NULL, "\nPer hop (client span -> server span)");
  at = after(text, at, "\noperation write: 2 traces, end-to-end mean 100.0 us");
  at = after(text, at, "\nclient -> osd.0 write\n  calls: 2 sampled, est. 2; 100.0 % of the"
                       " operation's end-to-end time\n");
  at = after(text, at, "\nosd.0 -> osd.1 rep\n  calls: 2 sampled, est. 2; 85.0 %");
  at = after(text, at, "\nosd.0 -> osd.2 rep\n  calls: 2 sampled, est. 2; 10.0 %");
  at = after(text, at, "\noperation read: 1 traces, end-to-end mean 20.0 us");
  at = after(text, at, "\nclient -> osd.3 read\n");
  at = after(text, at, "\nFan-out (server spans that call others)");
  after(text, at, "\nosd.0 write: first child sent -> last child answered\n"
                  "  server spans: 2 sampled, est. 2; 85.0 %");
  free(text);

  text = run(&output_report_json, b, 3);
  at = after(text, NULL, "\"hops\":[{\"operation\":\"write\",\"traces\":2,\"e2e_ns\":200000,"
                         "\"hops\":[{\"hop\":\"client -> osd.0 write\"");
  at = after(text, at, "{\"hop\":\"osd.0 -> osd.1 rep\",\"calls\":2,\"calls_unknown_p\":0,"
                       "\"est\":2.0,\"share\":0.850000,\"phases\":{\"request\":{\"count\":2,");
  at = after(text, at, "{\"hop\":\"osd.0 -> osd.2 rep\"");
  at = after(text, at, "]},{\"operation\":\"read\",\"traces\":1,\"e2e_ns\":20000,");
  after(text, at, "\"fanout\":[{\"operation\":\"write\"");
  assert_null(strstr(text, "\"errors\""));
  free(text);
}

/* No hop failed: no errors or timeouts on a hop, no such column in the
 * roll-ups, no table of zero degraded writes; "no errors" said once. One
 * replica failed, one timed out: said on that hop only, in its block and
 * in the errors list (which names the operation). */
static void errors_only_where_there_are_any(void **state) {
  (void)state;
  built b[3];
  write_trace(&b[0], 0);
  write_trace(&b[1], 0);
  read_trace(&b[2]);
  tag kv[2] = {{.key = "sim.replicas", .is_int = true, .int_value = 2},
               {.key = "sim.replicas_acked", .is_int = true, .int_value = 2}};
  b[0].s[1].tags = kv;
  b[0].s[1].n_tags = 2;
  char *text = run(&output_report, b, 3);
  assert_null(strstr(text, "errors: "));
  assert_null(strstr(text, "timeouts: "));
  assert_null(strstr(text, " errors timeouts "));
  const char *none = strstr(text, "no errors (");
  assert_non_null(none);
  assert_null(strstr(none + 1, "no errors ("));
  assert_non_null(strstr(text, "\nDegraded writes per primary: none (1 write(s) sampled by 1"
                               " primary, each acknowledged by all its replicas)\n"));
  free(text);

  write_trace(&b[0], HT_EPEERERROR);
  write_trace(&b[1], HT_ETIMEDOUT);
  text = run(&output_report, b, 3);
  assert_non_null(strstr(text, "\nosd.0 -> osd.1 rep\n  calls: 2 sampled, est. 2; 85.0 % of the"
                               " operation's end-to-end time; errors: 1; timeouts: 1\n"));
  assert_non_null(strstr(text, "\nosd.0 -> osd.2 rep\n  calls: 2 sampled, est. 2; 10.0 % of the"
                               " operation's end-to-end time\n"));
  assert_non_null(strstr(text, "\n  osd.0 -> osd.1 rep                                      2"
                               "        1        1  write\n"));
  assert_non_null(strstr(text, " errors timeouts "));
  assert_null(strstr(text, "no errors ("));
  free(text);
  text = run(&output_report_json, b, 3);
  assert_non_null(strstr(text, "{\"hop\":\"osd.0 -> osd.1 rep\",\"calls\":2,\"calls_unknown_p\":0,"
                               "\"est\":2.0,\"share\":0.850000,\"errors\":1,\"timeouts\":1,"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(blocks_by_operation_then_share),
      cmocka_unit_test(errors_only_where_there_are_any),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
