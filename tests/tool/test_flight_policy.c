/* record --flight's snapshot policy (cli/flight_policy.h) on a simulated
 * clock: triggers within the coalescing window share a snapshot, starts
 * stay at least 1/R apart whatever the storm, a trigger that would wait
 * past max-defer is dropped, a failed snapshot's triggers count as
 * dropped (and a pending one's when snapshots are given up), and fired = snapshots + coalesced + dropped at every quiet
 * point. capture.json (cli/flight_report.h) lists the newest FL_LIST_MAX
 * snapshots in order and counts the older ones; its latency quantiles
 * cover them all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/flight_policy.h"
#include "cli/flight_report.h"
#include "test_rng.h"

#define MS 1000000LL

/* Runs the snapshot side until nothing is pending: each snapshot takes
 * write_ns; ok decides its fate. Returns the time after. */
static int64_t settle(fl_policy *p, int64_t now, int64_t write_ns, int ok, int64_t *starts,
                      size_t *nstarts) {
  int64_t wait;
  while (p->pending) {
    if (!fl_policy_ready(p, now, &wait)) {
      now += wait;
      continue;
    }
    fl_batch b = fl_policy_start(p, now);
    if (starts != NULL)
      starts[(*nstarts)++] = now;
    now += write_ns;
    fl_policy_done(p, &b, ok);
  }
  return now;
}

static void coalesced_within_window(void **state) {
  (void)state;
  fl_policy p;
  fl_policy_init(&p, 20 * MS, 2, 1000 * MS);
  fl_policy_trigger(&p, 0);
  fl_policy_trigger(&p, 5 * MS);
  fl_policy_trigger(&p, 19 * MS);
  int64_t wait;
  assert_false(fl_policy_ready(&p, 10 * MS, &wait));
  assert_int_equal(wait, 10 * MS);
  settle(&p, 20 * MS, 30 * MS, 1, NULL, NULL);
  assert_int_equal(p.fired, 3);
  assert_int_equal(p.snapshots, 1);
  assert_int_equal(p.coalesced, 2);
  assert_int_equal(p.rate_limited, 0);
  assert_int_equal(p.dropped, 0);
}

/* A trigger while one is being written opens the next, which waits for
 * the rate limit: counted rate-limited. */
static void next_waits_for_the_limit(void **state) {
  (void)state;
  fl_policy p;
  fl_policy_init(&p, 20 * MS, 2, 1000 * MS);
  fl_policy_trigger(&p, 0);
  int64_t wait;
  assert_true(fl_policy_ready(&p, 20 * MS, &wait));
  fl_batch b = fl_policy_start(&p, 20 * MS);
  fl_policy_trigger(&p, 30 * MS); /* while the first is written */
  assert_false(fl_policy_ready(&p, 40 * MS, &wait));
  fl_policy_done(&p, &b, 1);
  assert_false(fl_policy_ready(&p, 60 * MS, &wait));
  assert_int_equal(wait, 520 * MS - 60 * MS);
  settle(&p, 60 * MS, 10 * MS, 1, NULL, NULL);
  assert_int_equal(p.snapshots, 2);
  assert_int_equal(p.rate_limited, 1);
  assert_int_equal(p.fired, p.snapshots + p.coalesced + p.dropped);
}

/* max-defer below 1/R: a trigger that would wait past it is dropped. */
static void dropped_past_max_defer(void **state) {
  (void)state;
  fl_policy p;
  fl_policy_init(&p, 20 * MS, 0.5, 500 * MS); /* starts 2 s apart */
  fl_policy_trigger(&p, 0);
  int64_t now = settle(&p, 0, 10 * MS, 1, NULL, NULL);
  fl_policy_trigger(&p, now + 100 * MS); /* next start at 2.02 s: dropped */
  assert_false(p.pending);
  fl_policy_trigger(&p, 1600 * MS); /* waits 420 ms: kept, rate-limited */
  assert_true(p.pending);
  settle(&p, 1600 * MS, 10 * MS, 1, NULL, NULL);
  assert_int_equal(p.fired, 3);
  assert_int_equal(p.snapshots, 2);
  assert_int_equal(p.dropped, 1);
  assert_int_equal(p.rate_limited, 1);
}

static void failed_snapshot_drops_its_triggers(void **state) {
  (void)state;
  fl_policy p;
  fl_policy_init(&p, 20 * MS, 2, 1000 * MS);
  fl_policy_trigger(&p, 0);
  fl_policy_trigger(&p, 1 * MS);
  settle(&p, 0, 10 * MS, 0, NULL, NULL);
  assert_int_equal(p.failures, 1);
  assert_int_equal(p.snapshots, 0);
  assert_int_equal(p.coalesced, 0);
  assert_int_equal(p.dropped, 2);
  assert_int_equal(p.fired, p.snapshots + p.coalesced + p.dropped);
}

/* The daemon hangs in a snapshot: triggers meanwhile open the next batch,
 * which never starts once snapshots are given up; both batches' triggers
 * are dropped (record --flight's tear-down with a stopped daemon). */
static void given_up_drops_the_pending_batch(void **state) {
  (void)state;
  fl_policy p;
  fl_policy_init(&p, 20 * MS, 2, 1000 * MS);
  fl_policy_trigger(&p, 0);
  int64_t wait;
  assert_false(fl_policy_ready(&p, 0, &wait));
  fl_batch hung = fl_policy_start(&p, 20 * MS);
  assert_int_equal(fl_policy_trigger(&p, 30 * MS), FL_OPENED);
  assert_int_equal(fl_policy_trigger(&p, 31 * MS), FL_JOINED);
  fl_policy_done(&p, &hung, 0); /* the hung snapshot given up */
  fl_policy_abandon(&p);
  assert_false(p.pending);
  assert_int_equal(p.dropped, 3);
  assert_int_equal(p.fired, p.snapshots + p.coalesced + p.dropped);
  fl_policy_abandon(&p); /* nothing pending: nothing more */
  assert_int_equal(p.dropped, 3);
}

/* A random storm: the counts add up after every quiet point, and no two
 * starts are closer than 1/R (no half-open second holds more than R). */
static void storm_keeps_the_limit_and_the_counts(void **state) {
  (void)state;
  test_rng rng = {29};
  for (int round = 0; round < 50; round++) {
    double rate = 0.5 + (double)(test_rng_next(&rng) % 8);
    fl_policy p;
    fl_policy_init(&p, (int64_t)(test_rng_next(&rng) % 50) * MS, rate,
                   (int64_t)(test_rng_next(&rng) % 1500) * MS);
    static int64_t starts[20000];
    size_t nstarts = 0;
    int64_t now = 0, wait;
    for (int i = 0; i < 5000; i++) {
      now += (int64_t)(test_rng_next(&rng) % (5 * MS));
      fl_policy_trigger(&p, now);
      while (fl_policy_ready(&p, now, &wait)) { /* written at once */
        fl_batch b = fl_policy_start(&p, now);
        starts[nstarts++] = now;
        fl_policy_done(&p, &b, test_rng_next(&rng) % 10 != 0);
      }
    }
    settle(&p, now, 0, 1, starts, &nstarts);
    assert_int_equal(p.fired, 5000);
    assert_int_equal(p.fired, p.snapshots + p.coalesced + p.dropped);
    assert_int_equal(p.snapshots + p.failures, nstarts);
    for (size_t i = 1; i < nstarts; i++)
      assert_true(starts[i] - starts[i - 1] >= p.min_gap_ns);
  }
}

static void list_keeps_the_newest(void **state) {
  (void)state;
  fl_log l = {0};
  fl_policy p;
  fl_policy_init(&p, 0, 2, 0);
  size_t total = FL_LIST_MAX + 904;
  for (size_t i = 1; i <= total; i++) {
    fl_snap s = {.at_ns = (int64_t)i, .triggers = 1, .latency_ms = (double)(i % 100) + 1};
    snprintf(s.name, sizeof(s.name), "capture-%06zu", i);
    assert_int_equal(fl_log_add(&l, &s), 0);
    p.fired++;
    p.snapshots++;
  }
  char path[] = "/tmp/test_flight_report.XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(fl_report_write(path, &p, &l), 0);
  FILE *f = fdopen(fd, "r");
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof(text) - 1, f);
  text[n] = '\0';
  fclose(f);
  unlink(path);
  assert_non_null(strstr(text, "\"snapshot_list_omitted\":904,"));
  const char *first = strstr(text, "\"name\":\"");
  assert_non_null(first);
  assert_memory_equal(first + 8, "capture-000905\"", 15); /* the oldest listed */
  assert_non_null(strstr(text, "\"name\":\"capture-005000\""));
  assert_null(strstr(text, "\"name\":\"capture-000904\""));
  assert_non_null(strstr(text, "\"max\":100.000"));
  fl_log_free(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(coalesced_within_window),
      cmocka_unit_test(next_waits_for_the_limit),
      cmocka_unit_test(dropped_past_max_defer),
      cmocka_unit_test(failed_snapshot_drops_its_triggers),
      cmocka_unit_test(given_up_drops_the_pending_batch),
      cmocka_unit_test(storm_keeps_the_limit_and_the_counts),
      cmocka_unit_test(list_keeps_the_newest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
