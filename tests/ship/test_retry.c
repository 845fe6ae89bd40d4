/* retry.h: which replies are retried, the back-off's growth, cap and
 * jitter, Retry-After in seconds and as an HTTP date. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ship/retry.h"

static void worth(void **state) {
  (void)state;
  assert_true(retry_worth(0));
  assert_true(retry_worth(429));
  assert_true(retry_worth(502));
  assert_true(retry_worth(503));
  assert_true(retry_worth(504));
  assert_false(retry_worth(400));
  assert_false(retry_worth(401));
  assert_false(retry_worth(500));
  assert_false(retry_worth(200));
}

static void backoff(void **state) {
  (void)state;
  unsigned seed = 1;
  int64_t lo[12] = {0}, hi[12] = {0};
  for (int k = 0; k < 2000; k++)
    for (int n = 1; n < 12; n++) {
      int64_t w = retry_backoff_ms(n, &seed);
      int64_t base = (int64_t)RETRY_FIRST_MS << (n - 1);
      if (base > RETRY_MAX_WAIT_MS)
        base = RETRY_MAX_WAIT_MS;
      assert_true(w >= base / 2 && w < base * 3 / 2);
      if (k == 0 || w < lo[n])
        lo[n] = w;
      if (w > hi[n])
        hi[n] = w;
    }
  /* jittered: the waits of one attempt spread over most of the range */
  assert_true(hi[1] - lo[1] > RETRY_FIRST_MS * 8 / 10);
  assert_true(hi[11] - lo[11] > RETRY_MAX_WAIT_MS * 8 / 10);
}

static void after(void **state) {
  (void)state;
  time_t now = 784111777; /* Sun, 06 Nov 1994 08:49:37 GMT */
  assert_int_equal(retry_after_ms("3", now), 3000);
  assert_int_equal(retry_after_ms(" 0\r\n", now), 0);
  assert_int_equal(retry_after_ms("999999999999999999999", now), 86400 * 1000);
  assert_int_equal(retry_after_ms("Sun, 06 Nov 1994 08:49:47 GMT", now), 10000);
  assert_int_equal(retry_after_ms("Sun, 06 Nov 1994 08:49:00 GMT", now), 0);
  assert_int_equal(retry_after_ms(NULL, now), -1);
  assert_int_equal(retry_after_ms("", now), -1);
  assert_int_equal(retry_after_ms("3 s", now), -1);
  assert_int_equal(retry_after_ms("soon", now), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(worth), cmocka_unit_test(backoff),
                                     cmocka_unit_test(after)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
