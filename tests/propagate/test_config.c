/* Sampling configuration: defaults, text settings, environment, format,
 * validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/sampler.h"

static const char *const env_names[] = {
    "HT_SAMPLER", "HT_SAMPLE_ROOT", "HT_SAMPLE_RATIO", "HT_SAMPLE_RATE",
    "HT_SAMPLE_BURST", "HT_TRUST_REMOTE_DEBUG", "HT_REMOTE_DEBUG_RATE"};

static int clear_env(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++)
    unsetenv(env_names[i]);
  return 0;
}

/* Field by field: the struct has padding. */
static void assert_cfg_equal(const ht_sampling_config *a,
                             const ht_sampling_config *b) {
  assert_int_equal(a->kind, b->kind);
  assert_int_equal(a->root_kind, b->root_kind);
  assert_true(a->ratio == b->ratio);
  assert_true(a->rate == b->rate);
  assert_true(a->burst == b->burst);
  assert_int_equal(a->trust_remote_debug, b->trust_remote_debug);
  assert_true(a->remote_debug_rate == b->remote_debug_rate);
}

static void defaults_are_valid(void **state) {
  (void)state;
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  assert_int_equal(ht_sampling_config_check(&c), 0);
  assert_int_equal(c.kind, HT_SAMPLER_PARENT);
  assert_int_equal(c.root_kind, HT_SAMPLER_ALWAYS);
  assert_int_equal(c.trust_remote_debug, 0);
}

static void text_settings_parse_and_reject(void **state) {
  (void)state;
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  assert_int_equal(ht_sampling_config_set(&c, "sampler", "ratio"), 0);
  assert_int_equal(c.kind, HT_SAMPLER_RATIO);
  assert_int_equal(ht_sampling_config_set(&c, "ratio", "0.25"), 0);
  assert_true(c.ratio == 0.25);
  assert_int_equal(ht_sampling_config_set(&c, "rate", "50"), 0);
  assert_int_equal(ht_sampling_config_set(&c, "burst", "5"), 0);
  assert_int_equal(ht_sampling_config_set(&c, "trust_remote_debug", "yes"), 0);
  assert_int_equal(c.trust_remote_debug, 1);
  assert_int_equal(ht_sampling_config_set(&c, "remote_debug_rate", "2.5"), 0);
  assert_int_equal(ht_sampling_config_set(&c, "root", "RATE"), 0);
  assert_int_equal(c.root_kind, HT_SAMPLER_RATE);
  ht_sampling_config before = c;
  assert_int_equal(ht_sampling_config_set(&c, "ratio", "1.5"), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "ratio", "nan"), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "ratio", "0.5x"), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "ratio", ""), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "rate", "-1"), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "burst", "0.5"), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "sampler", "sometimes"), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "root", "parent"), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "trust_remote_debug", "2"), HT_EINVAL);
  assert_int_equal(ht_sampling_config_set(&c, "colour", "red"), HT_ENOENT);
  assert_int_equal(ht_sampling_config_set(&c, NULL, "1"), HT_EINVAL);
  assert_cfg_equal(&c, &before);
}

static void check_rejects_bad_numbers(void **state) {
  (void)state;
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  c.ratio = -0.1;
  assert_int_equal(ht_sampling_config_check(&c), HT_EINVAL);
  ht_sampling_config_default(&c);
  c.rate = INFINITY;
  assert_int_equal(ht_sampling_config_check(&c), HT_EINVAL);
  ht_sampling_config_default(&c);
  c.kind = (ht_sampler_kind)9;
  assert_int_equal(ht_sampling_config_check(&c), HT_EINVAL);
  ht_sampling_config_default(&c);
  c.root_kind = HT_SAMPLER_PARENT;
  assert_int_equal(ht_sampling_config_check(&c), HT_EINVAL);
  ht_sampler *s = (ht_sampler *)&c; /* must be left alone on error */
  assert_int_equal(ht_sampler_new(&c, &s), HT_EINVAL);
  assert_ptr_equal(s, (ht_sampler *)&c);
  assert_int_equal(ht_sampling_config_check(NULL), HT_EINVAL);
}

static void environment_overrides_defaults(void **state) {
  (void)state;
  setenv("HT_SAMPLER", "rate", 1);
  setenv("HT_SAMPLE_RATE", "12.5", 1);
  setenv("HT_TRUST_REMOTE_DEBUG", "1", 1);
  setenv("HT_REMOTE_DEBUG_RATE", "3", 1);
  ht_sampling_config c;
  assert_int_equal(ht_sampling_config_from_env(&c), 0);
  assert_int_equal(c.kind, HT_SAMPLER_RATE);
  assert_true(c.rate == 12.5);
  assert_int_equal(c.trust_remote_debug, 1);
  assert_true(c.remote_debug_rate == 3);
  clear_env(NULL);
}

static void lone_ratio_selects_ratio_roots(void **state) {
  (void)state;
  setenv("HT_SAMPLE_RATIO", "0.01", 1);
  ht_sampling_config c;
  assert_int_equal(ht_sampling_config_from_env(&c), 0);
  assert_int_equal(c.kind, HT_SAMPLER_PARENT);
  assert_int_equal(c.root_kind, HT_SAMPLER_RATIO);
  assert_true(c.ratio == 0.01);
  clear_env(NULL);
}

static void bad_environment_value_keeps_default_and_reports(void **state) {
  (void)state;
  setenv("HT_SAMPLER", "bogus", 1);
  setenv("HT_SAMPLE_RATIO", "2", 1);
  ht_sampling_config c;
  assert_int_equal(ht_sampling_config_from_env(&c), HT_EINVAL);
  assert_int_equal(ht_sampling_config_check(&c), 0);
  assert_int_equal(c.kind, HT_SAMPLER_PARENT);
  assert_true(c.ratio == 1.0);
  clear_env(NULL);
}

static void format_round_trips_through_set(void **state) {
  (void)state;
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  c.kind = HT_SAMPLER_RATIO;
  c.ratio = 0.1;
  c.trust_remote_debug = 1;
  char buf[256];
  assert_int_equal(ht_sampling_config_format(&c, buf, sizeof(buf)), 0);
  assert_non_null(strstr(buf, "sampler=ratio"));
  assert_non_null(strstr(buf, "trust_remote_debug=1"));
  /* Parse each key=value back. */
  ht_sampling_config back;
  ht_sampling_config_default(&back);
  char *save = NULL;
  for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(tok, '=');
    assert_non_null(eq);
    *eq = '\0';
    assert_int_equal(ht_sampling_config_set(&back, tok, eq + 1), 0);
  }
  assert_cfg_equal(&back, &c);
  char small[8];
  assert_int_equal(ht_sampling_config_format(&c, small, sizeof(small)), HT_ENOSPC);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_are_valid),
      cmocka_unit_test(text_settings_parse_and_reject),
      cmocka_unit_test(check_rejects_bad_numbers),
      cmocka_unit_test_setup(environment_overrides_defaults, clear_env),
      cmocka_unit_test_setup(lone_ratio_selects_ratio_roots, clear_env),
      cmocka_unit_test_setup(bad_environment_value_keeps_default_and_reports, clear_env),
      cmocka_unit_test(format_round_trips_through_set),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
