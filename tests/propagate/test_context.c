/* Trace context comparison and sampling state, including NULL arguments
 * (both used to crash on NULL). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hoptrace/context.h"

static void test_equal(void **state) {
  (void)state;
  ht_trace_context a = {1, 2, 3, 4, HT_FLAG_SAMPLED}, b = a;
  assert_int_equal(ht_context_equal(&a, &b), 1);
  b.flags = 0;
  assert_int_equal(ht_context_equal(&a, &b), 0);
  b = a;
  b.parent_span_id = 5;
  assert_int_equal(ht_context_equal(&a, &b), 0);
  assert_int_equal(ht_context_equal(NULL, NULL), 1);
  assert_int_equal(ht_context_equal(&a, NULL), 0);
  assert_int_equal(ht_context_equal(NULL, &a), 0);
}

static void test_b3_sampling_of(void **state) {
  (void)state;
  ht_trace_context c = {1, 2, 3, 0, 0};
  assert_int_equal(ht_b3_sampling_of(&c), HT_B3_SAMPLING_DENY);
  c.flags = HT_FLAG_SAMPLED;
  assert_int_equal(ht_b3_sampling_of(&c), HT_B3_SAMPLING_ACCEPT);
  c.flags = HT_FLAG_DEBUG;
  assert_int_equal(ht_b3_sampling_of(&c), HT_B3_SAMPLING_DEBUG);
  assert_int_equal(ht_b3_sampling_of(NULL), HT_B3_SAMPLING_ABSENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equal),
      cmocka_unit_test(test_b3_sampling_of),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
