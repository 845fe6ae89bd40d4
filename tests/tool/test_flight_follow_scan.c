/* When a followed snapshot is whole (flight_follow_scan.h): record
 * --flight's mark, a later snapshot of its session, the recorder's
 * capture.json, or files unchanged for FOLLOW_STABLE_MS; a snapshot
 * still growing is not; a later snapshot counts in its own session
 * only. Trees made in a temporary directory, the clock given by the
 * test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/flight_follow.h"
#include "cli/flight_follow_scan.h"

#define MS 1000000ll

static void put_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

/* DIR/NAME/ust/uid/0/64-bit with metadata and one stream file; its
 * trace directory in trace (512 bytes). */
static void snapshot(const char *dir, const char *name, char *trace) {
  const char *parts[] = {"", "/ust", "/ust/uid", "/ust/uid/0", "/ust/uid/0/64-bit"};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
    snprintf(trace, 512, "%s/%s%s", dir, name, parts[i]);
    mkdir(trace, 0700);
  }
  put_file(trace, "metadata", "m");
  put_file(trace, "hoptrace_0", "data");
}

static const follow_snap *named(const follow_scan *s, const char *name) {
  for (size_t i = 0; i < s->n; i++)
    if (strstr(s->snaps[i].dir, name) != NULL)
      return &s->snaps[i];
  return NULL;
}

static void rm_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void whole_when_marked_later_or_stable(void **state) {
  (void)state;
  char root[] = "/tmp/ht-follow-scan.XXXXXX", trace[512];
  assert_non_null(mkdtemp(root));
  const char *in[] = {root};
  follow_scan s = {0};
  snapshot(root, "capture-000001-20261128-010000-0", trace);
  assert_int_equal(follow_scan_run(&s, in, 1, 0), 0);
  assert_int_equal(s.n, 1);
  assert_false(s.snaps[0].whole); /* just found: may still be written */
  assert_int_equal(s.snaps[0].n, 0);
  /* still growing: not whole however long it has existed */
  put_file(trace, "hoptrace_1", "more");
  assert_int_equal(follow_scan_run(&s, in, 1, (FOLLOW_STABLE_MS - 1) * MS), 0);
  assert_false(s.snaps[0].whole);
  put_file(trace, "hoptrace_1", "more data");
  assert_int_equal(follow_scan_run(&s, in, 1, (2 * FOLLOW_STABLE_MS - 2) * MS), 0);
  assert_false(s.snaps[0].whole);
  /* unchanged for FOLLOW_STABLE_MS: taken for whole */
  assert_int_equal(follow_scan_run(&s, in, 1, (3 * FOLLOW_STABLE_MS - 2) * MS), 0);
  assert_true(s.snaps[0].whole);

  /* a second one: marked by record --flight, whole at once */
  char dir[600];
  snapshot(root, "capture-000002-20261128-010001-1", trace);
  snprintf(dir, sizeof(dir), "%s/capture-000002-20261128-010001-1", root);
  assert_int_equal(follow_scan_run(&s, in, 1, 10000 * MS), 0);
  assert_false(named(&s, "capture-000002")->whole);
  put_file(dir, FOLLOW_WRITTEN_MARK, "");
  assert_int_equal(follow_scan_run(&s, in, 1, 10001 * MS), 0);
  assert_true(named(&s, "capture-000002")->whole);

  /* a third one, then a fourth: the third is whole (the daemon took it
   * before the fourth), the fourth not yet */
  snapshot(root, "capture-000003-20261128-010002-2", trace);
  snapshot(root, "capture-000004-20261128-010003-3", trace);
  assert_int_equal(follow_scan_run(&s, in, 1, 10002 * MS), 0);
  assert_true(named(&s, "capture-000003")->whole);
  assert_false(named(&s, "capture-000004")->whole);
  assert_int_equal(named(&s, "capture-000004")->n, 3);
  /* the recorder ended: every snapshot before its capture.json is whole */
  assert_false(follow_scan_ended(in, 1));
  put_file(root, "capture.json", "{}");
  assert_true(follow_scan_ended(in, 1));
  /* several hosts' DIRs: ended once every one has */
  char other[600];
  snprintf(other, sizeof(other), "%s/other-host", root);
  assert_int_equal(mkdir(other, 0700), 0);
  const char *both[] = {root, other};
  assert_false(follow_scan_ended(both, 2));
  put_file(other, "capture.json", "{}");
  assert_true(follow_scan_ended(both, 2));
  assert_false(follow_scan_ended(both, 0));
  assert_int_equal(follow_scan_run(&s, in, 1, 10003 * MS), 0);
  assert_true(named(&s, "capture-000004")->whole);
  assert_false(s.not_snapshot);
  follow_scan_free(&s);
  rm_tree(root);
}

/* A trace outside any snapshot directory is not followed, and said. */
static void plain_trace_not_followed(void **state) {
  (void)state;
  char root[] = "/tmp/ht-follow-scan.XXXXXX", trace[512];
  assert_non_null(mkdtemp(root));
  const char *in[] = {root};
  follow_scan s = {0};
  snapshot(root, "plain", trace);
  assert_int_equal(follow_scan_run(&s, in, 1, 0), 0);
  assert_int_equal(s.n, 0);
  assert_true(s.not_snapshot);
  follow_scan_free(&s);
  rm_tree(root);
}

/* Many snapshots of one session, some names a prefix of others (-1,
 * -10), each with two trace directories: each snapshot known once, its
 * traces under it, however often it is looked at again. */
static void each_snapshot_found_once(void **state) {
  (void)state;
  char root[] = "/tmp/ht-follow-scan.XXXXXX", trace[512], name[64];
  assert_non_null(mkdtemp(root));
  const char *in[] = {root};
  follow_scan s = {0};
  enum { SNAPS = 40 };
  for (int i = 0; i < SNAPS; i++) {
    snprintf(name, sizeof(name), "capture-000001-20261128-010000-%d", i);
    snapshot(root, name, trace);
    char *bits = strstr(trace, "64-bit");
    memcpy(bits, "32", 2);
    mkdir(trace, 0700);
    put_file(trace, "metadata", "m");
    put_file(trace, "hoptrace_0", "data");
  }
  for (int pass = 0; pass < 3; pass++) {
    assert_int_equal(follow_scan_run(&s, in, 1, pass * MS), 0);
    assert_int_equal(s.n, SNAPS);
    for (size_t i = 0; i < s.n; i++) {
      assert_int_equal(s.snaps[i].n_traces, 2);
      for (size_t k = 0; k < 2; k++)
        assert_memory_equal(s.snaps[i].traces[k], s.snaps[i].dir, strlen(s.snaps[i].dir));
    }
  }
  assert_false(s.not_snapshot);
  follow_scan_free(&s);
  rm_tree(root);
}

/* A later snapshot makes an earlier one whole only in its own session
 * (h1 and h10: one's directory a prefix of the other's), whatever order
 * they are found in: a lower number found after a higher one is whole at
 * once. */
static void later_of_its_own_session_only(void **state) {
  (void)state;
  char root[] = "/tmp/ht-follow-scan.XXXXXX", trace[512], h1[64], h10[64];
  assert_non_null(mkdtemp(root));
  snprintf(h1, sizeof(h1), "%s/h1", root);
  snprintf(h10, sizeof(h10), "%s/h10", root);
  mkdir(h1, 0700);
  mkdir(h10, 0700);
  const char *in[] = {root};
  follow_scan s = {0};
  snapshot(h1, "capture-000001-20261128-010000-0", trace);
  snapshot(h1, "capture-000002-20261128-010001-1", trace);
  snapshot(h10, "capture-000006-20261128-010005-5", trace);
  assert_int_equal(follow_scan_run(&s, in, 1, 0), 0);
  assert_int_equal(s.n, 3);
  assert_true(named(&s, "h1/capture-000001")->whole);
  assert_false(named(&s, "h1/capture-000002")->whole); /* h10's -5 is not its session's */
  assert_false(named(&s, "h10/capture-000006")->whole);
  snapshot(h10, "capture-000003-20261128-010002-2", trace);
  assert_int_equal(follow_scan_run(&s, in, 1, 1 * MS), 0);
  assert_true(named(&s, "h10/capture-000003")->whole);
  assert_false(named(&s, "h10/capture-000006")->whole);
  assert_false(named(&s, "h1/capture-000002")->whole);
  snapshot(h1, "capture-000008-20261128-010007-7", trace);
  assert_int_equal(follow_scan_run(&s, in, 1, 2 * MS), 0);
  assert_true(named(&s, "h1/capture-000002")->whole);
  assert_false(named(&s, "h1/capture-000008")->whole);
  assert_false(named(&s, "h10/capture-000006")->whole);
  follow_scan_free(&s);
  rm_tree(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(whole_when_marked_later_or_stable),
      cmocka_unit_test(plain_trace_not_followed),
      cmocka_unit_test(each_snapshot_found_once),
      cmocka_unit_test(later_of_its_own_session_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
