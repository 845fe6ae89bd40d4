/* The writer thread: every submitted trace is written once, in order,
 * and handed back once, through many wraps of its ring, with and without
 * --follow's per-trace wake-ups, and with a slow writer (the reader must
 * wait for space). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "output/writer.h"

#define N_TRACES (5 * WRITER_QUEUE + 17)

struct output {
  uint64_t next_expected;
  int slow;
};

static void record_trace(output *o, const trace *t) {
  assert_int_equal(t->trace_lo, o->next_expected); /* in order, once */
  o->next_expected++;
  if (o->slow && t->trace_lo % 64 == 0) {
    struct timespec pause = {0, 200000};
    nanosleep(&pause, NULL);
  }
}

static const output_format recording_format = {"test", NULL, record_trace, NULL};

static trace traces[N_TRACES];
static unsigned released[N_TRACES];

static void release(void *arg, trace *t) {
  (void)arg;
  released[t - traces]++;
}

static void run(int follow, int slow, int collect_every) {
  memset(released, 0, sizeof(released));
  output out = {0, slow};
  FILE *sink = fopen("/dev/null", "w");
  assert_non_null(sink);
  obuf *buf = obuf_new(sink);
  assert_non_null(buf);
  trace_writer *w = writer_new(&recording_format, &out, buf, follow, NULL);
  assert_non_null(w);
  for (uint64_t i = 0; i < N_TRACES; i++) {
    traces[i].trace_lo = i;
    writer_submit(w, &traces[i], release, NULL);
    if (collect_every && i % (uint64_t)collect_every == 0)
      writer_collect(w, release, NULL);
  }
  writer_finish(w, release, NULL);
  assert_int_equal(out.next_expected, N_TRACES);
  for (size_t i = 0; i < N_TRACES; i++)
    assert_int_equal(released[i], 1);
  obuf_free(buf);
  fclose(sink);
}

static void batched(void **state) {
  (void)state;
  run(0, 0, 0);
}

static void batched_with_collects(void **state) {
  (void)state;
  run(0, 0, 100);
}

static void follow_wakes_each_trace(void **state) {
  (void)state;
  run(1, 0, 7);
}

static void slow_writer_makes_the_reader_wait(void **state) {
  (void)state;
  run(0, 1, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(batched),
      cmocka_unit_test(batched_with_collects),
      cmocka_unit_test(follow_wakes_each_trace),
      cmocka_unit_test(slow_writer_makes_the_reader_wait),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
