/* The exporters' JSON helpers: escaping (every byte class), ids as fixed
 * lower-case hex, integers at the int64 limits. Output goes through a
 * memory stream and is compared byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/json.h"

typedef struct {
  char *text;
  size_t len;
  FILE *file;
  obuf *f;
} mem_out;

static void open_mem(mem_out *m) {
  m->text = NULL;
  m->len = 0;
  m->file = open_memstream(&m->text, &m->len);
  assert_non_null(m->file);
  m->f = obuf_new(m->file);
  assert_non_null(m->f);
}

static void expect(mem_out *m, const char *want) {
  assert_int_equal(obuf_flush(m->f), 0);
  obuf_free(m->f);
  assert_int_equal(fclose(m->file), 0);
  assert_string_equal(m->text, want);
  free(m->text);
}

static void strings_escape_quotes_controls_and_script_end(void **state) {
  (void)state;
  static const struct {
    const char *in, *want;
  } cases[] = {
      {"", "\"\""},
      {"plain text", "\"plain text\""},
      {"a\"b\\c", "\"a\\\"b\\\\c\""},
      {"\n\r\t", "\"\\n\\r\\t\""},
      {"\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\""},
      {"</script>", "\"\\u003c/script>\""},
      {"<!--<script>", "\"\\u003c!--\\u003cscript>\""},
      {"tcp://1.2.3.4/x", "\"tcp://1.2.3.4/x\""},
      {"/lead", "\"/lead\""},
      {"caf\xc3\xa9", "\"caf\xc3\xa9\""}, /* UTF-8 passes through */
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    mem_out m;
    open_mem(&m);
    json_string(m.f, cases[i].in);
    expect(&m, cases[i].want);
  }
  mem_out m;
  open_mem(&m);
  json_string(m.f, NULL);
  expect(&m, "\"\"");
}

/* A peer's bytes: every invalid sequence's bytes become U+FFFD, counted;
 * well-formed UTF-8 up to U+10FFFF passes; C1 controls are escaped. */
static void invalid_utf8_is_replaced_and_counted(void **state) {
  (void)state;
  static const struct {
    const char *in, *want;
    unsigned long long replaced;
  } cases[] = {
      {"\xff\xfe\x80op", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdop\"", 3},
      {"a\xe2\x82", "\"a\xef\xbf\xbd\xef\xbf\xbd\"", 2},          /* cut at the end */
      {"\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"", 2},            /* overlong '/' */
      {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", 3}, /* a surrogate */
      {"\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", 4},
      {"\xf4\x8f\xbf\xbf\xe2\x82\xac", "\"\xf4\x8f\xbf\xbf\xe2\x82\xac\"", 0},
      {"\xc2\x9b[2J\xc2\xa0", "\"\\u009b[2J\xc2\xa0\"", 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    mem_out m;
    open_mem(&m);
    json_string(m.f, cases[i].in);
    assert_int_equal(m.f->replaced, cases[i].replaced);
    expect(&m, cases[i].want);
  }
}

static void ids_are_fixed_width_lower_hex(void **state) {
  (void)state;
  mem_out m;
  open_mem(&m);
  json_hex64(m.f, 0xabcULL);
  json_hex64(m.f, UINT64_MAX);
  json_trace_id(m.f, 0, 0x1234, 1);
  json_trace_id(m.f, 0, 0x1234, 0);
  json_trace_id(m.f, 0xfedcba9876543210ULL, 1, 1);
  expect(&m, "\"0000000000000abc\"\"ffffffffffffffff\""
             "\"0000000000001234\""
             "\"00000000000000000000000000001234\""
             "\"fedcba98765432100000000000000001\"");
}

static void integers_match_printf_at_the_limits(void **state) {
  (void)state;
  const int64_t values[] = {0, 1, -1, 9, 10, -10, 1700000000123456789LL,
                            INT64_MAX, INT64_MIN};
  for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
    char want[32];
    snprintf(want, sizeof(want), "%lld", (long long)values[i]);
    mem_out m;
    open_mem(&m);
    json_i64(m.f, values[i]);
    expect(&m, want);
  }
}

/* The output buffer keeps every byte in order across its own size, for
 * small appends, one write bigger than it and printf past its end. */
static void buffer_keeps_order_across_its_size(void **state) {
  (void)state;
  mem_out m;
  open_mem(&m);
  size_t big_len = OBUF_BYTES * 2 + 7;
  char *big = malloc(big_len + 1);
  assert_non_null(big);
  for (size_t i = 0; i < big_len; i++)
    big[i] = (char)('a' + i % 26);
  big[big_len] = '\0';
  size_t want_len = 0;
  for (int i = 0; i < 5000; i++) { /* ~ 60 KiB of small appends */
    ob_printf(m.f, "%05d,", i);
    ob_putc(m.f, '|');
    ob_puts(m.f, "ab");
    want_len += 9;
  }
  ob_write(m.f, big, big_len);
  ob_printf(m.f, "%s", big); /* longer than the room left */
  want_len += 2 * big_len;
  assert_int_equal(obuf_flush(m.f), 0);
  assert_int_equal(fflush(m.file), 0);
  assert_int_equal(m.len, want_len);
  assert_memory_equal(m.text, "00000,|ab00001,|ab", 18);
  assert_memory_equal(m.text + 5000 * 9, big, big_len);
  assert_memory_equal(m.text + 5000 * 9 + big_len, big, big_len);
  obuf_free(m.f);
  fclose(m.file);
  free(m.text);
  free(big);
}

/* A failed write is reported by flush and error, never ignored. */
static void write_errors_are_reported(void **state) {
  (void)state;
  FILE *full = fopen("/dev/full", "w");
  if (full == NULL)
    skip();
  setvbuf(full, NULL, _IONBF, 0);
  obuf *b = obuf_new(full);
  assert_non_null(b);
  for (int i = 0; i < 20000; i++)
    ob_puts(b, "0123456789");
  assert_true(obuf_error(b));
  assert_int_equal(obuf_flush(b), -1);
  obuf_free(b);
  fclose(full);
}

/* The cache answers as endpoint_parse does, for more endpoints than it
 * has slots, and a string rewritten in place is parsed again. */
static void endpoint_cache_agrees_with_parse(void **state) {
  (void)state;
  static endpoint_cache cache;
  char text[64];
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 300; i++) {
      snprintf(text, sizeof(text), i % 3 ? "tcp://10.0.%d.%d:%d" : "tcp://[::%x]:%d", i / 200,
               i % 200, 6800 + i);
      endpoint_parts want, scratch;
      endpoint_parse(text, &want);
      const endpoint_parts *got = endpoint_parse_cached(&cache, text, &scratch);
      assert_memory_equal(got, &want, sizeof(want));
    }
  endpoint_parts scratch;
  assert_int_equal(endpoint_parse_cached(&cache, NULL, &scratch)->port, 0);
  char long_text[100];
  memset(long_text, '1', sizeof(long_text) - 1);
  long_text[sizeof(long_text) - 1] = '\0';
  memcpy(long_text, "tcp://", 6);
  assert_int_equal(endpoint_parse_cached(&cache, long_text, &scratch)->ipv4[0], '\0');
  mem_out m;
  open_mem(&m);
  json_i64_string(m.f, -42);
  json_i64_string(m.f, INT64_MIN);
  expect(&m, "\"-42\"\"-9223372036854775808\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(strings_escape_quotes_controls_and_script_end),
      cmocka_unit_test(invalid_utf8_is_replaced_and_counted),
      cmocka_unit_test(ids_are_fixed_width_lower_hex),
      cmocka_unit_test(integers_match_printf_at_the_limits),
      cmocka_unit_test(buffer_keeps_order_across_its_size),
      cmocka_unit_test(write_errors_are_reported),
      cmocka_unit_test(endpoint_cache_agrees_with_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
