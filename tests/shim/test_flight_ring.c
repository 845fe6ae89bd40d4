/* Flight mode's per-thread rings (shim/recording/flight_ring.h): records
 * found by trace, a wrapped ring holds its newest, a thread's ring goes
 * to the next thread, and a reader racing a writer never sees a torn
 * record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "hoptrace/error.h"
#include "recording/flight_ring.h"

typedef struct seen {
  size_t n;
  uint64_t min_w0, max_w0;
  int torn; /* a record whose words disagree */
} seen;

static void on_record(const ht_fr_record *r, void *arg) {
  seen *s = arg;
  if (s->n == 0 || r->w[0] < s->min_w0)
    s->min_w0 = r->w[0];
  if (s->n == 0 || r->w[0] > s->max_w0)
    s->max_w0 = r->w[0];
  s->n++;
  for (uint32_t i = 1; i < r->n; i++)
    if (r->w[i] != r->w[0] + i)
      s->torn++;
}

static ht_fr_record rec(uint64_t hi, uint64_t lo, uint64_t k, uint32_t n) {
  ht_fr_record r = {hi, lo, 7, n, {0}};
  for (uint32_t i = 0; i < n; i++)
    r.w[i] = k + i;
  return r;
}

static void test_collects_by_trace(void **state) {
  (void)state;
  for (uint64_t k = 0; k < 3; k++) {
    ht_fr_record r = rec(1, 100, k * 10, HT_FR_WORDS);
    assert_int_equal(ht_fr_write(&r), 0);
  }
  for (uint64_t k = 0; k < 2; k++) {
    ht_fr_record r = rec(1, 200, 50 + k, 2);
    assert_int_equal(ht_fr_write(&r), 0);
  }
  seen a = {0}, b = {0}, none = {0};
  assert_int_equal(ht_fr_collect(1, 100, on_record, &a), 3);
  assert_int_equal(a.n, 3);
  assert_int_equal(a.min_w0, 0);
  assert_int_equal(a.max_w0, 20);
  assert_int_equal(a.torn, 0);
  assert_int_equal(ht_fr_collect(1, 200, on_record, &b), 2);
  assert_int_equal(b.min_w0, 50);
  assert_int_equal(ht_fr_collect(2, 100, on_record, &none), 0);
  ht_fr_record big = rec(1, 1, 0, 1);
  big.n = HT_FR_WORDS + 1;
  assert_int_equal(ht_fr_write(&big), HT_EINVAL);
}

/* ht_fr_scan: every record whose trace the predicate wants, once. */
static bool wants_lo_300s(uint64_t hi, uint64_t lo, void *arg) {
  (void)arg;
  return hi == 5 && lo >= 300 && lo < 400;
}

static void test_scans_for_many_traces(void **state) {
  (void)state;
  for (uint64_t lo = 298; lo < 303; lo++) {
    ht_fr_record r = rec(5, lo, lo * 100, 4);
    assert_int_equal(ht_fr_write(&r), 0);
  }
  ht_fr_record other = rec(6, 300, 0, 4); /* same low word, another trace */
  assert_int_equal(ht_fr_write(&other), 0);
  seen s = {0};
  assert_int_equal(ht_fr_scan(wants_lo_300s, on_record, &s), 3);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.min_w0, 30000);
  assert_int_equal(s.max_w0, 30200);
  assert_int_equal(s.torn, 0);
}

/* A thread of its own, so its ring is made at the size set now. */
static void *write_many(void *arg) {
  uint64_t count = *(uint64_t *)arg;
  for (uint64_t k = 0; k < count; k++) {
    ht_fr_record r = rec(3, 300, k, 4);
    if (ht_fr_write(&r) != 0)
      return (void *)1;
  }
  return NULL;
}

static void test_a_wrapped_ring_keeps_its_newest(void **state) {
  (void)state;
  ht_fr_set_slots(64);
  uint64_t count = 200;
  pthread_t t;
  void *rc;
  assert_int_equal(pthread_create(&t, NULL, write_many, &count), 0);
  assert_int_equal(pthread_join(t, &rc), 0);
  assert_null(rc);
  seen s = {0};
  assert_int_equal(ht_fr_collect(3, 300, on_record, &s), 64);
  assert_int_equal(s.min_w0, 200 - 64);
  assert_int_equal(s.max_w0, 199);
  /* the next thread takes that ring over: no new one */
  size_t rings = ht_fr_rings();
  count = 10;
  assert_int_equal(pthread_create(&t, NULL, write_many, &count), 0);
  assert_int_equal(pthread_join(t, &rc), 0);
  assert_int_equal(ht_fr_rings(), rings);
  seen after = {0};
  assert_int_equal(ht_fr_collect(3, 300, on_record, &after), 64);
  assert_int_equal(after.min_w0, 0); /* the new thread's 0..9 ... */
  assert_int_equal(after.max_w0, 191); /* ... beside the old 138..191 */
  ht_fr_set_slots(0);
}

/* A take passes each record once, ever; a scan passes it still; a slot
 * written again is a new record to take. */
static bool want_310(uint64_t hi, uint64_t lo, void *arg) {
  (void)arg;
  return hi == 3 && lo == 310;
}

static void *write_310s(void *arg) {
  uint64_t count = *(uint64_t *)arg;
  for (uint64_t k = 0; k < count; k++) {
    ht_fr_record r = rec(3, 310, k, 4);
    ht_fr_write(&r);
  }
  return NULL;
}

static void test_a_record_is_taken_once(void **state) {
  (void)state;
  ht_fr_set_slots(256); /* a ring of its own */
  pthread_t t;
  uint64_t count = 256;
  assert_int_equal(pthread_create(&t, NULL, write_310s, &count), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  seen first = {0}, again = {0}, scanned = {0};
  assert_int_equal(ht_fr_take(want_310, on_record, &first), 256);
  assert_int_equal(first.torn, 0);
  assert_int_equal(ht_fr_take(want_310, on_record, &again), 0);
  assert_int_equal(ht_fr_collect(3, 310, on_record, &scanned), 256);
  count = 10; /* the next thread takes the ring over: ten slots anew */
  assert_int_equal(pthread_create(&t, NULL, write_310s, &count), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  seen fresh = {0};
  assert_int_equal(ht_fr_take(want_310, on_record, &fresh), 10);
  assert_int_equal(fresh.min_w0, 0);
  assert_int_equal(fresh.max_w0, 9);
  ht_fr_set_slots(0);
}

/* Two takes at once (two captures of one trace in two batches) pass
 * each record to one of them. */
static pthread_barrier_t takers;
static void *take_310s(void *arg) {
  pthread_barrier_wait(&takers);
  *(size_t *)arg = ht_fr_take(want_310, on_record, &(seen){0});
  return NULL;
}

static void test_two_takes_at_once_share_the_records(void **state) {
  (void)state;
  ht_fr_set_slots(4096);
  pthread_t t[2];
  uint64_t count = 4096;
  assert_int_equal(pthread_create(&t[0], NULL, write_310s, &count), 0);
  assert_int_equal(pthread_join(t[0], NULL), 0);
  size_t got[2];
  assert_int_equal(pthread_barrier_init(&takers, NULL, 2), 0);
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&t[i], NULL, take_310s, &got[i]), 0);
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_join(t[i], NULL), 0);
  pthread_barrier_destroy(&takers);
  assert_int_equal(got[0] + got[1], 4096);
  ht_fr_set_slots(0);
}

typedef struct race {
  atomic_int stop;
  _Atomic uint64_t written;
} race;

static void *write_until_stopped(void *arg) {
  race *r = arg;
  uint64_t k = 0;
  while (!atomic_load(&r->stop)) {
    ht_fr_record x = rec(4, 400, k++ * 100, HT_FR_WORDS);
    ht_fr_write(&x);
    atomic_store_explicit(&r->written, k, memory_order_relaxed);
  }
  return NULL;
}

static void test_a_reader_never_sees_a_torn_record(void **state) {
  (void)state;
  ht_fr_set_slots(64); /* small: the writer laps the reader often */
  race r = {0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, write_until_stopped, &r), 0);
  /* the writer under way first (on a busy machine it may start late),
   * then read while it writes; past 2,000 reads, on until a whole record
   * was seen (a writer that lapped every copy), bounded */
  while (atomic_load_explicit(&r.written, memory_order_relaxed) < 128)
    sched_yield();
  seen s = {0};
  for (int i = 0; i < 2000 || (s.n == 0 && i < 2000000); i++)
    ht_fr_collect(4, 400, on_record, &s);
  atomic_store(&r.stop, 1);
  assert_int_equal(pthread_join(t, NULL), 0);
  ht_fr_set_slots(0);
  assert_int_equal(s.torn, 0);
  assert_true(s.n > 0);
  assert_true(atomic_load(&r.written) > 64);
}

/* A host's thread-exit destructor that records after the ring's own
 * (a key made later: glibc runs them in key order), when a new thread
 * has taken the ring released: the late record goes to a ring of its
 * own, not into that thread's (two writers would tear records). */
static pthread_key_t late_key;
static pthread_barrier_t taken;
static pthread_t late_b;

static void *take_released(void *unused) {
  (void)unused;
  ht_fr_record r = rec(5, 501, 0, HT_FR_WORDS);
  ht_fr_write(&r);
  pthread_barrier_wait(&taken);
  pthread_barrier_wait(&taken);
  return NULL;
}

static void late_record(void *unused) {
  (void)unused;
  if (pthread_create(&late_b, NULL, take_released, NULL) != 0)
    return;
  pthread_barrier_wait(&taken);
  ht_fr_record r = rec(5, 502, 0, HT_FR_WORDS);
  ht_fr_write(&r);
}

static void *record_then_exit(void *unused) {
  (void)unused;
  ht_fr_record r = rec(5, 500, 0, HT_FR_WORDS);
  ht_fr_write(&r); /* the ring's key made by now */
  pthread_setspecific(late_key, (void *)1);
  return NULL;
}

static void test_a_record_after_the_release_takes_its_own_ring(void **state) {
  (void)state;
  ht_fr_set_slots(128); /* a size no other test's rings have */
  assert_int_equal(pthread_barrier_init(&taken, NULL, 2), 0);
  assert_int_equal(pthread_key_create(&late_key, late_record), 0);
  size_t rings = ht_fr_rings();
  pthread_t a;
  assert_int_equal(pthread_create(&a, NULL, record_then_exit, NULL), 0);
  assert_int_equal(pthread_join(a, NULL), 0);
  /* a's ring (b took it) and the late record's */
  assert_int_equal(ht_fr_rings(), rings + 2);
  pthread_barrier_wait(&taken);
  assert_int_equal(pthread_join(late_b, NULL), 0);
  seen s = {0};
  assert_int_equal(ht_fr_collect(5, 502, on_record, &s), 1);
  assert_int_equal(s.torn, 0);
  /* the late ring was released too (its destructor ran again): both go
   * to the next threads */
  pthread_barrier_destroy(&taken);
  assert_int_equal(pthread_barrier_init(&taken, NULL, 3), 0);
  pthread_t c[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&c[i], NULL, take_released, NULL), 0);
  pthread_barrier_wait(&taken);
  pthread_barrier_wait(&taken);
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_join(c[i], NULL), 0);
  assert_int_equal(ht_fr_rings(), rings + 2);
  pthread_key_delete(late_key);
  pthread_barrier_destroy(&taken);
  ht_fr_set_slots(0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_collects_by_trace),
      cmocka_unit_test(test_scans_for_many_traces),
      cmocka_unit_test(test_a_wrapped_ring_keeps_its_newest),
      cmocka_unit_test(test_a_record_is_taken_once),
      cmocka_unit_test(test_two_takes_at_once_share_the_records),
      cmocka_unit_test(test_a_reader_never_sees_a_torn_record),
      cmocka_unit_test(test_a_record_after_the_release_takes_its_own_ring),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
