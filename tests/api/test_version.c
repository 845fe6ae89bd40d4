/* ht_version / ht_version_number agree with the HT_VERSION_* macros of
 * the generated <hoptrace/version.h>, and those with the CMake project
 * version (HT_TEST_PROJECT_VERSION, passed by tests/api/CMakeLists.txt).
 * Built twice: against the static and against the shared library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "hoptrace.h"

/* The macros work in #if: plain integer literals. */
#if HT_VERSION_NUMBER !=                                                       \
    HT_VERSION_MAJOR * 10000 + HT_VERSION_MINOR * 100 + HT_VERSION_PATCH
#error "HT_VERSION_NUMBER does not pack MAJOR.MINOR.PATCH"
#endif
#if HT_VERSION_MINOR > 99 || HT_VERSION_PATCH > 99
#error "minor and patch must stay below 100"
#endif

static void macros_are_the_project_version(void **state) {
  (void)state;
  char text[64];
  snprintf(text, sizeof(text), "%d.%d.%d", HT_VERSION_MAJOR, HT_VERSION_MINOR,
           HT_VERSION_PATCH);
  assert_string_equal(text, HT_VERSION_STRING);
  assert_string_equal(HT_VERSION_STRING, HT_TEST_PROJECT_VERSION);
}

static void library_agrees_with_the_macros(void **state) {
  (void)state;
  assert_non_null(ht_version());
  assert_string_equal(ht_version(), HT_VERSION_STRING);
  assert_ptr_equal(ht_version(), ht_version()); /* static storage */
  assert_int_equal(ht_version_number(), HT_VERSION_NUMBER);
  assert_int_equal(ht_version_number(), HT_VERSION_MAJOR * 10000u +
                                            HT_VERSION_MINOR * 100u +
                                            HT_VERSION_PATCH);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(macros_are_the_project_version),
      cmocka_unit_test(library_agrees_with_the_macros),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
