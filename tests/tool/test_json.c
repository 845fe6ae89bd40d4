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

#include "json.h"

typedef struct {
  char *text;
  size_t len;
  FILE *f;
} mem_out;

static void open_mem(mem_out *m) {
  m->text = NULL;
  m->len = 0;
  m->f = open_memstream(&m->text, &m->len);
  assert_non_null(m->f);
}

static void expect(mem_out *m, const char *want) {
  assert_int_equal(fclose(m->f), 0);
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
      {"</script>", "\"<\\/script>\""},
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(strings_escape_quotes_controls_and_script_end),
      cmocka_unit_test(ids_are_fixed_width_lower_hex),
      cmocka_unit_test(integers_match_printf_at_the_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
