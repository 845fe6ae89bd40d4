/* hoptrace report's latency histogram against the exact sorted samples:
 * exact below 128 ns, count, min and max; every quantile within 0.4 % of
 * the exact value at the same rank; memory by octaves seen, not samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "output/latency_hist.h"
#include "test_rng.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int64_t exact(const int64_t *sorted, size_t n, double p) {
  return sorted[(size_t)(p * (double)(n - 1) + 0.5)];
}

static void small_values_are_exact(void **state) {
  (void)state;
  latency_hist h = {0};
  int64_t v[128];
  for (int i = 0; i < 128; i++) {
    v[i] = 127 - i;
    assert_int_equal(latency_hist_add(&h, v[i]), 0);
  }
  qsort(v, 128, sizeof(v[0]), cmp_i64);
  for (double p = 0; p <= 1.0; p += 0.01)
    assert_int_equal(latency_hist_quantile(&h, p), exact(v, 128, p));
  assert_int_equal(h.count, 128);
  assert_int_equal(h.min, 0);
  assert_int_equal(h.max, 127);
  latency_hist_free(&h);
}

static void quantiles_within_0_4_percent(void **state) {
  (void)state;
  enum { N = 200000 };
  static int64_t v[N];
  test_rng rng = {20261123};
  latency_hist h = {0};
  for (size_t i = 0; i < N; i++) {
    /* log-uniform from 1 ns to ~17 s: every octave in use */
    int bits = (int)(test_rng_next(&rng) % 34);
    v[i] = (int64_t)(test_rng_next(&rng) & ((UINT64_C(1) << bits) - 1)) + 1;
    assert_int_equal(latency_hist_add(&h, v[i]), 0);
  }
  assert_int_equal(latency_hist_add(&h, -5), 1); /* ignored */
  qsort(v, N, sizeof(v[0]), cmp_i64);
  assert_int_equal(h.count, N);
  assert_int_equal(h.min, v[0]);
  assert_int_equal(h.max, v[N - 1]);
  const double ps[] = {0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1};
  for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
    double want = (double)exact(v, N, ps[i]);
    double got = (double)latency_hist_quantile(&h, ps[i]);
    assert_true(got >= want * (1 - 0.004) - 0.5 && got <= want * (1 + 0.004) + 0.5);
  }
  latency_hist_free(&h);
}

static void memory_follows_octaves_not_samples(void **state) {
  (void)state;
  latency_hist h = {0};
  for (int64_t i = 0; i < 1000000; i++)
    assert_int_equal(latency_hist_add(&h, 1000000 + i % 48576), 0);
  int groups = 0;
  for (int g = 0; g < LATENCY_HIST_GROUPS; g++)
    groups += h.groups[g] != NULL;
  assert_int_equal(groups, 1); /* 1 KiB for a million samples */
  assert_int_equal(latency_hist_add(&h, INT64_MAX), 0);
  assert_int_equal(latency_hist_quantile(&h, 1), INT64_MAX);
  assert_true(latency_hist_quantile(&h, 0.5) < 1048576);
  latency_hist_free(&h);
  assert_int_equal(h.count, 0);
  assert_int_equal(latency_hist_quantile(&h, 0.5), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_values_are_exact),
      cmocka_unit_test(quantiles_within_0_4_percent),
      cmocka_unit_test(memory_follows_octaves_not_samples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
