/* util/grow.h: an array grown by doubling from its first capacity, left
 * as it was when the size would overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/grow.h"

static void doubles_from_first(void **state) {
  (void)state;
  int *a = NULL;
  size_t cap = 0;
  assert_int_equal(ht_grow(&a, &cap, 1, sizeof(*a), 4), 0);
  assert_int_equal(cap, 4);
  a[3] = 7;
  assert_int_equal(ht_grow(&a, &cap, 4, sizeof(*a), 4), 0); /* fits: no change */
  assert_int_equal(cap, 4);
  assert_int_equal(ht_grow(&a, &cap, 5, sizeof(*a), 4), 0);
  assert_int_equal(cap, 8);
  assert_int_equal(ht_grow(&a, &cap, 100, sizeof(*a), 4), 0);
  assert_int_equal(cap, 128);
  assert_int_equal(a[3], 7); /* kept through the moves */
  free(a);
}

static void overflow_leaves_it(void **state) {
  (void)state;
  int *a = NULL;
  size_t cap = 0;
  assert_int_equal(ht_grow(&a, &cap, 2, sizeof(*a), 0), 0); /* first 0: from 1 */
  assert_int_equal(cap, 2);
  int *before = a;
  /* the capacity's bytes would pass SIZE_MAX */
  assert_int_equal(ht_grow(&a, &cap, SIZE_MAX / 2, sizeof(*a), 16), -1);
  /* the capacity itself would */
  assert_int_equal(ht_grow(&a, &cap, SIZE_MAX, 1, 16), -1);
  assert_ptr_equal(a, before);
  assert_int_equal(cap, 2);
  free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(doubles_from_first),
      cmocka_unit_test(overflow_leaves_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
