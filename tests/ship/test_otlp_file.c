/* The OTLP mapping (otlp_map.h) and the file's grouping (otlp_groups.h):
 * success UNSET, failure ERROR with message and error.type (the rule of
 * output/semconv.h, tested in tests/tool/test_failures.c), RPC and
 * network attributes, no net.peer.name; one ResourceSpans per resource
 * up to OTLP_GROUPS_MAX, one per trace past it, one per trace with
 * --follow; every span written once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/otlp_groups.h"
#include "output/otlp_map.h"
#include "output/output.h"
#include "../tool/otlp_attr_text.h"
#include "read/event.h"


static span make_span(int kind, const char *peer, int32_t status, const char *message) {
  span s = {.id = 2, .parent_id = 1, .name = "osd_write", .service = "osd.0",
            .endpoint = "tcp://10.0.0.1:7000", .peer = peer, .hostname = "h1",
            .procname = "osd", .start_ns = 100, .end_ns = 200, .clock_bound_ns = -1,
            .status_message = message, .vpid = 42, .status = status, .kind = (int8_t)kind,
            .started = true, .ended = true};
  return s;
}

static void conventions(void **state) {
  (void)state;
  trace t = {.trace_hi = 1, .trace_lo = 2};
  span ok = make_span(HOP_KIND_CLIENT, "tcp://10.0.0.2:6800", 0, NULL);
  otlp_span_fields f;
  otlp_span_fields_get(&ok, &f);
  assert_int_equal(f.kind, 3);
  assert_int_equal(f.status_code, OTLP_STATUS_UNSET);
  assert_null(f.status_message);
  attrs a = {""};
  otlp_span_attrs(&t, &ok, collect, &a);
  assert_string_equal(a.text, "rpc.system.name=hoptrace;rpc.method=osd_write;"
                              "server.address=10.0.0.2;server.port=6800;"
                              "network.peer.address=10.0.0.2;network.peer.port=6800;"
                              "hoptrace.endpoint=tcp://10.0.0.1:7000;");

  span bad = make_span(HOP_KIND_SERVER, "unix:///run/osd.sock", -22, "EIO"); /* HT_EIO */
  otlp_span_fields_get(&bad, &f);
  assert_int_equal(f.status_code, OTLP_STATUS_ERROR);
  assert_string_equal(f.status_message, "EIO");
  attrs b = {""};
  otlp_span_attrs(&t, &bad, collect, &b);
  assert_string_equal(b.text, "rpc.system.name=hoptrace;rpc.method=osd_write;"
                              "hoptrace.peer=unix:///run/osd.sock;error.type=EIO;"
                              "hoptrace.endpoint=tcp://10.0.0.1:7000;");
  bad.status_message = NULL; /* the code's own message */
  otlp_span_fields_get(&bad, &f);
  assert_string_equal(f.status_message, "input/output error");

  attrs r = {""};
  otlp_resource_attrs(&ok, collect, &r);
  assert_string_equal(r.text, "service.name=osd.0;service.instance.id=h1/42;host.name=h1;"
                              "process.pid=42;process.executable.name=osd;"
                              "telemetry.sdk.name=hoptrace;telemetry.sdk.language=c;"
                              "telemetry.sdk.version=" HT_TEST_VERSION ";");
}

static size_t count(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

/* n_traces traces of one span in each of n_resources processes: the
 * number of ResourceSpans blocks the file gets. */
static size_t blocks(int n_resources, int n_traces, bool follow) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  obuf *b = obuf_new(mem);
  output_info info = {.follow = follow};
  output *o = output_otlp.open(b, &info);
  assert_non_null(o);
  span *spans = calloc((size_t)n_resources, sizeof(*spans));
  span **ptrs = calloc((size_t)n_resources, sizeof(*ptrs));
  for (int i = 0; i < n_resources; i++) {
    spans[i] = make_span(HOP_KIND_SERVER, NULL, 0, NULL);
    spans[i].vpid = i;
    ptrs[i] = &spans[i];
  }
  for (int k = 0; k < n_traces; k++) {
    trace t = {.trace_lo = (uint64_t)k + 1, .spans = ptrs, .n_spans = (size_t)n_resources};
    output_otlp.trace(o, &t);
  }
  assert_int_equal(output_otlp.close(o, NULL, NULL), 0);
  assert_int_equal(obuf_flush(b), 0);
  obuf_free(b);
  fclose(mem);
  assert_int_equal(count(text, "\"spanId\""), (size_t)(n_resources * n_traces));
  assert_int_equal(count(text, "net.peer.name"), 0);
  size_t n = count(text, "{\"resource\":");
  free(text);
  free(spans);
  free(ptrs);
  return n;
}

static void one_block_per_resource(void **state) {
  (void)state;
  assert_int_equal(blocks(7, 100, false), 7);
  assert_int_equal(blocks(0, 3, false), 0);
  /* past the bound: those resources one block per trace */
  assert_int_equal(blocks(OTLP_GROUPS_MAX + 4, 3, false), OTLP_GROUPS_MAX + 4 * 3);
  /* live: each trace's blocks as it comes */
  assert_int_equal(blocks(7, 5, true), 35);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conventions),
      cmocka_unit_test(one_block_per_resource),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
