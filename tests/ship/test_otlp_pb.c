/* The OTLP protobuf batch (ship/otlp_pb.h): one ResourceSpans per
 * resource, spans in batch order within it, ids big endian, times,
 * kind, status and the attributes otlp_map gives (the same list the JSON
 * file writes); the batch empties when taken; a peer's invalid UTF-8
 * repaired (U+FFFD a byte, counted); a partial success read back. Decoded here with the code generated from our .proto; the
 * receiver test (ship_push) decodes with OpenTelemetry's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "otlp.pb-c.h"
#include "output/otlp_map.h"
#include "read/event.h"
#include "ship/otlp_pb.h"

typedef struct keys {
  const char *key[64];
  size_t n;
} keys;

static void collect(void *arg, const otlp_attr *a) {
  keys *k = arg;
  k->key[k->n++] = a->key;
}

static void batch(void **state) {
  (void)state;
  span s[5];
  for (int i = 0; i < 5; i++) {
    s[i] = (span){.id = 0x1122334455667700ull + (uint64_t)i, .parent_id = i ? 0x1122334455667700ull : 0,
                  .name = "op", .service = i % 2 ? "osd" : "client", .hostname = "h",
                  .peer = "tcp://10.1.2.3:6800", .start_ns = 1000 + i, .end_ns = 2000 + i,
                  .clock_bound_ns = -1, .vpid = i % 2 ? 7 : 8, .kind = HOP_KIND_CLIENT,
                  .started = true, .ended = true, .status = i == 3 ? -5 : 0,
                  .status_message = i == 3 ? "EIO" : NULL};
  }
  trace t = {.trace_hi = 0x0102030405060708ull, .trace_lo = 0x090a0b0c0d0e0f10ull};
  pb_batch *b = pb_batch_new();
  assert_non_null(b);
  for (int i = 0; i < 5; i++)
    assert_int_equal(pb_batch_add(b, &t, &s[i]), 0);
  assert_int_equal(pb_batch_spans(b), 5);
  size_t len;
  uint8_t *bytes = pb_batch_take(b, &len);
  assert_non_null(bytes);
  assert_int_equal(pb_batch_spans(b), 0);
  Hoptrace__Otlp__ExportTraceServiceRequest *r =
      hoptrace__otlp__export_trace_service_request__unpack(NULL, len, bytes);
  assert_non_null(r);
  assert_int_equal(r->n_resource_spans, 2);
  size_t seen = 0;
  for (size_t g = 0; g < 2; g++) {
    Hoptrace__Otlp__ResourceSpans *rs = r->resource_spans[g];
    assert_string_equal(rs->resource->attributes[0]->key, "service.name");
    const char *service = rs->resource->attributes[0]->value->string_value;
    assert_int_equal(rs->n_scope_spans, 1);
    assert_string_equal(rs->scope_spans[0]->scope->name, "hoptrace");
    for (size_t k = 0; k < rs->scope_spans[0]->n_spans; k++, seen++) {
      Hoptrace__Otlp__Span *p = rs->scope_spans[0]->spans[k];
      int i = p->span_id.data[7];
      assert_string_equal(service, s[i].service);
      assert_int_equal(p->trace_id.len, 16);
      assert_int_equal(p->trace_id.data[0], 1);
      assert_int_equal(p->trace_id.data[15], 0x10);
      assert_int_equal(p->span_id.data[0], 0x11);
      assert_int_equal(p->parent_span_id.len, i ? 8 : 0);
      assert_int_equal(p->kind, 3);
      assert_int_equal(p->start_time_unix_nano, 1000 + i);
      assert_int_equal(p->end_time_unix_nano, 2000 + i);
      assert_int_equal(p->status->code, i == 3 ? 2 : 0);
      if (i == 3)
        assert_string_equal(p->status->message, "EIO");
      keys want = {{0}, 0};
      otlp_span_attrs(&t, &s[i], collect, &want);
      assert_int_equal(p->n_attributes, want.n);
      for (size_t a = 0; a < want.n; a++)
        assert_string_equal(p->attributes[a]->key, want.key[a]);
    }
  }
  assert_int_equal(seen, 5);
  hoptrace__otlp__export_trace_service_request__free_unpacked(r, NULL);
  free(bytes);
  pb_batch_free(b);
}

/* Each byte of an invalid sequence becomes U+FFFD (a cut E2 82: two),
 * valid multi-byte text stays; the count empties with the batch. */
static void invalid_utf8(void **state) {
  (void)state;
  span s = {.id = 1, .name = "\xff" "op\xe2\x82 caf\xc3\xa9", .service = "osd", .hostname = "h",
            .start_ns = 1, .end_ns = 2, .clock_bound_ns = -1, .vpid = 7,
            .kind = HOP_KIND_CLIENT, .started = true, .ended = true,
            .status = -5, .status_message = "bad \x80"}; /* a client: ERROR, described */
  trace t = {.trace_lo = 1};
  pb_batch *b = pb_batch_new();
  assert_non_null(b);
  assert_int_equal(pb_batch_add(b, &t, &s), 0);
  assert_int_equal(pb_batch_replaced(b), 3 + 3 + 1); /* name, rpc.method, message */
  size_t len;
  uint8_t *bytes = pb_batch_take(b, &len);
  assert_int_equal(pb_batch_replaced(b), 0);
  Hoptrace__Otlp__ExportTraceServiceRequest *r =
      hoptrace__otlp__export_trace_service_request__unpack(NULL, len, bytes);
  assert_non_null(r);
  Hoptrace__Otlp__Span *p = r->resource_spans[0]->scope_spans[0]->spans[0];
  assert_string_equal(p->name, "\xef\xbf\xbd" "op\xef\xbf\xbd\xef\xbf\xbd caf\xc3\xa9");
  assert_string_equal(p->status->message, "bad \xef\xbf\xbd");
  hoptrace__otlp__export_trace_service_request__free_unpacked(r, NULL);
  free(bytes);
  pb_batch_free(b);
}

static void partial_success(void **state) {
  (void)state;
  Hoptrace__Otlp__ExportTracePartialSuccess ps = HOPTRACE__OTLP__EXPORT_TRACE_PARTIAL_SUCCESS__INIT;
  ps.rejected_spans = 3;
  ps.error_message = "too old";
  Hoptrace__Otlp__ExportTraceServiceResponse resp = HOPTRACE__OTLP__EXPORT_TRACE_SERVICE_RESPONSE__INIT;
  resp.partial_success = &ps;
  uint8_t buf[64];
  size_t n = hoptrace__otlp__export_trace_service_response__pack(&resp, buf);
  int64_t rejected;
  char msg[32];
  assert_int_equal(pb_response_parse(buf, n, &rejected, msg, sizeof(msg)), 0);
  assert_int_equal(rejected, 3);
  assert_string_equal(msg, "too old");
  assert_int_equal(pb_response_parse(NULL, 0, &rejected, msg, sizeof(msg)), 0);
  assert_int_equal(rejected, 0);
  const uint8_t junk[] = {0x0a, 0x7f, 0x01};
  assert_int_equal(pb_response_parse(junk, sizeof(junk), &rejected, msg, sizeof(msg)), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(batch),
      cmocka_unit_test(invalid_utf8),
      cmocka_unit_test(partial_success),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
