/* Flight mode in process memory (shim/recording/flight_memory.h): a
 * captured trace is remembered for a while (its later sides go to LTTng
 * at once), the replay thread finds the captured trace's sides and
 * key-values in the rings and only those, a trace captured again is not
 * replayed twice (while recent: not scanned for; later: its records
 * replayed before are skipped), and a full queue refuses a capture rather than block, every capture
 * counted once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "hoptrace/error.h"
#include "recording/flight_memory.h"
#include "recording/intern.h"

static void side(uint64_t hi, uint64_t lo, uint64_t span, const ht_intern_entry *d) {
  ht_fr_record r = {.trace_hi = hi, .trace_lo = lo, .type = HT_FM_SIDE, .n = HT_FM_WORDS};
  r.w[HT_FM_SPAN] = span;
  r.w[HT_FM_START] = ht_clock_now();
  r.w[HT_FM_END] = r.w[HT_FM_START] + 1;
  r.w[HT_FM_DESC] = (uint64_t)(uintptr_t)d;
  assert_int_equal(ht_fr_write(&r), 0);
}

static ht_fm_capture capture_of(uint64_t hi, uint64_t lo) {
  ht_fm_capture c = {.trace_hi = hi, .trace_lo = lo, .span_id = 1, .why = 4};
  return c;
}

/* Waits (5 s at most) until the stats' field at `at` (offsetof) is at
 * least n. */
static ht_fm_stats wait_stat(size_t at, uint64_t n) {
  ht_fm_stats st;
  for (int i = 0; i < 500; i++) {
    ht_fm_stats_get(&st);
    uint64_t v;
    memcpy(&v, (const char *)&st + at, sizeof(v));
    if (v >= n)
      break;
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  return st;
}

/* ... until the replay thread has replayed `sides`. */
static ht_fm_stats wait_sides(uint64_t sides) {
  return wait_stat(offsetof(ht_fm_stats, sides), sides);
}

static void test_recent_and_replayed_once(void **state) {
  (void)state;
  uint64_t now = ht_clock_now();
  assert_false(ht_fm_recent(7, 70, now));
  const ht_intern_entry *d = ht_intern_desc(2, "osd_write", "osd.0", "");
  assert_non_null(d);
  side(7, 70, 1, d);
  side(7, 70, 2, d);
  side(7, 71, 3, d); /* another trace: not replayed */
  side(8, 70, 4, d); /* the same low word, another trace */
  ht_fr_record tag = {.trace_hi = 7, .trace_lo = 70, .type = HT_FM_TAG_S,
                      .n = HT_FM_TAG_TEXT + 1};
  tag.w[HT_FM_TAG_SPAN] = 1;
  memcpy(tag.w + HT_FM_TAG_TEXT, "k\0v\0\0\0\0", 8);
  assert_int_equal(ht_fr_write(&tag), 0);
  ht_fm_capture c = capture_of(7, 70);
  assert_int_equal(ht_fm_capture_later(&c, ht_clock_now()), 0);
  assert_true(c.replay);
  assert_true(ht_fm_recent(7, 70, ht_clock_now()));
  assert_false(ht_fm_recent(7, 71, ht_clock_now()));
  assert_false(ht_fm_recent(8, 70, ht_clock_now()));
  assert_false(ht_fm_recent(7, 70, ht_clock_now() + HT_FM_RECENT_NS));
  /* the key-values' check: the ids first, the clock only on a match */
  assert_true(ht_fm_recent_now(7, 70));
  assert_false(ht_fm_recent_now(7, 71));
  assert_false(ht_fm_recent_now(8, 70));
  assert_false(ht_fm_recent_now(7, 70 + 1024)); /* its slot, another trace */
  ht_fm_stats st = wait_sides(2);
  assert_int_equal(st.sides, 2);
  assert_int_equal(st.tags, 1);
  assert_int_equal(st.scans, 1);
  /* captured again while recent: its capture event, no second replay */
  ht_fm_capture again = capture_of(7, 70);
  assert_int_equal(ht_fm_capture_later(&again, ht_clock_now()), 0);
  assert_false(again.replay);
  ht_fm_capture other = capture_of(7, 71);
  assert_int_equal(ht_fm_capture_later(&other, ht_clock_now()), 0);
  st = wait_sides(3);
  assert_int_equal(st.sides, 3);
  assert_int_equal(st.scans, 2);
}

/* A trace captured again once no longer recent (another trace took its
 * slot in the recent table, or HT_FM_RECENT_NS went by): only the
 * records written since are replayed, not its sides twice. */
static ht_fm_stats capture_and_wait(uint64_t hi, uint64_t lo, uint64_t now) {
  ht_fm_stats st;
  ht_fm_stats_get(&st);
  ht_fm_capture c = capture_of(hi, lo);
  assert_int_equal(ht_fm_capture_later(&c, now), 0);
  assert_true(c.replay);
  return wait_stat(offsetof(ht_fm_stats, scans), st.scans + 1);
}

static void test_captured_again_replays_only_the_new(void **state) {
  (void)state;
  const ht_intern_entry *d = ht_intern_desc(2, "osd_write", "osd.0", "");
  side(6, 60, 1, d);
  side(6, 60, 2, d);
  ht_fm_stats before;
  ht_fm_stats_get(&before);
  ht_fm_stats st = capture_and_wait(6, 60, ht_clock_now());
  assert_int_equal(st.sides - before.sides, 2);
  capture_and_wait(5, 60 + 1024, ht_clock_now()); /* takes 6/60's slot */
  st = capture_and_wait(6, 60, ht_clock_now());
  assert_int_equal(st.sides - before.sides, 2);
  side(6, 60, 3, d);
  st = capture_and_wait(6, 60, ht_clock_now() + HT_FM_RECENT_NS);
  assert_int_equal(st.sides - before.sides, 3);
  assert_int_equal(st.tags, before.tags);
}

static void test_a_full_queue_refuses(void **state) {
  (void)state;
  ht_fm_stats before, after;
  ht_fm_stats_get(&before);
  uint64_t pushed = 0, refused = 0;
  /* the thread takes the queue at most every HT_FM_SCAN_GAP_MS: pushed
   * faster than that, the queue fills */
  while (refused == 0 && pushed < 1000000) {
    ht_fm_capture c = capture_of(9, pushed);
    int rc = ht_fm_capture_later(&c, ht_clock_now());
    assert_true(rc == 0 || rc == HT_ENOSPC);
    refused += rc == HT_ENOSPC;
    pushed++;
  }
  ht_fm_stats_get(&after);
  assert_int_equal(refused, 1);
  assert_int_equal(after.captures - before.captures, pushed - 1);
  assert_int_equal(after.unreplayed - before.unreplayed, 1);
}

int main(void) {
  ht_fm_enable(64);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_recent_and_replayed_once),
      cmocka_unit_test(test_captured_again_replays_only_the_new),
      cmocka_unit_test(test_a_full_queue_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
