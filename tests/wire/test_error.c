/* ht_strerror / ht_err_name cover every error code, distinctly.
 * Must never: list the codes by hand (HT_ERRNO_MAP is the list). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "hoptrace/error.h"

static const int all_codes[] = {
#define CODE_(name, value, message) HT_##name,
    HT_ERRNO_MAP(CODE_)
#undef CODE_
};
#define N_CODES (sizeof(all_codes) / sizeof(all_codes[0]))

static void every_code_has_its_own_text_and_name(void **state) {
  (void)state;
  for (size_t i = 0; i < N_CODES; i++) {
    assert_true(all_codes[i] < 0);
    assert_string_not_equal(ht_strerror(all_codes[i]), "unknown error");
    assert_string_not_equal(ht_err_name(all_codes[i]), "HT_UNKNOWN");
    assert_int_equal(strncmp(ht_err_name(all_codes[i]), "HT_E", 4), 0);
    for (size_t j = 0; j < i; j++) {
      assert_int_not_equal(all_codes[i], all_codes[j]);
      assert_string_not_equal(ht_strerror(all_codes[i]),
                              ht_strerror(all_codes[j]));
    }
  }
}

static void unknown_and_zero_codes_have_fallbacks(void **state) {
  (void)state;
  assert_string_equal(ht_strerror(0), "success");
  assert_string_equal(ht_err_name(0), "HT_OK");
  assert_string_equal(ht_strerror(-9999), "unknown error");
  assert_string_equal(ht_err_name(12345), "HT_UNKNOWN");
  assert_string_equal(ht_err_name(HT_EFRAMETOOBIG), "HT_EFRAMETOOBIG");
}

/* Values are part of the ABI: -28 stays retired (the newer codes came after it). */
static void listen_codes_keep_their_values(void **state) {
  (void)state;
  assert_int_equal(HT_EADDRINUSE, -29);
  assert_int_equal(HT_EACCES, -30);
  assert_string_equal(ht_strerror(HT_EADDRINUSE), "address already in use");
  assert_string_equal(ht_err_name(HT_EACCES), "HT_EACCES");
  assert_string_equal(ht_strerror(-28), "unknown error");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_code_has_its_own_text_and_name),
      cmocka_unit_test(unknown_and_zero_codes_have_fallbacks),
      cmocka_unit_test(listen_codes_keep_their_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
