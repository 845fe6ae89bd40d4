/* Flight mode's rings across a fork (shim/recording/flight_ring.h): a
 * child forked while the replay thread scans goes on (its new threads
 * record, its own replay thread scans, it exits), reads none of its
 * parent's records, and its threads reuse the parent's rings. The parent
 * waits for the child with a deadline and kills it past that: a hung
 * child fails the test, never hangs it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "recording/flight_memory.h"
#include "recording/intern.h"

/* A hung child is killed after this; a child that works is done in well
 * under a second, even under valgrind. */
#define CHILD_DEADLINE_MS 30000
#define HUNG (-1)

static const ht_intern_entry *desc;

static void side(uint64_t hi, uint64_t lo) {
  ht_fr_record r = {.trace_hi = hi, .trace_lo = lo, .type = HT_FM_SIDE, .n = HT_FM_WORDS};
  r.w[HT_FM_SPAN] = 1;
  r.w[HT_FM_DESC] = (uint64_t)(uintptr_t)desc;
  assert_int_equal(ht_fr_write(&r), 0);
}

static void sleep_ms(long ms) { nanosleep(&(struct timespec){0, ms * 1000000L}, NULL); }

/* The child's exit status, or HUNG (then it was killed). */
static int wait_child(pid_t pid) {
  int st;
  for (int ms = 0; ms < CHILD_DEADLINE_MS; ms += 10) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    assert_true(r == 0 || r == pid);
    if (r == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    sleep_ms(10);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return HUNG;
}

static void count(const ht_fr_record *r, void *arg) {
  (void)r;
  ++*(size_t *)arg;
}

static size_t records_of(uint64_t hi, uint64_t lo) {
  size_t n = 0;
  ht_fr_collect(hi, lo, count, &n);
  return n;
}

/* A scan held inside its first record until the fork is done. */
static atomic_int in_scan, forked;

static bool want_all(uint64_t hi, uint64_t lo, void *arg) {
  (void)hi, (void)lo, (void)arg;
  return true;
}

static void hold_emit(const ht_fr_record *r, void *arg) {
  (void)r, (void)arg;
  atomic_store(&in_scan, 1);
  while (!atomic_load(&forked))
    sleep_ms(1);
}

static void *scanner(void *unused) {
  (void)unused;
  ht_fr_scan(want_all, hold_emit, NULL);
  return NULL;
}

/* A parent thread alive at the fork, with a ring of its own. */
static pthread_barrier_t hold;
static void *holder(void *unused) {
  (void)unused;
  side(1, 2);
  pthread_barrier_wait(&hold);
  pthread_barrier_wait(&hold);
  return NULL;
}

static void *first_record(void *unused) {
  (void)unused;
  side(5, 5);
  return NULL;
}

/* The child's checks: 0 when all hold, else which failed. */
static int child(size_t rings_at_fork) {
  pthread_t t;
  if (pthread_create(&t, NULL, first_record, NULL) != 0)
    return 10;
  pthread_join(t, NULL);
  if (records_of(1, 1) != 0 || records_of(1, 2) != 0)
    return 11; /* the parent's */
  if (records_of(5, 5) != 1)
    return 12;
  if (ht_fr_rings() != rings_at_fork)
    return 13; /* the new thread took a ring of the parent's */
  ht_fm_stats st;
  ht_fm_stats_get(&st);
  uint64_t sides = st.sides;
  ht_fm_capture c = {.trace_hi = 5, .trace_lo = 5, .span_id = 1, .why = 4};
  if (ht_fm_capture_later(&c, ht_clock_now()) != 0)
    return 14;
  for (int i = 0; i < 500 && st.sides == sides; i++) {
    sleep_ms(10);
    ht_fm_stats_get(&st);
  }
  if (st.sides != sides + 1)
    return 15; /* the child's replay thread scanned and found its side */
  return 0;
}

static void test_a_child_forked_during_a_scan_goes_on(void **state) {
  (void)state;
  side(1, 1);
  pthread_t h, s;
  assert_int_equal(pthread_barrier_init(&hold, NULL, 2), 0);
  assert_int_equal(pthread_create(&h, NULL, holder, NULL), 0);
  pthread_barrier_wait(&hold);
  size_t rings = ht_fr_rings();
  assert_int_equal(rings, 2);
  assert_int_equal(pthread_create(&s, NULL, scanner, NULL), 0);
  while (!atomic_load(&in_scan))
    sleep_ms(1);
  pid_t pid = fork();
  if (pid == 0) {
    int rc = child(rings);
    if (rc != 0)
      _exit(rc);
    exit(0); /* the atexit handler joins the child's replay thread */
  }
  atomic_store(&forked, 1);
  assert_true(pid > 0);
  int rc = wait_child(pid);
  pthread_join(s, NULL);
  pthread_barrier_wait(&hold);
  pthread_join(h, NULL);
  pthread_barrier_destroy(&hold);
  assert_int_not_equal(rc, HUNG);
  assert_int_equal(rc, 0);
  /* the parent keeps its records */
  assert_int_equal(records_of(1, 1), 1);
  assert_int_equal(records_of(1, 2), 1);
}

int main(void) {
  ht_fm_enable(64);
  desc = ht_intern_desc(2, "osd_write", "osd.0", "");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_child_forked_during_a_scan_goes_on),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
