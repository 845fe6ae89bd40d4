/* Sampling configuration: defaults, text settings, environment, format,
 * validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "hoptrace/span.h"

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
  const char *bad = "x";
  assert_int_equal(ht_sampling_config_from_env(&c, &bad), 0);
  assert_null(bad);
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
  assert_int_equal(ht_sampling_config_from_env(&c, NULL), 0);
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
  const char *bad = NULL;
  assert_int_equal(ht_sampling_config_from_env(&c, &bad), HT_EINVAL);
  assert_string_equal(bad, "HT_SAMPLER");
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

/* Child mode: 100 root spans under the environment's configuration;
 * prints how many were sampled. */
static int env_child(void) {
  ht_span_info info = {"op", HT_SPAN_CLIENT, "svc", "ep"};
  int sampled = 0;
  for (int i = 0; i < 100; i++) {
    ht_span s;
    ht_span_init(&s);
    ht_span_start_root(&s, &info, HT_SAMPLE_DEFAULT);
    sampled += ht_span_is_sampled(&s);
  }
  printf("%d", sampled);
  return 0;
}

static char self_exe[4096];

/* Runs this binary in child mode with one environment variable set. */
static int sampled_in_child(const char *env_assignment) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  char *argv[] = {self_exe, "--env-child", NULL};
  char *envp[] = {(char *)env_assignment, NULL};
  pid_t pid;
  assert_int_equal(posix_spawn(&pid, self_exe, &fa, NULL, argv, envp), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  char out[32] = {0};
  size_t got = 0;
  ssize_t r;
  while (got < sizeof(out) - 1 &&
         (r = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0)
    got += (size_t)r;
  close(fds[0]);
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  return atoi(out);
}

static void process_sampler_comes_from_the_environment(void **state) {
  (void)state;
  assert_int_equal(sampled_in_child("HT_SAMPLER=never"), 0);
  assert_int_equal(sampled_in_child("HT_SAMPLER=always"), 100);
  assert_int_equal(sampled_in_child("HT_SAMPLE_RATIO=0"), 0);
  assert_int_equal(sampled_in_child("HT_SAMPLE_RATE=0"), 0);
  assert_int_equal(sampled_in_child("HT_SAMPLER=bogus"), 100); /* default */
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--env-child") == 0)
    return env_child();
  ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
  if (n <= 0)
    return 1;
  self_exe[n] = '\0';
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(process_sampler_comes_from_the_environment),
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
