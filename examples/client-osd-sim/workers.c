/* Worker thread pool (see workers.h): one mutex, one condition variable,
 * a singly linked FIFO. Never: run a job while holding the lock. */
#include "workers.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct job {
  struct job *next;
  sim_job_fn fn;
  void *arg;
} job;

struct sim_workers {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  job *head, *tail;
  size_t backlog;
  int stopping;
  unsigned n;
  pthread_t threads[];
};

static void *worker_main(void *arg) {
  sim_workers *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->head == NULL && !w->stopping)
      pthread_cond_wait(&w->cond, &w->lock);
    job *j = w->head;
    if (j == NULL)
      break; /* stopping and drained */
    w->head = j->next;
    if (w->head == NULL)
      w->tail = NULL;
    w->backlog--;
    pthread_mutex_unlock(&w->lock);
    j->fn(j->arg);
    free(j);
    pthread_mutex_lock(&w->lock);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

int sim_workers_new(sim_workers **out, unsigned n) {
  if (n == 0)
    n = 1;
  sim_workers *w = calloc(1, sizeof(*w) + n * sizeof(pthread_t));
  if (w == NULL)
    return -1;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->cond, NULL);
  for (; w->n < n; w->n++) {
    if (pthread_create(&w->threads[w->n], NULL, worker_main, w) != 0) {
      sim_workers_free(w);
      return -1;
    }
  }
  *out = w;
  return 0;
}

int sim_workers_submit(sim_workers *w, sim_job_fn fn, void *arg) {
  job *j = malloc(sizeof(*j));
  if (j == NULL)
    return -1;
  j->next = NULL;
  j->fn = fn;
  j->arg = arg;
  pthread_mutex_lock(&w->lock);
  if (w->stopping) {
    pthread_mutex_unlock(&w->lock);
    free(j);
    return -1;
  }
  if (w->tail != NULL)
    w->tail->next = j;
  else
    w->head = j;
  w->tail = j;
  w->backlog++;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
  return 0;
}

size_t sim_workers_backlog(sim_workers *w) {
  pthread_mutex_lock(&w->lock);
  size_t n = w->backlog;
  pthread_mutex_unlock(&w->lock);
  return n;
}

void sim_workers_free(sim_workers *w) {
  if (w == NULL)
    return;
  pthread_mutex_lock(&w->lock);
  w->stopping = 1;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
  for (unsigned i = 0; i < w->n; i++)
    pthread_join(w->threads[i], NULL);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
  free(w);
}
