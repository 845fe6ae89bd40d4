/* Trace discovery's bounds (trace_dirs.h): the stop flag ends a walk, a
 * link below the input is not followed, errors have a reason. The tree
 * is made in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "read/trace_dirs.h"

static char root[] = "/tmp/ht-trace-dirs.XXXXXX";

static void put_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static int make_tree(void **state) {
  (void)state;
  char p[256];
  assert_non_null(mkdtemp(root));
  snprintf(p, sizeof(p), "%s/in", root), mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/in/t", root), mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/in/t/metadata", root), put_file(p, "m");
  snprintf(p, sizeof(p), "%s/in/t/stream_0", root), put_file(p, "data");
  snprintf(p, sizeof(p), "%s/out", root), mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/out/metadata", root), put_file(p, "m");
  snprintf(p, sizeof(p), "%s/out/stream_0", root), put_file(p, "data");
  char target[256];
  snprintf(target, sizeof(target), "%s/out", root);
  snprintf(p, sizeof(p), "%s/in/link", root);
  assert_int_equal(symlink(target, p), 0);
  return 0;
}

static int remove_tree(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

static void free_dirs(char **dirs, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(dirs[i]);
  free(dirs);
}

static void links_below_the_input_are_not_followed(void **state) {
  (void)state;
  char in[256];
  snprintf(in, sizeof(in), "%s/in", root);
  char **dirs = NULL;
  size_t n = 0;
  bt_trace_dirs_stop_on(NULL);
  assert_int_equal(bt_find_trace_dirs(in, &dirs, &n, 0), 0);
  assert_int_equal(n, 1); /* in/t, not in/link (out) */
  assert_non_null(strstr(dirs[0], "/in/t"));
  free_dirs(dirs, n);
}

static void the_stop_flag_ends_a_walk(void **state) {
  (void)state;
  char in[256];
  snprintf(in, sizeof(in), "%s/in", root);
  atomic_int stop = SIGINT;
  bt_trace_dirs_stop_on(&stop);
  char **dirs = NULL;
  size_t n = 0;
  assert_int_equal(bt_find_trace_dirs(in, &dirs, &n, 0), TRACE_DIRS_STOPPED);
  assert_int_equal(n, 0);
  assert_non_null(strstr(bt_trace_dirs_error(TRACE_DIRS_STOPPED), "interrupted"));
  stop = 0;
  assert_int_equal(bt_find_trace_dirs(in, &dirs, &n, 0), 0);
  assert_int_equal(n, 1);
  bt_trace_dirs_stop_on(NULL);
  free_dirs(dirs, n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(links_below_the_input_are_not_followed),
      cmocka_unit_test(the_stop_flag_ends_a_walk),
  };
  return cmocka_run_group_tests(tests, make_tree, remove_tree);
}
