/* worker-reply: a request handled on a worker thread keeps its trace.
 *
 * Three traced messengers in one process, talking over loopback TCP:
 *
 *     client --"square"--> front --"store.put"--> store
 *
 * front's handler runs on front's loop thread, which must not block. So
 * it does not answer there: it captures the current trace context (the
 * handler's server span) with ht_context_capture(), queues the job and
 * returns. A worker pthread takes the job, does the "work", restores the
 * captured context with ht_context_restore() and sends "store.put" to
 * the store: that request is a child span of the handler's span, in the
 * same trace. Without the restore it would start a new trace of its own.
 * The worker waits for the store, then answers the client from the
 * worker thread with ht_request_reply().
 *
 * The client sends N requests at once and checks every answer. Exit 0
 * only when all N came back right (and each store request stayed in its
 * handler's trace); 1 otherwise.
 *
 *     usage: worker-reply [N]        (default 20)
 *
 * Threads (hoptrace/messenger.h): ht_peer_request and ht_request_reply
 * may be called from any thread; handlers and reply callbacks run on the
 * loop thread of their messenger. Nothing else is needed to answer from a
 * worker: no uv_async of our own, the messenger hands the message over.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hoptrace.h"

#define WORKERS 2

/* --- a job queue: front's handler pushes, the workers pop */

typedef struct job {
  struct job *next;
  ht_request *req;      /* the reply token: answered once, by a worker */
  ht_trace_context ctx; /* the handler's span, captured on the loop thread */
  long value;
} job;

typedef struct queue {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  job *head, *tail;
  int closed;
} queue;

static int queue_push(queue *q, job *j) {
  pthread_mutex_lock(&q->lock);
  int closed = q->closed;
  if (!closed) {
    if (q->tail != NULL)
      q->tail->next = j;
    else
      q->head = j;
    q->tail = j;
    pthread_cond_signal(&q->cond);
  }
  pthread_mutex_unlock(&q->lock);
  return closed ? HT_ESHUTDOWN : 0;
}

/* The next job, or NULL once the queue is closed and empty. */
static job *queue_pop(queue *q) {
  pthread_mutex_lock(&q->lock);
  while (q->head == NULL && !q->closed)
    pthread_cond_wait(&q->cond, &q->lock);
  job *j = q->head;
  if (j != NULL) {
    q->head = j->next;
    if (q->head == NULL)
      q->tail = NULL;
  }
  pthread_mutex_unlock(&q->lock);
  return j;
}

static void queue_close(queue *q) {
  pthread_mutex_lock(&q->lock);
  q->closed = 1;
  pthread_cond_broadcast(&q->cond);
  pthread_mutex_unlock(&q->lock);
}

/* --- front: the handler and its workers */

typedef struct front {
  ht_messenger *m;
  ht_peer *store;
  queue q;
  pthread_t workers[WORKERS];
} front;

/* Runs on front's loop thread: capture, queue, return at once. */
static void on_square(void *arg, ht_request *req, const ht_envelope *msg) {
  front *f = arg;
  if (req == NULL)
    return; /* a one-way "square": nobody to answer */
  char text[32];
  size_t n = msg->payload_len < sizeof(text) - 1 ? msg->payload_len
                                                 : sizeof(text) - 1;
  if (n > 0) /* msg is valid during this call only: keep what we need */
    memcpy(text, msg->payload, n);
  text[n] = '\0';
  job *j = calloc(1, sizeof(*j));
  if (j == NULL) {
    ht_request_reply(req, HT_ENOMEM, NULL);
    return;
  }
  j->req = req;
  j->ctx = ht_context_capture(); /* this handler's span, as a plain value */
  j->value = strtol(text, NULL, 10);
  int rc = queue_push(&f->q, j);
  if (rc != 0) { /* shutting down: answer here rather than never */
    ht_request_reply(req, rc, NULL);
    free(j);
  }
}

/* One request to the store, awaited by a worker. The reply callback runs
 * on front's loop thread, so the worker may block on it; the loop thread
 * itself must never wait like this. */
typedef struct store_call {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done, status;
  ht_trace_context reply_ctx; /* the store span's context, from the reply */
} store_call;

static void on_stored(void *arg, int status, const ht_envelope *reply) {
  store_call *c = arg;
  pthread_mutex_lock(&c->lock);
  c->status = status;
  if (reply != NULL && reply->has_trace)
    c->reply_ctx = reply->trace;
  c->done = 1;
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

static int same_trace(const ht_trace_context *a, const ht_trace_context *b) {
  return a->trace_id_hi == b->trace_id_hi && a->trace_id_lo == b->trace_id_lo;
}

static void serve(front *f, job *j) {
  /* the "work" */
  struct timespec pause = {0, 2 * 1000 * 1000};
  nanosleep(&pause, NULL);
  char result[32];
  snprintf(result, sizeof(result), "%ld", j->value * j->value);
  ht_payload p = {result, strlen(result), NULL, NULL};

  store_call c = {.done = 0};
  pthread_mutex_init(&c.lock, NULL);
  pthread_cond_init(&c.cond, NULL);
  /* The send is where the context matters: restore it just around it,
   * and put this thread back as it was (the next job is another trace). */
  ht_trace_context prev = ht_context_restore(&j->ctx);
  int rc = ht_peer_request(f->store, "store.put", &p, NULL, on_stored, &c);
  ht_context_restore(&prev);
  if (rc == 0) {
    pthread_mutex_lock(&c.lock);
    while (!c.done)
      pthread_cond_wait(&c.cond, &c.lock);
    pthread_mutex_unlock(&c.lock);
    rc = c.status;
  }
  /* The point of the restore: the store answered in the handler's trace.
   * Without it, store.put would have started a trace of its own. */
  if (rc == 0 && !same_trace(&c.reply_ctx, &j->ctx)) {
    fprintf(stderr, "worker-reply: store.put left the handler's trace\n");
    rc = HT_EBADCONTEXT;
  }
  pthread_mutex_destroy(&c.lock);
  pthread_cond_destroy(&c.cond);

  /* From this thread: records "ss" on the handler's span, no capture
   * needed. An error status reaches the client as HT_EPEERERROR. */
  ht_request_reply(j->req, rc, rc == 0 ? &p : NULL);
}

static void *worker_main(void *arg) {
  front *f = arg;
  job *j;
  while ((j = queue_pop(&f->q)) != NULL) {
    serve(f, j);
    free(j);
  }
  return NULL;
}

/* --- store: answers on its loop thread */

static void on_put(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)msg;
  int *stored = arg; /* only this loop thread touches it until close */
  ++*stored;
  if (req != NULL)
    ht_request_reply(req, 0, NULL);
}

/* --- client: N requests in flight, replies counted on its loop thread */

typedef struct tally {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int answered, right;
  ht_trace_context first; /* request 0's trace, to look it up */
} tally;

typedef struct call {
  tally *t;
  long value;
} call;

static void on_answer(void *arg, int status, const ht_envelope *reply) {
  call *c = arg;
  char want[32];
  snprintf(want, sizeof(want), "%ld", c->value * c->value);
  int ok = status == 0 && reply->payload_len == strlen(want) &&
           memcmp(reply->payload, want, reply->payload_len) == 0;
  if (!ok)
    fprintf(stderr, "worker-reply: request %ld: %s\n", c->value,
            status == 0 ? "wrong answer"
            : status == HT_EPEERERROR ? ht_strerror(reply->status)
                                      : ht_strerror(status));
  pthread_mutex_lock(&c->t->lock);
  c->t->answered++;
  c->t->right += ok;
  if (c->value == 0 && reply != NULL && reply->has_trace)
    c->t->first = reply->trace;
  pthread_cond_signal(&c->t->cond);
  pthread_mutex_unlock(&c->t->lock);
}

/* --- set-up and the run */

static ht_messenger *traced(const char *name) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_TRACED;
  o.name = name;
  o.request_timeout_ms = 5000; /* every reply callback runs within this */
  ht_messenger *m = NULL;
  int rc = ht_messenger_new(&o, &m);
  if (rc != 0) {
    fprintf(stderr, "worker-reply: messenger %s: %s\n", name, ht_strerror(rc));
    exit(1);
  }
  return m;
}

static void check(int rc, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "worker-reply: %s: %s\n", what, ht_strerror(rc));
    exit(1);
  }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20;
  if (n < 1 || n > 100000) {
    fprintf(stderr, "usage: worker-reply [N]   (1..100000 requests)\n");
    return 2;
  }
  char url[128];

  /* store */
  int stored = 0;
  ht_messenger *store = traced("store");
  check(ht_messenger_listen(store, "tcp://127.0.0.1:0", url, sizeof(url)),
        "store listen");
  check(ht_messenger_handle(store, "store.put", on_put, &stored), "handle");

  /* front, with its workers started before it takes requests */
  front f = {.m = traced("front")};
  pthread_mutex_init(&f.q.lock, NULL);
  pthread_cond_init(&f.q.cond, NULL);
  for (int i = 0; i < WORKERS; i++)
    if (pthread_create(&f.workers[i], NULL, worker_main, &f) != 0) {
      fprintf(stderr, "worker-reply: pthread_create failed\n");
      return 1;
    }
  check(ht_messenger_connect(f.m, url, &f.store), "front connect");
  check(ht_messenger_listen(f.m, "tcp://127.0.0.1:0", url, sizeof(url)),
        "front listen");
  check(ht_messenger_handle(f.m, "square", on_square, &f), "handle");

  /* client: this thread has no current context, so every request starts
   * a trace of its own */
  ht_messenger *client = traced("client");
  ht_peer *peer;
  check(ht_messenger_connect(client, url, &peer), "client connect");
  tally t = {.answered = 0};
  pthread_mutex_init(&t.lock, NULL);
  pthread_cond_init(&t.cond, NULL);
  call *calls = calloc((size_t)n, sizeof(*calls));
  if (calls == NULL)
    return 1;
  int sent = 0;
  for (int i = 0; i < n; i++) {
    calls[i] = (call){&t, i};
    char text[32];
    snprintf(text, sizeof(text), "%d", i);
    ht_payload p = {text, strlen(text), NULL, NULL};
    int rc = ht_peer_request(peer, "square", &p, NULL, on_answer, &calls[i]);
    if (rc != 0) {
      fprintf(stderr, "worker-reply: request %d: %s\n", i, ht_strerror(rc));
      continue;
    }
    sent++;
  }
  pthread_mutex_lock(&t.lock);
  while (t.answered < sent) /* bounded: every request times out at last */
    pthread_cond_wait(&t.cond, &t.lock);
  int right = t.right;
  ht_trace_context first = t.first;
  pthread_mutex_unlock(&t.lock);

  /* Shut down in the order work flows: no more requests, then the workers
   * (each job they hold is answered), then the servers. */
  int closed = ht_messenger_close(client, 1000) == 0;
  queue_close(&f.q);
  for (int i = 0; i < WORKERS; i++)
    pthread_join(f.workers[i], NULL);
  closed &= ht_messenger_close(f.m, 1000) == 0;
  closed &= ht_messenger_close(store, 1000) == 0;
  free(calls);
  pthread_mutex_destroy(&t.lock);
  pthread_cond_destroy(&t.cond);
  pthread_mutex_destroy(&f.q.lock);
  pthread_cond_destroy(&f.q.cond);

  printf("worker-reply: %d of %d answers right, %d stored, %d workers\n",
         right, n, stored, WORKERS);
  if (ht_context_validate(&first) == 0)
    printf("worker-reply: request 0 is trace %016" PRIx64 "%016" PRIx64 "\n",
           first.trace_id_hi, first.trace_id_lo);
  if (!closed)
    fprintf(stderr, "worker-reply: a messenger did not drain in time\n");
  return right == n && stored == n && closed ? 0 : 1;
}
