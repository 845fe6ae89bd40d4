/* One process of the messenger integration tests: the same program runs
 * plain or traced (--flavour, or HT_MESSENGER in the environment), as a
 * server or as a client; the application code never changes.
 *
 *   traced_node server --name N --url-file F [--peers B_URL,C_URL]
 *                      [--seen FILE] [--flavour plain|traced]
 *     listens on tcp://127.0.0.1:0 and writes its URL to F. Operation
 *     "leaf" (and any other) replies "N(payload)". With --peers, "fan"
 *     asks B and C from inside the handler, then B again from a worker
 *     thread with the handler's captured context, and replies
 *     "N[b,c,b2]" from there. --seen appends each handled request's
 *     current trace context ("seen TRACEID FLAGS"). Runs until SIGTERM.
 *   traced_node client --url URL --count N [--op OP]
 *                      [--hint default|yes|no|debug] [--results FILE]
 *                      [--traces FILE] [--flavour plain|traced]
 *     sends N requests one after another; writes "I STATUS PAYLOAD" per
 *     reply to --results and the reply's trace id to --traces; prints
 *     "elapsed_ms X". Exit 0 when every request succeeded.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hoptrace/error.h"
#include "hoptrace/messenger.h"
#include "hoptrace/traced.h"

typedef struct args {
  const char *role, *name, *url_file, *peers, *seen, *flavour, *url, *op,
      *hint, *results, *traces;
  int count;
} args;

static int parse(int argc, char **argv, args *a) {
  memset(a, 0, sizeof(*a));
  a->name = "node";
  a->op = "fan";
  a->hint = "default";
  a->count = 1;
  if (argc < 2)
    return -1;
  a->role = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--name") == 0) a->name = v;
    else if (strcmp(k, "--url-file") == 0) a->url_file = v;
    else if (strcmp(k, "--peers") == 0) a->peers = v;
    else if (strcmp(k, "--seen") == 0) a->seen = v;
    else if (strcmp(k, "--flavour") == 0) a->flavour = v;
    else if (strcmp(k, "--url") == 0) a->url = v;
    else if (strcmp(k, "--op") == 0) a->op = v;
    else if (strcmp(k, "--hint") == 0) a->hint = v;
    else if (strcmp(k, "--results") == 0) a->results = v;
    else if (strcmp(k, "--traces") == 0) a->traces = v;
    else if (strcmp(k, "--count") == 0) a->count = atoi(v);
    else return -1;
  }
  return 0;
}

static ht_messenger *new_messenger(const args *a) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.name = a->name;
  o.request_timeout_ms = 5000;
  if (a->flavour != NULL)
    o.flavour = strcmp(a->flavour, "traced") == 0 ? HT_MESSENGER_TRACED
                                                   : HT_MESSENGER_PLAIN;
  ht_messenger *m = NULL;
  int rc = ht_messenger_new(&o, &m);
  if (rc != 0) {
    fprintf(stderr, "%s: messenger: %s\n", a->name, ht_strerror(rc));
    exit(2);
  }
  return m;
}

/* --- server */

typedef struct server {
  const args *a;
  ht_messenger *m;
  ht_peer *b, *c;
  FILE *seen;
  pthread_mutex_t seen_lock;
} server;

static void note_seen(server *s) {
  if (s->seen == NULL)
    return;
  ht_trace_context ctx = ht_context_capture();
  pthread_mutex_lock(&s->seen_lock);
  if (ht_context_validate(&ctx) == 0)
    fprintf(s->seen, "seen %016" PRIx64 "%016" PRIx64 " %u\n",
            ctx.trace_id_hi, ctx.trace_id_lo, ctx.flags);
  else
    fprintf(s->seen, "seen none 0\n");
  fflush(s->seen);
  pthread_mutex_unlock(&s->seen_lock);
}

static void reply_text(ht_request *req, int status, const char *text) {
  ht_payload p = {text, strlen(text), NULL, NULL};
  ht_request_reply(req, status, &p);
}

static void on_leaf(void *arg, ht_request *req, const ht_envelope *msg) {
  server *s = arg;
  note_seen(s);
  if (req == NULL)
    return;
  char out[256];
  snprintf(out, sizeof(out), "%s(%.*s)", s->a->name,
           (int)(msg->payload_len < 200 ? msg->payload_len : 200),
           (const char *)msg->payload);
  reply_text(req, 0, out);
}

/* One "fan" request in progress. */
typedef struct job {
  server *s;
  ht_request *req;
  ht_trace_context ctx; /* the handler's, for the worker */
  char payload[200];
  char part[3][220];
  int pending, failed;
  pthread_mutex_t lock;
} job;

static void job_finish(job *j) {
  char out[800];
  snprintf(out, sizeof(out), "%s[%s,%s,%s]", j->s->a->name, j->part[0],
           j->part[1], j->part[2]);
  reply_text(j->req, j->failed ? 5 : 0, out);
  pthread_mutex_destroy(&j->lock);
  free(j);
}

static void keep_part(job *j, int i, int status, const ht_envelope *r) {
  if (status != 0 || r == NULL) {
    j->failed = 1;
    snprintf(j->part[i], sizeof(j->part[i]), "error %d", status);
    return;
  }
  snprintf(j->part[i], sizeof(j->part[i]), "%.*s",
           (int)(r->payload_len < 200 ? r->payload_len : 200),
           (const char *)r->payload);
}

static void on_later_reply(void *arg, int status, const ht_envelope *r) {
  job *j = arg;
  keep_part(j, 2, status, r);
  job_finish(j);
}

/* The worker: restores the handler's context, asks B again. */
static void *worker(void *arg) {
  job *j = arg;
  ht_trace_context prev = ht_context_restore(&j->ctx);
  ht_payload p = {j->payload, strlen(j->payload), NULL, NULL};
  int rc = ht_peer_request(j->s->b, "leaf_later", &p, NULL, on_later_reply, j);
  ht_context_restore(&prev);
  if (rc != 0)
    on_later_reply(j, rc, NULL);
  return NULL;
}

static void start_worker(job *j) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker, j) != 0) {
    on_later_reply(j, HT_EIO, NULL);
    return;
  }
  pthread_detach(t);
}

typedef struct part_ref {
  job *j;
  int i;
} part_ref;

static void on_part(void *arg, int status, const ht_envelope *r) {
  part_ref *ref = arg;
  job *j = ref->j;
  keep_part(j, ref->i, status, r);
  free(ref);
  pthread_mutex_lock(&j->lock);
  int left = --j->pending;
  pthread_mutex_unlock(&j->lock);
  if (left == 0)
    start_worker(j);
}

static void ask(job *j, ht_peer *p, int i) {
  part_ref *ref = malloc(sizeof(*ref));
  ref->j = j;
  ref->i = i;
  ht_payload pl = {j->payload, strlen(j->payload), NULL, NULL};
  int rc = ht_peer_request(p, "leaf", &pl, NULL, on_part, ref);
  if (rc != 0)
    on_part(ref, rc, NULL);
}

static void on_fan(void *arg, ht_request *req, const ht_envelope *msg) {
  server *s = arg;
  note_seen(s);
  if (req == NULL)
    return;
  job *j = calloc(1, sizeof(*j));
  j->s = s;
  j->req = req;
  j->ctx = ht_context_capture();
  snprintf(j->payload, sizeof(j->payload), "%.*s",
           (int)(msg->payload_len < 190 ? msg->payload_len : 190),
           (const char *)msg->payload);
  j->pending = 2;
  pthread_mutex_init(&j->lock, NULL);
  ask(j, s->b, 0);
  ask(j, s->c, 1);
}

static int run_server(const args *a) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  server s = {.a = a};
  pthread_mutex_init(&s.seen_lock, NULL);
  if (a->seen != NULL)
    s.seen = fopen(a->seen, "a");
  s.m = new_messenger(a);
  char url[128];
  if (ht_messenger_listen(s.m, "tcp://127.0.0.1:0", url, sizeof(url)) != 0)
    return 2;
  ht_messenger_handle(s.m, NULL, on_leaf, &s);
  if (a->peers != NULL) {
    char b[128], c[128];
    if (sscanf(a->peers, "%127[^,],%127s", b, c) != 2)
      return 2;
    if (ht_messenger_connect(s.m, b, &s.b) != 0 ||
        ht_messenger_connect(s.m, c, &s.c) != 0)
      return 2;
    ht_messenger_handle(s.m, "fan", on_fan, &s);
  }
  char tmp[512];
  snprintf(tmp, sizeof(tmp), "%s.tmp", a->url_file);
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return 2;
  fprintf(f, "%s\n", url);
  fclose(f);
  rename(tmp, a->url_file);
  int sig;
  sigwait(&set, &sig);
  int rc = ht_messenger_close(s.m, 2000);
  if (s.seen != NULL)
    fclose(s.seen);
  pthread_mutex_destroy(&s.seen_lock);
  return rc == 0 ? 0 : 3;
}

/* --- client */

typedef struct call {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done, status;
  char payload[1024];
  ht_trace_context trace;
  int has_trace;
} call;

static void on_reply(void *arg, int status, const ht_envelope *r) {
  call *c = arg;
  pthread_mutex_lock(&c->lock);
  c->status = status;
  c->payload[0] = '\0';
  c->has_trace = 0;
  if (r != NULL) {
    snprintf(c->payload, sizeof(c->payload), "%.*s",
             (int)(r->payload_len < 1000 ? r->payload_len : 1000),
             (const char *)r->payload);
    c->has_trace = r->has_trace;
    c->trace = r->trace;
  }
  c->done = 1;
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

static ht_sample_hint hint_named(const char *s) {
  if (strcmp(s, "yes") == 0) return HT_SAMPLE_YES;
  if (strcmp(s, "no") == 0) return HT_SAMPLE_NO;
  if (strcmp(s, "debug") == 0) return HT_SAMPLE_DEBUG;
  return HT_SAMPLE_DEFAULT;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int one_call(ht_peer *p, const args *a, int i, call *c) {
  char payload[64];
  snprintf(payload, sizeof(payload), "req-%d", i);
  ht_payload pl = {payload, strlen(payload), NULL, NULL};
  c->done = 0;
  ht_message_sample(hint_named(a->hint));
  int rc = ht_peer_request(p, a->op, &pl, NULL, on_reply, c);
  if (rc != 0)
    return rc;
  pthread_mutex_lock(&c->lock);
  while (!c->done)
    pthread_cond_wait(&c->cond, &c->lock);
  pthread_mutex_unlock(&c->lock);
  return c->status;
}

static int run_client(const args *a) {
  ht_messenger *m = new_messenger(a);
  ht_peer *p;
  if (a->url == NULL || ht_messenger_connect(m, a->url, &p) != 0)
    return 2;
  FILE *res = a->results ? fopen(a->results, "w") : NULL;
  FILE *tr = a->traces ? fopen(a->traces, "w") : NULL;
  call c;
  memset(&c, 0, sizeof(c));
  pthread_mutex_init(&c.lock, NULL);
  pthread_cond_init(&c.cond, NULL);
  int failures = 0;
  double t0 = now_ms();
  for (int i = 0; i < a->count; i++) {
    int rc = one_call(p, a, i, &c);
    failures += rc != 0;
    if (res != NULL)
      fprintf(res, "%d %d %s\n", i, rc, rc == 0 ? c.payload : "-");
    if (tr != NULL && rc == 0 && c.has_trace)
      fprintf(tr, "%016" PRIx64 "%016" PRIx64 "\n", c.trace.trace_id_hi,
              c.trace.trace_id_lo);
  }
  printf("elapsed_ms %.1f\n", now_ms() - t0);
  if (res != NULL)
    fclose(res);
  if (tr != NULL)
    fclose(tr);
  ht_messenger_close(m, 1000);
  pthread_mutex_destroy(&c.lock);
  pthread_cond_destroy(&c.cond);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  args a;
  if (parse(argc, argv, &a) != 0) {
    fprintf(stderr, "usage: traced_node server|client [--key value ...]\n");
    return 2;
  }
  if (strcmp(a.role, "server") == 0 && a.url_file != NULL)
    return run_server(&a);
  if (strcmp(a.role, "client") == 0)
    return run_client(&a);
  fprintf(stderr, "traced_node: bad role or missing --url-file\n");
  return 2;
}
