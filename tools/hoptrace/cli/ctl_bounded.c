/* Bounded liblttng-ctl calls (ctl_bounded.h). Not cancelled: a thread
 * cancelled inside liblttng-ctl would leak what the library allocated
 * for the call; left waiting, it holds it (a process about to exit). */
#include "cli/ctl_bounded.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

typedef struct job {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int (*fn)(void *);
  void (*late)(void *, int);
  void *arg;
  int rc, done, abandoned;
} job;

static void job_free(job *j) {
  pthread_cond_destroy(&j->cv);
  pthread_mutex_destroy(&j->mu);
  free(j);
}

static void *run(void *p) {
  job *j = p;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, NULL);
  int rc = j->fn(j->arg);
  pthread_mutex_lock(&j->mu);
  int abandoned = j->abandoned;
  j->rc = rc;
  j->done = 1;
  pthread_cond_signal(&j->cv);
  pthread_mutex_unlock(&j->mu);
  if (abandoned) { /* the waiter is gone: what fn made is ours to free */
    if (j->late != NULL)
      j->late(j->arg, rc);
    job_free(j);
  }
  return NULL;
}

int ctl_bounded(int (*fn)(void *), void *arg, void (*late)(void *, int), int ms, int *rc) {
  job *j = calloc(1, sizeof(*j));
  if (j == NULL)
    return -1;
  *j = (job){.fn = fn, .late = late, .arg = arg};
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&j->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&j->mu, NULL);
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  int made = pthread_create(&t, &at, run, j) == 0;
  pthread_attr_destroy(&at);
  if (!made) {
    job_free(j);
    return -1;
  }
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += ms / 1000;
  until.tv_nsec += (long)(ms % 1000) * 1000000;
  if (until.tv_nsec >= 1000000000)
    until.tv_sec++, until.tv_nsec -= 1000000000;
  pthread_mutex_lock(&j->mu);
  while (!j->done && pthread_cond_timedwait(&j->cv, &j->mu, &until) == 0)
    ;
  int done = j->done;
  if (done)
    *rc = j->rc;
  else
    j->abandoned = 1;
  pthread_mutex_unlock(&j->mu);
  if (done) /* the thread touches j no more once done is set and the lock left */
    job_free(j);
  return done ? 0 : -1;
}
