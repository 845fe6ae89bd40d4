/* One ring of trace pointers: [head, written) written and waiting to be
 * collected, [written, tail) waiting to be written. Indices only grow.
 * Wake-ups go in batches (a futex wake per trace cost more than the
 * overlap gained): the writer is woken once WAKE_BATCH traces wait (each
 * one with --follow), at every collect, and when the reader must wait;
 * the reader once a quarter of the ring is written or the writer caught
 * up. */
#include "output/writer.h"

#include "output/mono_wait.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define WAKE_BATCH 32u

struct trace_writer {
  const output_format *fmt;
  output *out;
  obuf *buf;
  bool follow;
  atomic_int *interrupt; /* the run's signal flag */
  atomic_bool failed;               /* a write failed (the reader stops) */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t work;  /* writer: something to write, or stop */
  pthread_cond_t space; /* reader: a trace was written */
  trace *ring[WRITER_QUEUE];
  uint64_t head, written, tail;
  bool stop;
  bool writer_idle;    /* waiting on work */
  bool reader_waiting; /* waiting on space */
};

static void *writer_main(void *arg) {
  trace_writer *w = arg;
  pthread_setname_np(pthread_self(), "hoptrace-write"); /* for top, perf */
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->written == w->tail && !w->stop) {
      w->writer_idle = true;
      pthread_cond_wait(&w->work, &w->lock);
      w->writer_idle = false;
    }
    if (w->written == w->tail)
      break; /* stop, and everything written */
    trace *t = w->ring[w->written % WRITER_QUEUE];
    pthread_mutex_unlock(&w->lock);
    /* interrupted or failed: the traces are only handed back */
    if (!*w->interrupt && !atomic_load(&w->failed)) {
      w->fmt->trace(w->out, t);
      if (w->follow)
        obuf_flush(w->buf);
      if (obuf_error(w->buf))
        atomic_store(&w->failed, true);
    }
    pthread_mutex_lock(&w->lock);
    w->written++;
    if (w->reader_waiting &&
        (w->written - w->head >= WRITER_QUEUE / 4 || w->written == w->tail))
      pthread_cond_signal(&w->space);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

trace_writer *writer_new(const output_format *fmt, output *out, obuf *buf,
                         bool follow, atomic_int *interrupt) {
  trace_writer *w = calloc(1, sizeof(*w));
  if (w == NULL)
    return NULL;
  w->fmt = fmt;
  w->out = out;
  w->buf = buf;
  w->follow = follow;
  static atomic_int never;
  w->interrupt = interrupt != NULL ? interrupt : &never;
  atomic_init(&w->failed, false);
  if (pthread_mutex_init(&w->lock, NULL) != 0)
    goto no_lock;
  if (pthread_cond_init(&w->work, NULL) != 0)
    goto no_work;
  if (mono_cond_init(&w->space) != 0) /* its timed wait: mono_wait.h */
    goto no_space;
  if (pthread_create(&w->thread, NULL, writer_main, w) != 0)
    goto no_thread;
  return w;
no_thread:
  pthread_cond_destroy(&w->space);
no_space:
  pthread_cond_destroy(&w->work);
no_work:
  pthread_mutex_destroy(&w->lock);
no_lock:
  free(w);
  return NULL;
}

/* Called with the lock held, returns with it released: takes [head,
 * written) out under the lock and releases them outside it. */
/* The writer may sit in a write(2) to a reader that never reads: the
 * run's own signal, sent to its thread, makes that write fail (EINTR:
 * the handler is installed without SA_RESTART). */
static void kick(trace_writer *w) {
  int sig = *w->interrupt;
  if (sig != 0)
    pthread_kill(w->thread, sig);
}

static void collect_and_unlock(trace_writer *w, writer_release_fn release,
                               void *arg) {
  trace *done[64];
  for (;;) {
    size_t n = 0;
    while (w->head < w->written && n < sizeof(done) / sizeof(done[0]))
      done[n++] = w->ring[w->head++ % WRITER_QUEUE];
    pthread_mutex_unlock(&w->lock);
    for (size_t i = 0; i < n; i++)
      release(arg, done[i]);
    if (n < sizeof(done) / sizeof(done[0]))
      return;
    pthread_mutex_lock(&w->lock);
  }
}

void writer_submit(trace_writer *w, trace *t, writer_release_fn release,
                   void *arg) {
  pthread_mutex_lock(&w->lock);
  while (w->tail - w->head == WRITER_QUEUE && !*w->interrupt) {
    if (w->head < w->written) { /* room once the written ones go back */
      collect_and_unlock(w, release, arg);
      pthread_mutex_lock(&w->lock);
      continue;
    }
    w->reader_waiting = true;
    pthread_cond_signal(&w->work);
    /* a signal does not end the wait: look at the flag */
    mono_cond_wait_ms(&w->space, &w->lock, 100);
    w->reader_waiting = false;
  }
  if (*w->interrupt) { /* nothing more is written: t goes back at once */
    pthread_mutex_unlock(&w->lock);
    kick(w);
    release(arg, t);
    return;
  }
  w->ring[w->tail++ % WRITER_QUEUE] = t;
  if (w->writer_idle && (w->follow || w->tail - w->written >= WAKE_BATCH))
    pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->lock);
}

void writer_collect(trace_writer *w, writer_release_fn release, void *arg) {
  pthread_mutex_lock(&w->lock);
  if (w->writer_idle && w->written < w->tail) /* the last partial batch */
    pthread_cond_signal(&w->work);
  collect_and_unlock(w, release, arg);
}

void writer_finish(trace_writer *w, writer_release_fn release, void *arg) {
  pthread_mutex_lock(&w->lock);
  w->stop = true;
  pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->lock);
  for (;;) {
    struct timespec ts; /* (pthread_timedjoin_np would read it as wall-clock time) */
    mono_deadline_ms(&ts, 100);
    if (pthread_clockjoin_np(w->thread, NULL, CLOCK_MONOTONIC, &ts) != ETIMEDOUT)
      break;
    kick(w);
  }
  pthread_mutex_lock(&w->lock);
  collect_and_unlock(w, release, arg);
  pthread_cond_destroy(&w->space);
  pthread_cond_destroy(&w->work);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

bool writer_failed(trace_writer *w) { return atomic_load(&w->failed); }
