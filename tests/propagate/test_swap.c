/* Runtime sampler swap under concurrent use: one thread decides without
 * pause while another replaces the configuration thousands of times (and
 * short-lived threads come and go). Under ASan/TSan a reclaimed sampler
 * still in use would be caught; counters must add up exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>

#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "propagate/span_path.h"
#include "test_rng.h"

#define DECISIONS 200000
#define SWAPS 2000

static atomic_int stop;
static const ht_span_info info = {"op", HT_SPAN_CLIENT, "svc", ""};

static void config_of(int i, ht_sampling_config *c) {
  ht_sampling_config_default(c);
  switch (i % 4) {
  case 0: c->kind = HT_SAMPLER_ALWAYS; break;
  case 1: c->kind = HT_SAMPLER_NEVER; break;
  case 2: c->kind = HT_SAMPLER_RATIO; c->ratio = 0.5; break;
  default: c->kind = HT_SAMPLER_RATE; c->rate = 1000; break;
  }
}

typedef struct decider {
  unsigned roots, remotes, bad;
} decider;

static void *decide_loop(void *arg) {
  decider *d = arg;
  ht_trace_context remote = {1, 2, 3, 0, HT_FLAG_SAMPLED};
  for (int i = 0; i < DECISIONS; i++) {
    ht_span s;
    ht_span_init(&s);
    if (ht_span_start_root(&s, &info, HT_SAMPLE_DEFAULT) != 0)
      d->bad++;
    d->roots++;
    if (s.ctx.flags & ~HT_FLAG_SAMPLED)
      d->bad++;
    ht_span_finish(&s);
    if (ht_span_start_remote(&s, &remote, &info) != 0)
      d->bad++;
    d->remotes++;
  }
  return NULL;
}

static void *swap_loop(void *arg) {
  int *swaps = arg;
  for (int i = 0; i < SWAPS && !atomic_load(&stop); i++) {
    ht_sampling_config c;
    config_of(i, &c);
    if (ht_sampling_set(&c) == 0)
      (*swaps)++;
  }
  return NULL;
}

static void swap_while_deciding(void **state) {
  (void)state;
  ht_sampling_stats before = {.size = sizeof(before)};
  ht_sampling_stats after = {.size = sizeof(after)};
  assert_int_equal(ht_sampling_get_stats(&before), 0);
  decider d = {0, 0, 0};
  int swaps = 0;
  pthread_t a, b;
  assert_int_equal(pthread_create(&a, NULL, decide_loop, &d), 0);
  assert_int_equal(pthread_create(&b, NULL, swap_loop, &swaps), 0);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  assert_int_equal(ht_sampling_get_stats(&after), 0);
  assert_int_equal(d.bad, 0);
  assert_int_equal(swaps, SWAPS);
  assert_int_equal(after.traces_started - before.traces_started, d.roots);
  assert_int_equal((after.traces_sampled - before.traces_sampled) +
                       (after.traces_dropped - before.traces_dropped),
                   d.roots);
  assert_int_equal(after.remote_received - before.remote_received, d.remotes);
  assert_int_equal(after.config_changes - before.config_changes, SWAPS);
}

static void *short_lived(void *arg) {
  (void)arg;
  for (int i = 0; i < 2000; i++) {
    ht_span s;
    ht_span_init(&s);
    ht_span_start_root(&s, &info, HT_SAMPLE_DEFAULT);
  }
  return NULL;
}

static void threads_come_and_go_during_swaps(void **state) {
  (void)state;
  atomic_store(&stop, 0);
  int swaps = 0;
  pthread_t b;
  assert_int_equal(pthread_create(&b, NULL, swap_loop, &swaps), 0);
  for (int i = 0; i < 40; i++) {
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
      assert_int_equal(pthread_create(&t[k], NULL, short_lived, NULL), 0);
    for (int k = 0; k < 2; k++)
      pthread_join(t[k], NULL);
  }
  atomic_store(&stop, 1);
  pthread_join(b, NULL);
  assert_true(swaps > 0);
}

static void a_swap_is_visible_to_the_next_decision(void **state) {
  (void)state;
  for (int i = 0; i < 100; i++) {
    ht_sampling_config c;
    config_of(i % 2, &c); /* ALWAYS, NEVER */
    assert_int_equal(ht_sampling_set(&c), 0);
    ht_span s;
    ht_span_init(&s);
    ht_span_start_root(&s, &info, HT_SAMPLE_DEFAULT);
    assert_int_equal(ht_span_is_sampled(&s), i % 2 == 0);
    ht_sampling_config got = {.size = sizeof(got)};
    ht_sampling_get(&got);
    assert_int_equal(got.kind, c.kind);
  }
}

/* The process decisions (with their clock-free fast path) are exactly a
 * standalone sampler's with the same configuration, for every kind that
 * reads no clock, every remote flag combination and every hint. */
static void process_decisions_match_the_sampler(void **state) {
  (void)state;
  static const struct {
    ht_sampler_kind kind, root;
    double ratio;
  } cases[] = {
      {HT_SAMPLER_ALWAYS, HT_SAMPLER_ALWAYS, 0},
      {HT_SAMPLER_NEVER, HT_SAMPLER_ALWAYS, 0},
      {HT_SAMPLER_RATIO, HT_SAMPLER_ALWAYS, 0.3},
      {HT_SAMPLER_RATIO, HT_SAMPLER_ALWAYS, 0.0},
      {HT_SAMPLER_RATIO, HT_SAMPLER_ALWAYS, 1.0},
      {HT_SAMPLER_PARENT, HT_SAMPLER_RATIO, 0.2},
      {HT_SAMPLER_PARENT, HT_SAMPLER_ALWAYS, 0},
      {HT_SAMPLER_PARENT, HT_SAMPLER_NEVER, 0},
  };
  test_rng rng = {91};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    ht_sampling_config cfg;
    ht_sampling_config_default(&cfg);
    cfg.kind = cases[c].kind;
    cfg.root_kind = cases[c].root;
    cfg.ratio = cases[c].ratio;
    assert_int_equal(ht_sampling_set(&cfg), 0);
    ht_sampler *s;
    assert_int_equal(ht_sampler_new(&cfg, &s), 0);
    for (int i = 0; i < 5000; i++) {
      uint64_t hi = test_rng_below(&rng, 2) ? test_rng_next(&rng) : 0;
      uint64_t lo = test_rng_next(&rng) | 1;
      ht_sample_hint hint = (ht_sample_hint)(test_rng_below(&rng, 8) < 5 ? 0 : test_rng_below(&rng, 4));
      uint32_t flags = (uint32_t)test_rng_next(&rng) & 0x1fu; /* reserved bits too */
      ht_root_decision d = ht_active_decide_root(hi, lo, hint);
      uint32_t root = d.flags;
      uint64_t p = d.prob;
      if (root != ht_sampler_decide_root(s, hi, lo, hint, 0))
        fail_msg("case %zu id %d: root decisions differ", c, i);
      /* the fast path's probability is the standalone sampler's */
      if (p != (root & HT_FLAG_SAMPLED ? ht_sampler_root_probability(s, hint) : 0))
        fail_msg("case %zu id %d: root probabilities differ", c, i);
      if (ht_active_decide_remote(hi, lo, flags) !=
          ht_sampler_decide_remote(s, hi, lo, flags, 0))
        fail_msg("case %zu id %d: remote decisions (flags 0x%x) differ", c, i, flags);
    }
    ht_sampler_free(s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(swap_while_deciding),
      cmocka_unit_test(threads_come_and_go_during_swaps),
      cmocka_unit_test(a_swap_is_visible_to_the_next_decision),
      cmocka_unit_test(process_decisions_match_the_sampler),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
