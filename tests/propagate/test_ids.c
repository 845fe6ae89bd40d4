/* Id generator: never zero, unique over millions (also across threads),
 * balanced bits, and a forked child never repeats its parent's sequence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hoptrace/ids.h"

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts ids and returns how many adjacent duplicates there are. */
static size_t duplicates(uint64_t *ids, size_t n) {
  qsort(ids, n, sizeof(*ids), cmp_u64);
  size_t d = 0;
  for (size_t i = 1; i < n; i++)
    d += ids[i] == ids[i - 1];
  return d;
}

#define MANY 2000000u

static void span_ids_are_nonzero_and_unique_over_millions(void **state) {
  (void)state;
  uint64_t *ids = malloc(MANY * sizeof(*ids));
  assert_non_null(ids);
  for (size_t i = 0; i < MANY; i++) {
    ids[i] = ht_id_span();
    assert_true(ids[i] != 0);
  }
  assert_int_equal(duplicates(ids, MANY), 0);
  free(ids);
}

static void trace_ids_have_nonzero_low_half_and_are_unique(void **state) {
  (void)state;
  const size_t n = 1000000;
  uint64_t *lo = malloc(n * sizeof(*lo));
  assert_non_null(lo);
  unsigned hi_zero = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t hi;
    ht_id_trace(&hi, &lo[i]);
    assert_true(lo[i] != 0);
    hi_zero += hi == 0;
  }
  assert_true(hi_zero < 3); /* p(hi == 0) = 2^-64 per id */
  assert_int_equal(duplicates(lo, n), 0);
  free(lo);
}

/* Each bit is set in half the ids: 1e6 ids, sigma 0.0005; bound 0.004. */
static void id_bits_are_balanced(void **state) {
  (void)state;
  const size_t n = 1000000;
  unsigned ones[64] = {0};
  for (size_t i = 0; i < n; i++) {
    uint64_t id = ht_id_span();
    for (int b = 0; b < 64; b++)
      ones[b] += (id >> b) & 1;
  }
  for (int b = 0; b < 64; b++) {
    double f = (double)ones[b] / (double)n;
    assert_true(f > 0.496 && f < 0.504);
  }
}

typedef struct thread_ids {
  uint64_t *ids;
  size_t n;
} thread_ids;

static void *fill_ids(void *arg) {
  thread_ids *t = arg;
  for (size_t i = 0; i < t->n; i++)
    t->ids[i] = ht_id_span();
  return NULL;
}

static void two_threads_never_share_ids(void **state) {
  (void)state;
  const size_t half = 500000;
  uint64_t *ids = malloc(2 * half * sizeof(*ids));
  assert_non_null(ids);
  thread_ids t[2] = {{ids, half}, {ids + half, half}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&th[i], NULL, fill_ids, &t[i]), 0);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(duplicates(ids, 2 * half), 0);
  free(ids);
}

#define FORK_IDS 100000u

/* Child: writes FORK_IDS ids to fd, exits. */
static pid_t spawn_child_ids(int fd_out[2]) {
  assert_int_equal(pipe(fd_out), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd_out[0]);
    for (size_t i = 0; i < FORK_IDS; i++) {
      uint64_t id = ht_id_span();
      if (write(fd_out[1], &id, sizeof(id)) != (ssize_t)sizeof(id))
        _exit(2);
    }
    _exit(0);
  }
  close(fd_out[1]);
  return pid;
}

static void read_all(int fd, uint64_t *ids, size_t n) {
  size_t want = n * sizeof(*ids), got = 0;
  while (got < want) {
    ssize_t r = read(fd, (char *)ids + got, want - got);
    assert_true(r > 0);
    got += (size_t)r;
  }
  close(fd);
}

static void forked_children_never_repeat_the_parent(void **state) {
  (void)state;
  (void)ht_id_span(); /* the parent's state is seeded before fork */
  uint64_t *ids = malloc(3 * FORK_IDS * sizeof(*ids));
  assert_non_null(ids);
  int p1[2], p2[2];
  pid_t c1 = spawn_child_ids(p1);
  pid_t c2 = spawn_child_ids(p2);
  for (size_t i = 0; i < FORK_IDS; i++)
    ids[i] = ht_id_span();
  read_all(p1[0], ids + FORK_IDS, FORK_IDS);
  read_all(p2[0], ids + 2 * FORK_IDS, FORK_IDS);
  int st;
  assert_int_equal(waitpid(c1, &st, 0), c1);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_int_equal(waitpid(c2, &st, 0), c2);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_int_equal(duplicates(ids, 3 * FORK_IDS), 0);
  free(ids);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(span_ids_are_nonzero_and_unique_over_millions),
      cmocka_unit_test(trace_ids_have_nonzero_low_half_and_are_unique),
      cmocka_unit_test(id_bits_are_balanced),
      cmocka_unit_test(two_threads_never_share_ids),
      cmocka_unit_test(forked_children_never_repeat_the_parent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
