/* hoptrace diff's figures (diff/diff_stats.h) on writes built by hand
 * (write_trace.h), whose osd.2 replica service alone grows by x: 10 us
 * more in B names it, with its change and all of the end-to-end change;
 * two halves of one recording differ in nothing significant; the slowest
 * 1 % against the rest names it too; the same seed, the same figures;
 * weights of 1/p move the quantiles; operations past the bound are
 * counted, not kept. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff/diff_boot.h"
#include "diff/diff_stats.h"
#include "write_trace.h"

#define P1 (UINT64_C(1) << 32)

/* n writes; every `every`th one (from `at`) x = slow, the others a jitter
 * of up to 50 ns (hashed: odd and even ids alike) */
static void fill(diff_set *s, int n, int every, int at, int64_t slow, int64_t base) {
  write w;
  for (int i = 0; i < n; i++) {
    uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    int64_t x = base + (int64_t)((h ^ (h >> 29)) % 50);
    if (every > 0 && i % every == at)
      x = slow;
    make(&w, x, P1);
    w.t.trace_lo = (uint64_t)i;
    assert_int_equal(diff_set_add(s, &w.t), 0);
  }
}

static const diff_row *named(const diff_result *r) {
  assert_non_null(r->culprit);
  const diff_key *k = r->culprit->key;
  assert_string_equal(k->service, "osd.2");
  assert_string_equal(k->name, "replica_write");
  assert_null(k->server);
  assert_int_equal(k->phase, CP_SERVICE);
  return r->culprit;
}

static void contributions_add_up(const diff_result *r) {
  for (size_t i = 0; i < r->n_ops; i++) {
    double sum = 0;
    for (size_t k = 0; k < r->ops[i].n_rows; k++)
      sum += r->ops[i].rows[k].contrib_ns;
    assert_true(fabs(sum - r->ops[i].e2e.contrib_ns) < 1e-6 * (1 + fabs(sum)));
  }
}

/* frees what a test made (b_set may be NULL) */
static void done(diff_result *r, diff_view *a, diff_view *b, diff_set *a_set, diff_set *b_set,
                 diff_keys *keys) {
  diff_result_free(r);
  diff_view_free(a);
  diff_view_free(b);
  diff_set_free(a_set);
  if (b_set != NULL)
    diff_set_free(b_set);
  diff_keys_free(keys);
}

static void slow_replica_is_named(void **state) {
  (void)state;
  diff_keys keys;
  diff_set a, b;
  diff_keys_init(&keys);
  diff_set_init(&a, &keys);
  diff_set_init(&b, &keys);
  fill(&a, 200, 0, 0, 0, 0);
  fill(&b, 200, 0, 0, 0, 10000);
  diff_view va, vb;
  assert_int_equal(diff_view_all(&a, &va), 0);
  assert_int_equal(diff_view_all(&b, &vb), 0);
  diff_result r, again;
  assert_int_equal(diff_compare(&va, &vb, 500, 7, &r), 0);
  const diff_row *c = named(&r);
  assert_true(fabs(c->p50.delta - 10000) < 250); /* a class is 2.2 % wide */
  assert_true(c->p50.lo <= c->p50.delta && c->p50.delta <= c->p50.hi && c->p50.lo > 0);
  assert_true(fabs(c->share - 1) < 1e-6);
  assert_true(fabs(r.ops[0].e2e.contrib_ns - 10000) < 1e-6);
  assert_true(r.tests > 0);
  contributions_add_up(&r);
  /* the same seed, the same figures */
  assert_int_equal(diff_compare(&va, &vb, 500, 7, &again), 0);
  assert_true(again.culprit->p50.lo == c->p50.lo && again.culprit->p99.hi == c->p99.hi);
  diff_result_free(&again);
  done(&r, &va, &vb, &a, &b, &keys);
}

static void halves_are_alike(void **state) {
  (void)state;
  diff_keys keys;
  diff_set s;
  diff_keys_init(&keys);
  diff_set_init(&s, &keys);
  fill(&s, 400, 0, 0, 0, 0);
  diff_view even, odd;
  assert_int_equal(diff_view_split_halves(&s, &even, &odd), 0);
  assert_int_equal(even.n, 200);
  assert_int_equal(odd.n, 200);
  diff_result r;
  assert_int_equal(diff_compare(&even, &odd, 500, 1, &r), 0);
  assert_null(r.culprit);
  for (size_t k = 0; k < r.ops[0].n_rows; k++)
    assert_false(r.ops[0].rows[k].significant);
  done(&r, &even, &odd, &s, NULL, &keys);
}

static void slowest_percent_is_named(void **state) {
  (void)state;
  diff_keys keys;
  diff_set s;
  diff_keys_init(&keys);
  diff_set_init(&s, &keys);
  fill(&s, 2000, 100, 7, 100000, 0);
  diff_view rest, slow;
  assert_int_equal(diff_view_split_tail(&s, 0.99, &rest, &slow), 0);
  assert_int_equal(slow.n, 20);
  assert_int_equal(rest.n, 1980);
  diff_result r;
  assert_int_equal(diff_compare(&rest, &slow, 500, 1, &r), 0);
  const diff_row *c = named(&r);
  assert_true(fabs(c->p50.delta - 100000) < 2500);
  contributions_add_up(&r);
  done(&r, &rest, &slow, &s, NULL, &keys);
}

static void weights_move_quantiles(void **state) {
  (void)state;
  /* 10 samples at ~100 ns of weight 1, 10 at ~1000 ns of weight 3: the
   * weighted median is among the slow ones */
  boot_bin bins[2] = {{boot_class(100), 10, 10}, {boot_class(1000), 30, 10}};
  double q = boot_quantile(bins, 2, NULL, 0.5);
  assert_true(q > 950 && q < 1050);
  double mult[2] = {1, 0};
  assert_true(boot_quantile(bins, 2, mult, 0.5) < 110);
  assert_true(isnan(boot_quantile(bins, 0, NULL, 0.5)));
}

static void operations_are_bounded(void **state) {
  (void)state;
  diff_keys keys;
  diff_set s;
  diff_keys_init(&keys);
  diff_set_init(&s, &keys);
  char names[DIFF_OPS + 10][16];
  write w;
  for (int i = 0; i < DIFF_OPS + 10; i++) {
    snprintf(names[i], sizeof(names[i]), "op%d", i);
    make(&w, 0, P1);
    w.c.name = names[i];
    assert_int_equal(diff_set_add(&s, &w.t), i < DIFF_OPS ? 0 : -1);
  }
  assert_int_equal(s.n, DIFF_OPS);
  assert_int_equal(s.dropped, 10);
  diff_set_free(&s);
  diff_keys_free(&keys);
}

/* Times at int64's extremes (write_trace.h make_far): every cell stays
 * positive and the trace's cells add up within int64 (the path splits
 * the root's window, its length saturated). */
static void int64_extremes_stay_positive(void **state) {
  (void)state;
  diff_keys keys;
  diff_set s;
  diff_keys_init(&keys);
  diff_set_init(&s, &keys);
  far_trace f;
  make_far(&f, P1);
  assert_int_equal(diff_set_add(&s, &f.t), 0);
  assert_int_equal(s.traces[0].e2e_ns, INT64_MAX);
  int64_t sum = 0;
  for (size_t i = 0; i < s.n_cells; i++) {
    assert_true(s.cells[i].ns > 0);
    assert_false(__builtin_add_overflow(sum, s.cells[i].ns, &sum));
  }
  assert_true(sum > INT64_MAX / 2);
  diff_set_free(&s);
  diff_keys_free(&keys);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(slow_replica_is_named),
      cmocka_unit_test(halves_are_alike),
      cmocka_unit_test(slowest_percent_is_named),
      cmocka_unit_test(weights_move_quantiles),
      cmocka_unit_test(operations_are_bounded),
      cmocka_unit_test(int64_extremes_stay_positive),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
