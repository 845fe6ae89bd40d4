/* Sampler decisions: kinds, hints, ratio statistics and determinism
 * (also in a separate process), token-bucket rate on an injected clock,
 * parent-based, and the remote-DEBUG policy. Fixed seeds; no timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hoptrace/context.h"
#include "hoptrace/sampler.h"
#include "test_rng.h"

#define S HT_FLAG_SAMPLED
#define D HT_FLAG_DEBUG
#define SEC 1000000000ull

static ht_sampler *make(ht_sampler_kind kind, ht_sampler_kind root,
                        double ratio, double rate, double burst) {
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  c.kind = kind;
  c.root_kind = root;
  c.ratio = ratio;
  c.rate = rate;
  c.burst = burst;
  ht_sampler *s = NULL;
  assert_int_equal(ht_sampler_new(&c, &s), 0);
  return s;
}

static ht_sampler *make_debug(ht_sampler_kind kind, int trust, double rate) {
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  c.kind = kind;
  c.root_kind = HT_SAMPLER_NEVER;
  c.trust_remote_debug = trust;
  c.remote_debug_rate = rate;
  ht_sampler *s = NULL;
  assert_int_equal(ht_sampler_new(&c, &s), 0);
  return s;
}

static void always_and_never(void **state) {
  (void)state;
  ht_sampler *a = make(HT_SAMPLER_ALWAYS, 0, 1, 0, 0);
  ht_sampler *n = make(HT_SAMPLER_NEVER, 0, 1, 0, 0);
  for (uint64_t i = 1; i < 1000; i++) {
    assert_int_equal(ht_sampler_decide_root(a, i, i, HT_SAMPLE_DEFAULT, 0), S);
    assert_int_equal(ht_sampler_decide_root(n, i, i, HT_SAMPLE_DEFAULT, 0), 0);
    /* Non-parent kinds ignore the peer's SAMPLED flag. */
    assert_int_equal(ht_sampler_decide_remote(a, i, i, 0, 0), S);
    assert_int_equal(ht_sampler_decide_remote(n, i, i, S, 0), 0);
  }
  ht_sampler_free(a);
  ht_sampler_free(n);
}

static void hints_override_the_sampler_for_roots(void **state) {
  (void)state;
  ht_sampler *n = make(HT_SAMPLER_NEVER, 0, 1, 0, 0);
  ht_sampler *a = make(HT_SAMPLER_ALWAYS, 0, 1, 0, 0);
  assert_int_equal(ht_sampler_decide_root(n, 1, 2, HT_SAMPLE_YES, 0), S);
  assert_int_equal(ht_sampler_decide_root(n, 1, 2, HT_SAMPLE_DEBUG, 0), S | D);
  assert_int_equal(ht_sampler_decide_root(a, 1, 2, HT_SAMPLE_NO, 0), 0);
  ht_sampler_free(n);
  ht_sampler_free(a);
}

/* 1e6 ids from a fixed seed; binomial sigma = sqrt(n p (1-p)) = 300 for
 * p = 0.1. Bound: 2000 (> 6 sigma). */
/* What a root records as its probability: the ratio, 1 when forced or
 * always, 0 ("unknown") for a token bucket and when never recorded. */
static void root_probability_per_kind(void **state) {
  (void)state;
  const uint64_t one = HT_SAMPLE_P_ONE;
  ht_sampler *r = make(HT_SAMPLER_RATIO, 0, 0.25, 0, 0);
  ht_sampler *tiny = make(HT_SAMPLER_RATIO, 0, 1e-12, 0, 0);
  ht_sampler *pr = make(HT_SAMPLER_PARENT, HT_SAMPLER_RATIO, 0.1, 0, 0);
  ht_sampler *a = make(HT_SAMPLER_ALWAYS, 0, 0, 0, 0);
  ht_sampler *rate = make(HT_SAMPLER_RATE, 0, 0, 100, 0);
  ht_sampler *n = make(HT_SAMPLER_NEVER, 0, 0, 0, 0);
  assert_true(ht_sampler_root_probability(r, HT_SAMPLE_DEFAULT) == one / 4);
  assert_true(ht_sampler_root_probability(tiny, HT_SAMPLE_DEFAULT) == 1);
  uint64_t p = ht_sampler_root_probability(pr, HT_SAMPLE_DEFAULT);
  assert_true(p == (uint64_t)(0.1 * 4294967296.0 + 0.5));
  assert_true(ht_sampler_root_probability(a, HT_SAMPLE_DEFAULT) == one);
  assert_true(ht_sampler_root_probability(rate, HT_SAMPLE_DEFAULT) == 0);
  assert_true(ht_sampler_root_probability(rate, HT_SAMPLE_DEBUG) == one);
  assert_true(ht_sampler_root_probability(n, HT_SAMPLE_YES) == one);
  assert_true(ht_sampler_root_probability(n, HT_SAMPLE_DEFAULT) == 0);
  assert_true(ht_sampler_root_probability(r, HT_SAMPLE_NO) == 0);
  assert_true(ht_sampler_root_probability(NULL, HT_SAMPLE_YES) == 0);
  ht_sampler *all[] = {r, tiny, pr, a, rate, n};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    ht_sampler_free(all[i]);
}

static void ratio_fraction_is_within_statistical_bounds(void **state) {
  (void)state;
  const double ratios[] = {0.01, 0.1, 0.5, 0.9};
  for (size_t k = 0; k < 4; k++) {
    ht_sampler *s = make(HT_SAMPLER_RATIO, 0, ratios[k], 0, 0);
    test_rng rng = {42 + k};
    unsigned hits = 0;
    const unsigned n = 1000000;
    for (unsigned i = 0; i < n; i++) {
      uint64_t hi = test_rng_next(&rng), lo = test_rng_next(&rng) | 1;
      hits += ht_sampler_decide_root(s, hi, lo, HT_SAMPLE_DEFAULT, 0) == S;
    }
    double want = ratios[k] * n;
    assert_true(hits > want - 2000 && hits < want + 2000);
    ht_sampler_free(s);
  }
}

static void ratio_edges_and_nesting(void **state) {
  (void)state;
  ht_sampler *zero = make(HT_SAMPLER_RATIO, 0, 0.0, 0, 0);
  ht_sampler *one = make(HT_SAMPLER_RATIO, 0, 1.0, 0, 0);
  ht_sampler *lo = make(HT_SAMPLER_RATIO, 0, 0.05, 0, 0);
  ht_sampler *hi = make(HT_SAMPLER_RATIO, 0, 0.2, 0, 0);
  test_rng rng = {7};
  unsigned in_lo = 0;
  for (unsigned i = 0; i < 200000; i++) {
    uint64_t h = test_rng_next(&rng), l = test_rng_next(&rng) | 1;
    assert_int_equal(ht_sampler_decide_root(zero, h, l, 0, 0), 0);
    assert_int_equal(ht_sampler_decide_root(one, h, l, 0, 0), S);
    uint32_t a = ht_sampler_decide_root(lo, h, l, 0, 0);
    uint32_t b = ht_sampler_decide_root(hi, h, l, 0, 0);
    in_lo += a == S;
    if (a == S)
      assert_int_equal(b, S); /* lower ratio samples a subset */
    /* Same id, same answer, root or remote. */
    assert_int_equal(ht_sampler_decide_remote(lo, h, l, 0, 0), a);
  }
  assert_true(in_lo > 9000 && in_lo < 11000);
  ht_sampler_free(zero);
  ht_sampler_free(one);
  ht_sampler_free(lo);
  ht_sampler_free(hi);
}

/* Ratio decisions for 4096 ids from seed 99, as a '0'/'1' string. */
static void ratio_bitmap(char *out, size_t n) {
  ht_sampler *s = make(HT_SAMPLER_RATIO, 0, 0.3, 0, 0);
  test_rng rng = {99};
  for (size_t i = 0; i < n; i++) {
    uint64_t h = test_rng_next(&rng), l = test_rng_next(&rng) | 1;
    out[i] = ht_sampler_decide_root(s, h, l, 0, 0) ? '1' : '0';
  }
  out[n] = '\0';
  ht_sampler_free(s);
}

#define BITMAP 4096
static const char *self_path;

static void ratio_is_the_same_in_another_process(void **state) {
  (void)state;
  char mine[BITMAP + 1], theirs[BITMAP + 2];
  ratio_bitmap(mine, BITMAP);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  char *argv[] = {(char *)self_path, "--ratio-bitmap", NULL};
  extern char **environ;
  pid_t pid;
  assert_int_equal(posix_spawn(&pid, self_path, &fa, NULL, argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  size_t got = 0;
  ssize_t r;
  while (got < sizeof(theirs) - 1 &&
         (r = read(fds[0], theirs + got, sizeof(theirs) - 1 - got)) > 0)
    got += (size_t)r;
  close(fds[0]);
  theirs[got] = '\0';
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_int_equal(got, BITMAP);
  assert_memory_equal(mine, theirs, BITMAP);
  assert_non_null(strchr(mine, '1'));
  assert_non_null(strchr(mine, '0'));
}

static void rate_admits_a_burst_then_rate_per_second(void **state) {
  (void)state;
  ht_sampler *s = make(HT_SAMPLER_RATE, 0, 1, 100, 10);
  uint64_t t0 = 5 * SEC;
  unsigned burst = 0;
  for (int i = 0; i < 50; i++)
    burst += ht_sampler_decide_root(s, 1, 1, 0, t0) == S;
  assert_int_equal(burst, 10);
  /* 1000 arrivals per second for 10 simulated seconds. */
  unsigned got = 0;
  for (uint64_t i = 1; i <= 10000; i++)
    got += ht_sampler_decide_root(s, 1, 1, 0, t0 + i * (SEC / 1000)) == S;
  assert_true(got >= 999 && got <= 1001);
  ht_sampler_free(s);
}

static void rate_zero_admits_nothing_and_idle_bucket_refills(void **state) {
  (void)state;
  ht_sampler *z = make(HT_SAMPLER_RATE, 0, 1, 0, 0);
  for (int i = 0; i < 100; i++)
    assert_int_equal(ht_sampler_decide_root(z, 1, 1, 0, (uint64_t)i * SEC), 0);
  ht_sampler_free(z);
  ht_sampler *s = make(HT_SAMPLER_RATE, 0, 1, 2, 4);
  unsigned a = 0, b = 0;
  for (int i = 0; i < 20; i++)
    a += ht_sampler_decide_root(s, 1, 1, 0, 10 * SEC) == S;
  for (int i = 0; i < 20; i++) /* one hour idle: bucket full again, no more */
    b += ht_sampler_decide_root(s, 1, 1, 0, 3610 * SEC) == S;
  assert_int_equal(a, 4);
  assert_int_equal(b, 4);
  ht_sampler_free(s);
}

/* Found by fuzz_control: rate 2e-29/s made the interval overflow uint64. */
static void tiny_rate_admits_one_then_nothing(void **state) {
  (void)state;
  ht_sampler *s = make(HT_SAMPLER_RATE, 0, 1, 2e-29, 0);
  unsigned got = 0;
  for (int i = 0; i < 100; i++)
    got += ht_sampler_decide_root(s, 1, 1, 0, (uint64_t)i * 3600 * SEC) == S;
  assert_int_equal(got, 1);
  ht_sampler_free(s);
}

static void parent_follows_remote_flag_and_roots_use_root_kind(void **state) {
  (void)state;
  ht_sampler *p = make(HT_SAMPLER_PARENT, HT_SAMPLER_NEVER, 1, 0, 0);
  ht_sampler *q = make(HT_SAMPLER_PARENT, HT_SAMPLER_RATIO, 0.5, 0, 0);
  ht_sampler *r = make(HT_SAMPLER_RATIO, 0, 0.5, 0, 0);
  test_rng rng = {3};
  for (int i = 0; i < 10000; i++) {
    uint64_t h = test_rng_next(&rng), l = test_rng_next(&rng) | 1;
    assert_int_equal(ht_sampler_decide_remote(p, h, l, S, 0), S);
    assert_int_equal(ht_sampler_decide_remote(p, h, l, 0, 0), 0);
    assert_int_equal(ht_sampler_decide_root(p, h, l, 0, 0), 0);
    assert_int_equal(ht_sampler_decide_root(q, h, l, 0, 0),
                     ht_sampler_decide_root(r, h, l, 0, 0));
  }
  /* Reserved bits ride along unchanged. */
  assert_int_equal(ht_sampler_decide_remote(p, 1, 1, 0x80u | S, 0), 0x80u | S);
  assert_int_equal(ht_sampler_decide_remote(p, 1, 1, 0x80u, 0), 0x80u);
  ht_sampler_free(p);
  ht_sampler_free(q);
  ht_sampler_free(r);
}

static void untrusted_remote_debug_is_refused(void **state) {
  (void)state;
  ht_sampler *s = make_debug(HT_SAMPLER_PARENT, 0, 1000);
  for (int i = 0; i < 1000; i++) /* root sampler NEVER decides instead */
    assert_int_equal(ht_sampler_decide_remote(s, 1, (uint64_t)i + 1, S | D,
                                              (uint64_t)i * SEC),
                     0);
  ht_sampler_free(s);
  ht_sampling_config c;
  ht_sampling_config_default(&c); /* PARENT, root ALWAYS, untrusted */
  assert_int_equal(ht_sampler_new(&c, &s), 0);
  assert_int_equal(ht_sampler_decide_remote(s, 1, 1, S | D, 0), S);
  ht_sampler_free(s);
}

static void trusted_remote_debug_is_rate_limited(void **state) {
  (void)state;
  ht_sampler *s = make_debug(HT_SAMPLER_PARENT, 1, 5);
  unsigned flood = 0;
  for (int i = 0; i < 1000; i++)
    flood += ht_sampler_decide_remote(s, 1, 1, S | D, SEC) == (S | D);
  assert_int_equal(flood, 5);
  /* 100 DEBUG requests per second for 10 simulated seconds: <= 5/s. */
  unsigned honoured = 0, other = 0;
  for (uint64_t i = 1; i <= 1000; i++) {
    uint32_t f = ht_sampler_decide_remote(s, 1, 1, S | D, SEC + i * SEC / 100);
    honoured += f == (S | D);
    other += f != (S | D) && f != 0;
  }
  assert_true(honoured >= 49 && honoured <= 51);
  assert_int_equal(other, 0); /* refused ones: root NEVER, DEBUG stripped */
  ht_sampler_free(s);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--ratio-bitmap") == 0) {
    char bits[BITMAP + 1];
    ratio_bitmap(bits, BITMAP);
    fputs(bits, stdout);
    return 0;
  }
  self_path = "/proc/self/exe";
  static char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    self_path = exe;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(always_and_never),
      cmocka_unit_test(hints_override_the_sampler_for_roots),
      cmocka_unit_test(root_probability_per_kind),
      cmocka_unit_test(ratio_fraction_is_within_statistical_bounds),
      cmocka_unit_test(ratio_edges_and_nesting),
      cmocka_unit_test(ratio_is_the_same_in_another_process),
      cmocka_unit_test(rate_admits_a_burst_then_rate_per_second),
      cmocka_unit_test(rate_zero_admits_nothing_and_idle_bucket_refills),
      cmocka_unit_test(tiny_rate_admits_one_then_nothing),
      cmocka_unit_test(parent_follows_remote_flag_and_roots_use_root_kind),
      cmocka_unit_test(untrusted_remote_debug_is_refused),
      cmocka_unit_test(trusted_remote_debug_is_rate_limited),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
