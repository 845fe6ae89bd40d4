/* partial.h: an OTLP partial success read from protobuf and JSON replies
 * (rejectedSpans -5 was counted as the whole batch rejected,
 * and an OTLP/JSON reply's errorMessage was never shown). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "otlp.pb-c.h"
#include "ship/counts.h"
#include "ship/partial.h"

static void from_proto(int64_t rejected, const char *message, size_t spans, partial_success *out) {
  Hoptrace__Otlp__ExportTracePartialSuccess ps = HOPTRACE__OTLP__EXPORT_TRACE_PARTIAL_SUCCESS__INIT;
  Hoptrace__Otlp__ExportTraceServiceResponse r = HOPTRACE__OTLP__EXPORT_TRACE_SERVICE_RESPONSE__INIT;
  ps.rejected_spans = rejected;
  ps.error_message = (char *)message;
  r.partial_success = &ps;
  uint8_t *buf = malloc(hoptrace__otlp__export_trace_service_response__get_packed_size(&r));
  assert_non_null(buf);
  size_t len = hoptrace__otlp__export_trace_service_response__pack(&r, buf);
  partial_success_parse(SHIP_OTLP_PROTO, buf, len, spans, out);
  free(buf);
}

static void from_json(const char *body, size_t spans, partial_success *out) {
  partial_success_parse(SHIP_OTLP_JSON, (const uint8_t *)body, strlen(body), spans, out);
}

static void negative_is_never_counted(void **state) {
  (void)state;
  partial_success p;
  from_proto(-5, "bad spans", 512, &p);
  assert_false(p.unreadable);
  assert_true(p.impossible);
  assert_int_equal(p.reported, -5);
  assert_int_equal(p.rejected, 0); /* not 512 */
  assert_string_equal(p.message, "bad spans");
  from_json("{\"partialSuccess\":{\"rejectedSpans\":\"-5\",\"errorMessage\":\"bad spans\"}}", 512,
            &p);
  assert_true(p.impossible);
  assert_int_equal(p.reported, -5);
  assert_int_equal(p.rejected, 0);
  assert_string_equal(p.message, "bad spans");
  from_json("{\"partialSuccess\": {\"rejectedSpans\": -5}}", 512, &p);
  assert_true(p.impossible);
  assert_int_equal(p.rejected, 0);
}

static void more_than_sent_is_the_batch(void **state) {
  (void)state;
  partial_success p;
  from_proto(4000, "", 512, &p);
  assert_true(p.impossible);
  assert_int_equal(p.reported, 4000);
  assert_int_equal(p.rejected, 512);
  from_json("{\"partialSuccess\":{\"rejectedSpans\":\"99999999999999999999999\"}}", 10, &p);
  assert_true(p.impossible);
  assert_int_equal(p.rejected, 10);
  from_json("{\"partialSuccess\":{\"rejectedSpans\":\"five\"}}", 10, &p);
  assert_true(p.impossible);
  assert_int_equal(p.rejected, 0);
  from_json("{\"partialSuccess\":{\"rejectedSpans\":2.5}}", 10, &p);
  assert_true(p.impossible);
  assert_int_equal(p.rejected, 0);
}

static void valid_counts_and_messages(void **state) {
  (void)state;
  partial_success p;
  from_proto(5, "test rejects", 512, &p);
  assert_false(p.impossible);
  assert_int_equal(p.rejected, 5);
  assert_string_equal(p.message, "test rejects");
  from_json("{\"partialSuccess\":{\"rejectedSpans\":\"5\",\"errorMessage\":\"test rejects\"}}", 512,
            &p);
  assert_false(p.impossible);
  assert_int_equal(p.rejected, 5);
  assert_string_equal(p.message, "test rejects");
  /* a warning: nothing rejected, the message kept */
  from_json("{\"partialSuccess\":{\"errorMessage\":\"slow down\"}}", 512, &p);
  assert_false(p.impossible);
  assert_int_equal(p.rejected, 0);
  assert_string_equal(p.message, "slow down");
  from_json("{}", 512, &p);
  assert_false(p.impossible);
  assert_int_equal(p.rejected, 0);
  assert_string_equal(p.message, "");
  from_proto(0, "", 512, &p);
  assert_int_equal(p.rejected, 0);
  /* not an ExportTraceServiceResponse */
  partial_success_parse(SHIP_OTLP_PROTO, (const uint8_t *)"\xff\xff\xff", 3, 512, &p);
  assert_true(p.unreadable);
  assert_int_equal(p.rejected, 0);
  partial_success_parse(SHIP_ZIPKIN, (const uint8_t *)"{\"rejectedSpans\":3}", 19, 512, &p);
  assert_int_equal(p.rejected, 0);
}

static void messages_are_made_safe_and_bounded(void **state) {
  (void)state;
  partial_success p;
  /* a terminal escape, a C1 control and an invalid byte: '?' each; UTF-8 kept */
  from_proto(1, "a\x1b[2Jb\xc2\x9b" "c\xff" "d\xc3\xa9", 512, &p);
  assert_string_equal(p.message, "a?[2Jb?c?d\xc3\xa9");
  from_json("{\"partialSuccess\":{\"rejectedSpans\":1,"
            "\"errorMessage\":\"q\\\"x\\u001b[1m\\n\\u00e9\\\\\"}}",
            512, &p);
  assert_string_equal(p.message, "q\"x?[1m ?\\");
  char big[5000];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  big[PARTIAL_MESSAGE_MAX - 1] = '\xc3'; /* a sequence across the bound: not split */
  big[PARTIAL_MESSAGE_MAX] = '\xa9';
  from_proto(1, big, 512, &p);
  assert_true(p.cut);
  assert_int_equal(strlen(p.message), PARTIAL_MESSAGE_MAX - 1 + 3);
  assert_string_equal(p.message + PARTIAL_MESSAGE_MAX - 1, "...");
  char json[6000];
  snprintf(json, sizeof(json), "{\"partialSuccess\":{\"errorMessage\":\"%s\"}}", big);
  from_json(json, 512, &p);
  assert_true(p.cut);
  assert_string_equal(p.message + PARTIAL_MESSAGE_MAX - 1, "...");
  /* an unterminated string and a lone backslash at the end */
  from_json("{\"partialSuccess\":{\"errorMessage\":\"abc\\", 512, &p);
  assert_string_equal(p.message, "abc\\");
}

static void summary_says_it(void **state) {
  (void)state;
  ship_counts c;
  memset(&c, 0, sizeof(c));
  c.read = c.sent = c.accepted = 512;
  c.partial_impossible = 1;
  c.partial_reported = -5;
  c.partial_spans = 512;
  snprintf(c.collector_message, sizeof(c.collector_message), "bad spans");
  char text[2048] = "";
  FILE *f = fmemopen(text, sizeof(text) - 1, "w");
  assert_non_null(f);
  counts_print(f, &c);
  fclose(f);
  assert_non_null(strstr(text, "512 accepted, 0 rejected"));
  assert_non_null(strstr(text, "1 partial success with an impossible rejected count"));
  assert_non_null(strstr(text, "-5 of a batch of 512, counted as 0 rejected"));
  assert_non_null(strstr(text, "the collector's message: \"bad spans\""));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(negative_is_never_counted),
      cmocka_unit_test(more_than_sent_is_the_batch),
      cmocka_unit_test(valid_counts_and_messages),
      cmocka_unit_test(messages_are_made_safe_and_bounded),
      cmocka_unit_test(summary_says_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
