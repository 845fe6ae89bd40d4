/* Timed waits on the monotonic clock (mono_wait.h). */
#include "output/mono_wait.h"

int mono_cond_init(pthread_cond_t *c) {
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc != 0)
    return rc;
  rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0)
    rc = pthread_cond_init(c, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

void mono_deadline_ms(struct timespec *ts, int64_t ms) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000;
  if (ts->tv_nsec >= 1000000000) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000;
  }
}

void mono_cond_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, int64_t ms) {
  struct timespec ts;
  mono_deadline_ms(&ts, ms);
  pthread_cond_timedwait(c, m, &ts);
}
