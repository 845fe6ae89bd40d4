/* The traced messenger in one process, with the event recorder replaced
 * by a capture table: every hop's spans, parents, annotations, errors,
 * the dispatch context, capture/restore from a worker thread, and
 * per-message sampling. Real messengers over loopback TCP. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hoptrace/error.h"
#include "hoptrace/messenger.h"
#include "hoptrace/sampler.h"
#include "hoptrace/tracing.h"
#include "hoptrace/traced.h"
#include "propagate/events.h"

/* --- capture recorder */

enum ev_kind { EV_START, EV_END, EV_ANN, EV_STATUS, EV_MSG, EV_OTHER };

typedef struct ev {
  enum ev_kind kind;
  ht_trace_context ctx;
  ht_span_kind span_kind;
  char name[64];
  char service[16];
  int32_t code;
  int dir;
} ev;

#define MAX_EVS 4096
static ev evs[MAX_EVS];
static size_t n_evs;
static size_t n_hops;   /* hop events (annotation + message) among them */
static size_t n_sides;  /* span sides: a whole span in one event */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;

static ev *add_ev(enum ev_kind kind, const ht_trace_context *ctx) {
  pthread_mutex_lock(&ev_lock);
  ev *e = n_evs < MAX_EVS ? &evs[n_evs++] : NULL;
  if (e != NULL) {
    memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->ctx = *ctx;
  }
  pthread_mutex_unlock(&ev_lock);
  return e;
}

static void c_start(const ht_trace_context *ctx, const ht_span_info *info) {
  ev *e = add_ev(EV_START, ctx);
  if (e) {
    e->span_kind = info->kind;
    snprintf(e->name, sizeof(e->name), "%s", info->name);
    snprintf(e->service, sizeof(e->service), "%s", info->service);
  }
}
static void c_end(const ht_trace_context *ctx, int32_t status) {
  ev *e = add_ev(EV_END, ctx);
  if (e)
    e->code = status;
}
static void c_ann(const ht_trace_context *ctx, const char *name) {
  ev *e = add_ev(EV_ANN, ctx);
  if (e)
    snprintf(e->name, sizeof(e->name), "%s", name);
}
static void c_annotate(const ht_trace_context *ctx, const char *name,
                       int in_span) {
  (void)in_span; /* kept with the span or not, the same annotation */
  c_ann(ctx, name);
}
/* A span API span's start (recorded with its end; counted here as it
 * happens). */
static void c_span_start(const ht_trace_context *ctx, const ht_span_info *info,
                         const void *desc) {
  (void)desc;
  c_start(ctx, info);
}
static void c_kv_str(const ht_trace_context *ctx, const char *k,
                     const char *v) {
  (void)k, (void)v;
  add_ev(EV_OTHER, ctx);
}
static void c_kv_int(const ht_trace_context *ctx, const char *k, int64_t v) {
  (void)k, (void)v;
  add_ev(EV_OTHER, ctx);
}
static void c_kvs(const ht_trace_context *ctx, const ht_kv *kvs, size_t n) {
  (void)kvs, (void)n;
  add_ev(EV_OTHER, ctx);
}
static void c_status(const ht_trace_context *ctx, int32_t code,
                     const char *msg) {
  (void)msg;
  ev *e = add_ev(EV_STATUS, ctx);
  if (e)
    e->code = code;
}
static void c_message(const ht_trace_context *ctx, int dir) {
  ev *e = add_ev(EV_MSG, ctx);
  if (e)
    e->dir = dir;
}

/* A message with an annotation is one event for both: kept as the
 * annotation and the message it stands for, so the checks below count the
 * same content either way. */
static void c_msg(const ht_trace_context *ctx, int dir, const char *ann,
                  uint32_t type, uint64_t seq, uint64_t size, const char *peer) {
  (void)type, (void)seq, (void)size, (void)peer;
  if (ann[0] == '\0') {
    c_message(ctx, dir);
    return;
  }
  c_ann(ctx, ann);
  c_message(ctx, dir);
  pthread_mutex_lock(&ev_lock);
  n_hops++;
  pthread_mutex_unlock(&ev_lock);
}

/* The names a desc_ref keeps: copies that live until the process ends,
 * as the recorder's do. */
typedef struct desc_copy {
  ht_span_kind kind;
  char name[64], service[16];
} desc_copy;
static desc_copy descs[256];
static size_t n_descs;

static const void *c_desc_ref(const ht_span_info *info) {
  pthread_mutex_lock(&ev_lock);
  desc_copy *d = n_descs < 256 ? &descs[n_descs++] : NULL;
  if (d != NULL) {
    d->kind = info->kind;
    snprintf(d->name, sizeof(d->name), "%s", info->name);
    snprintf(d->service, sizeof(d->service), "%s", info->service);
  }
  pthread_mutex_unlock(&ev_lock);
  return d;
}

/* Peers looked up, each with how often (the checks below do not look at
 * the peers the sides carry). */
typedef struct peer_copy {
  char text[64];
  size_t lookups;
} peer_copy;
static peer_copy peers[64];
static size_t n_peers;

static const void *c_peer_ref(const char *peer) {
  pthread_mutex_lock(&ev_lock);
  peer_copy *p = NULL;
  for (size_t i = 0; i < n_peers && p == NULL; i++)
    if (strcmp(peers[i].text, peer) == 0)
      p = &peers[i];
  if (p == NULL && n_peers < 64) {
    p = &peers[n_peers++];
    snprintf(p->text, sizeof(p->text), "%s", peer);
    p->lookups = 0;
  }
  if (p != NULL)
    p->lookups++;
  pthread_mutex_unlock(&ev_lock);
  return p;
}

/* A span side (schema 2): kept as the start, annotations, messages and end
 * it stands for, so the checks below count the same content either way. */
static void c_side(const ht_span_side *side) {
  if (side->marks != NULL) { /* a span API span: its start came apart */
    c_end(side->ctx, side->status);
    return;
  }
  const desc_copy *d = side->desc;
  ht_span_info info = side->info;
  if (d != NULL)
    info = (ht_span_info){d->name, d->kind, d->service, ""};
  bool client = info.kind == HT_SPAN_CLIENT || info.kind == HT_SPAN_PRODUCER;
  c_start(side->ctx, &info);
  if (side->frames & HT_SIDE_START_FRAME) {
    c_ann(side->ctx, client ? "cs" : "sr");
    c_message(side->ctx, client ? 0 : 1);
  }
  if (side->frames & HT_SIDE_END_FRAME) {
    c_ann(side->ctx, client ? "cr" : "ss");
    c_message(side->ctx, client ? 1 : 0);
  }
  c_end(side->ctx, side->status);
  pthread_mutex_lock(&ev_lock);
  n_sides++;
  pthread_mutex_unlock(&ev_lock);
}

static const ht_event_ops capture_ops = {
    c_span_start, c_annotate, c_kv_str, c_kv_int, c_kvs, c_status, c_msg,
    c_side, c_desc_ref, c_peer_ref, NULL, NULL, NULL};
/* Another recorder, the same capture: what it looked up is its own. */
static const ht_event_ops capture_ops_2 = {
    c_span_start, c_annotate, c_kv_str, c_kv_int, c_kvs, c_status, c_msg,
    c_side, c_desc_ref, c_peer_ref, NULL, NULL, NULL};

static void reset_events(void) {
  pthread_mutex_lock(&ev_lock);
  n_evs = 0;
  n_hops = 0;
  n_sides = 0;
  pthread_mutex_unlock(&ev_lock);
}

/* The span_start of the span with this name and kind (first match). */
static const ev *find_start(const char *name, ht_span_kind kind, int nth) {
  for (size_t i = 0; i < n_evs; i++)
    if (evs[i].kind == EV_START && evs[i].span_kind == kind &&
        strcmp(evs[i].name, name) == 0 && nth-- == 0)
      return &evs[i];
  return NULL;
}

static int count(enum ev_kind kind, uint64_t span_id, const char *name) {
  int n = 0;
  for (size_t i = 0; i < n_evs; i++)
    if (evs[i].kind == kind && evs[i].ctx.span_id == span_id &&
        (name == NULL || strcmp(evs[i].name, name) == 0))
      n++;
  return n;
}

static int32_t status_of(uint64_t span_id) {
  for (size_t i = 0; i < n_evs; i++)
    if (evs[i].kind == EV_STATUS && evs[i].ctx.span_id == span_id)
      return evs[i].code;
  return 0;
}

/* --- a small cluster: client -> A -> (B, C) */

typedef struct waiter {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done;
  int status;
} waiter;

static waiter *waiter_new(void) {
  waiter *w = calloc(1, sizeof(*w));
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->cond, NULL);
  return w;
}

static void waiter_free(waiter *w) {
  pthread_mutex_destroy(&w->lock);
  pthread_cond_destroy(&w->cond);
  free(w);
}

static void waiter_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  waiter *w = arg;
  pthread_mutex_lock(&w->lock);
  w->status = status;
  w->done++;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

static void waiter_wait(waiter *w, int n) {
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += 10;
  pthread_mutex_lock(&w->lock);
  while (w->done < n)
    if (pthread_cond_timedwait(&w->cond, &w->lock, &dl) != 0)
      break;
  int done = w->done;
  pthread_mutex_unlock(&w->lock);
  assert_int_equal(done, n);
}

typedef struct cluster {
  ht_messenger *client, *a, *b;
  ht_peer *to_a, *a_to_b;
  char url_a[128], url_b[128];
  ht_trace_context seen_a, seen_b; /* handlers' current contexts */
} cluster;

static cluster *the; /* handlers reach the cluster through this */

static ht_messenger *traced(const char *name) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_TRACED;
  o.name = name;
  o.request_timeout_ms = 2000;
  ht_messenger *m = NULL;
  assert_int_equal(ht_messenger_new(&o, &m), 0);
  return m;
}

static void on_b(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  the->seen_b = ht_context_capture();
  ht_request_reply(req, 0, NULL);
}

/* A: fan out to B from inside the handler, reply when B answered. */
static void a_reply_after_b(void *arg, int status, const ht_envelope *r) {
  (void)r;
  ht_request_reply(arg, status == 0 ? 0 : 5, NULL);
}

static void on_a(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  the->seen_a = ht_context_capture();
  if (ht_peer_request(the->a_to_b, "b_op", NULL, NULL, a_reply_after_b,
                      req) != 0)
    ht_request_reply(req, 6, NULL);
}

/* A, later from a worker: capture in the handler, restore there. */
typedef struct work {
  ht_request *req;
  ht_trace_context ctx;
} work;

static void *worker(void *arg) {
  work *w = arg;
  ht_trace_context prev = ht_context_restore(&w->ctx);
  if (ht_peer_request(the->a_to_b, "b_op", NULL, NULL, a_reply_after_b,
                      w->req) != 0)
    ht_request_reply(w->req, 6, NULL);
  ht_context_restore(&prev);
  free(w);
  return NULL;
}

static void on_a_later(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  the->seen_a = ht_context_capture();
  work *w = malloc(sizeof(*w));
  w->req = req;
  w->ctx = ht_context_capture();
  ht_trace_context via_req;
  assert_int_equal(ht_request_context(req, &via_req), 0);
  assert_true(ht_context_equal(&via_req, &w->ctx));
  pthread_t t;
  pthread_create(&t, NULL, worker, w);
  pthread_detach(t);
}

static void on_a_drop(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  ht_request_drop(req);
}

static int setup(void **state) {
  ht_tracing_init();
  ht_events_install(&capture_ops);
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg); /* parent, roots always */
  assert_int_equal(ht_sampling_set(&cfg), 0);
  cluster *c = calloc(1, sizeof(*c));
  the = c;
  c->client = traced("client");
  c->a = traced("A");
  c->b = traced("B");
  assert_int_equal(ht_messenger_listen(c->b, "tcp://127.0.0.1:0", c->url_b,
                                       sizeof(c->url_b)), 0);
  assert_int_equal(ht_messenger_listen(c->a, "tcp://127.0.0.1:0", c->url_a,
                                       sizeof(c->url_a)), 0);
  assert_int_equal(ht_messenger_handle(c->b, "b_op", on_b, NULL), 0);
  assert_int_equal(ht_messenger_handle(c->a, "fan", on_a, NULL), 0);
  assert_int_equal(ht_messenger_handle(c->a, "later", on_a_later, NULL), 0);
  assert_int_equal(ht_messenger_handle(c->a, "drop", on_a_drop, NULL), 0);
  assert_int_equal(ht_messenger_connect(c->client, c->url_a, &c->to_a), 0);
  assert_int_equal(ht_messenger_connect(c->a, c->url_b, &c->a_to_b), 0);
  *state = c;
  return 0;
}

static int teardown(void **state) {
  cluster *c = *state;
  assert_int_equal(ht_messenger_close(c->client, 1000), 0);
  assert_int_equal(ht_messenger_close(c->a, 1000), 0);
  assert_int_equal(ht_messenger_close(c->b, 1000), 0);
  free(c);
  ht_events_install(NULL);
  return 0;
}

static int call(cluster *c, const char *op, ht_sample_hint hint) {
  waiter *w = waiter_new();
  ht_message_sample(hint);
  int rc = ht_peer_request(c->to_a, op, NULL, NULL, waiter_reply, w);
  assert_int_equal(rc, 0);
  waiter_wait(w, 1);
  int status = w->status;
  waiter_free(w);
  return status;
}

/* The chain client -> A -> B, each hop's parent and annotations. */
static void check_chain(const char *op) {
  const ev *cl = find_start(op, HT_SPAN_CLIENT, 0);
  const ev *sa = find_start(op, HT_SPAN_SERVER, 0);
  const ev *ca = find_start("b_op", HT_SPAN_CLIENT, 0);
  const ev *sb = find_start("b_op", HT_SPAN_SERVER, 0);
  assert_non_null(cl);
  assert_non_null(sa);
  assert_non_null(ca);
  assert_non_null(sb);
  assert_int_equal(cl->ctx.parent_span_id, 0);
  assert_int_equal(sa->ctx.parent_span_id, cl->ctx.span_id);
  assert_int_equal(ca->ctx.parent_span_id, sa->ctx.span_id);
  assert_int_equal(sb->ctx.parent_span_id, ca->ctx.span_id);
  for (const ev *const *s = (const ev *const[]){sa, ca, sb}; *s != sb; s++)
    assert_int_equal((*s)->ctx.trace_id_lo, cl->ctx.trace_id_lo);
  assert_int_equal(sb->ctx.trace_id_lo, cl->ctx.trace_id_lo);
  assert_string_equal(cl->service, "client");
  assert_string_equal(sa->service, "A");
  assert_string_equal(sb->service, "B");
  for (const ev *const *s = (const ev *const[]){cl, ca, NULL}; *s; s++) {
    assert_int_equal(count(EV_ANN, (*s)->ctx.span_id, "cs"), 1);
    assert_int_equal(count(EV_ANN, (*s)->ctx.span_id, "cr"), 1);
    assert_int_equal(count(EV_END, (*s)->ctx.span_id, NULL), 1);
    assert_int_equal(count(EV_MSG, (*s)->ctx.span_id, NULL), 2);
  }
  for (const ev *const *s = (const ev *const[]){sa, sb, NULL}; *s; s++) {
    assert_int_equal(count(EV_ANN, (*s)->ctx.span_id, "sr"), 1);
    assert_int_equal(count(EV_ANN, (*s)->ctx.span_id, "ss"), 1);
    assert_int_equal(count(EV_END, (*s)->ctx.span_id, NULL), 1);
    assert_int_equal(count(EV_MSG, (*s)->ctx.span_id, NULL), 2);
  }
  /* each request and its reply were 2 events: the client's and the
   * server's span side, which carry both messages; no hop event */
  size_t msgs = 0;
  for (size_t i = 0; i < n_evs; i++)
    msgs += evs[i].kind == EV_MSG;
  assert_true(n_sides >= 4);
  assert_int_equal(msgs, 2 * n_sides);
  assert_int_equal(n_hops, 0);
  /* the handlers saw their own server span as the current context */
  assert_int_equal(the->seen_a.span_id, sa->ctx.span_id);
  assert_int_equal(the->seen_b.span_id, sb->ctx.span_id);
}

static void test_fanout_in_handler(void **state) {
  reset_events();
  assert_int_equal(call(*state, "fan", HT_SAMPLE_DEFAULT), 0);
  usleep(50 * 1000); /* A's server span ends on A's loop after the reply */
  check_chain("fan");
  /* nothing leaks into the client thread: the next call is a new root */
  ht_trace_context none = ht_context_capture();
  assert_int_equal(ht_context_validate(&none), HT_EBADCONTEXT);
}

static void test_worker_with_captured_context(void **state) {
  reset_events();
  assert_int_equal(call(*state, "later", HT_SAMPLE_DEFAULT), 0);
  usleep(50 * 1000);
  check_chain("later");
}

static void test_unsampled_propagates_ids(void **state) {
  reset_events();
  memset(&the->seen_a, 0, sizeof(the->seen_a));
  assert_int_equal(call(*state, "fan", HT_SAMPLE_NO), 0);
  usleep(50 * 1000);
  assert_int_equal(n_evs, 0);
  assert_int_equal(ht_context_validate(&the->seen_a), 0);
  assert_int_equal(ht_context_validate(&the->seen_b), 0);
  assert_int_equal(the->seen_a.trace_id_lo, the->seen_b.trace_id_lo);
  assert_int_equal(the->seen_a.flags & HT_FLAG_SAMPLED, 0);
}

static void test_errors_recorded(void **state) {
  cluster *c = *state;
  reset_events();
  assert_int_equal(call(c, "no_such_op", HT_SAMPLE_YES), HT_EPEERERROR);
  usleep(50 * 1000);
  const ev *cl = find_start("no_such_op", HT_SPAN_CLIENT, 0);
  const ev *sa = find_start("no_such_op", HT_SPAN_SERVER, 0);
  assert_non_null(cl);
  assert_non_null(sa);
  assert_int_equal(status_of(cl->ctx.span_id), HT_ENOHANDLER);
  assert_int_equal(status_of(sa->ctx.span_id), HT_ENOHANDLER);
  assert_int_equal(count(EV_ANN, cl->ctx.span_id, "cr"), 1);

  reset_events();
  waiter *w = waiter_new();
  ht_request_options ro;
  ht_request_options_init(&ro);
  ro.timeout_ms = 200;
  assert_int_equal(ht_peer_request(c->to_a, "drop", NULL, &ro, waiter_reply,
                                   w), 0);
  waiter_wait(w, 1);
  assert_int_equal(w->status, HT_ETIMEDOUT);
  waiter_free(w);
  cl = find_start("drop", HT_SPAN_CLIENT, 0);
  sa = find_start("drop", HT_SPAN_SERVER, 0);
  assert_non_null(cl);
  assert_non_null(sa);
  assert_int_equal(status_of(cl->ctx.span_id), HT_ETIMEDOUT);
  assert_int_equal(count(EV_ANN, cl->ctx.span_id, "cr"), 0);
  assert_int_equal(count(EV_END, cl->ctx.span_id, NULL), 1);
  assert_int_equal(count(EV_ANN, sa->ctx.span_id, "dropped"), 1);
}

static void test_debug_flag_and_sampler_off(void **state) {
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg);
  cfg.kind = HT_SAMPLER_NEVER;
  assert_int_equal(ht_sampling_set(&cfg), 0);
  reset_events();
  assert_int_equal(call(*state, "fan", HT_SAMPLE_DEFAULT), 0);
  usleep(50 * 1000);
  assert_int_equal(n_evs, 0); /* sampler says never: nothing anywhere */
  /* a DEBUG message is recorded at the root; the servers, in this same
   * process, do not trust remote DEBUG and record nothing */
  assert_int_equal(call(*state, "fan", HT_SAMPLE_DEBUG), 0);
  usleep(50 * 1000);
  const ev *cl = find_start("fan", HT_SPAN_CLIENT, 0);
  assert_non_null(cl);
  assert_true(cl->ctx.flags & HT_FLAG_DEBUG);
  assert_null(find_start("fan", HT_SPAN_SERVER, 0));
  cfg.trust_remote_debug = 1;
  cfg.remote_debug_rate = 1000;
  assert_int_equal(ht_sampling_set(&cfg), 0);
  reset_events();
  assert_int_equal(call(*state, "fan", HT_SAMPLE_DEBUG), 0);
  usleep(50 * 1000);
  check_chain("fan");
  ht_sampling_config_default(&cfg);
  assert_int_equal(ht_sampling_set(&cfg), 0);
}

static void test_stats_count_every_hop(void **state) {
  ht_traced_stats before = {.size = sizeof(before)};
  ht_traced_stats after = {.size = sizeof(after)};
  assert_int_equal(ht_traced_get_stats(&before), 0);
  assert_int_equal(call(*state, "fan", HT_SAMPLE_NO), 0);
  usleep(50 * 1000);
  assert_int_equal(ht_traced_get_stats(&after), 0);
  /* client->A, A->B requests and both replies: 4 sent, 4 received */
  assert_int_equal(after.msgs_sent - before.msgs_sent, 4);
  assert_int_equal(after.msgs_received - before.msgs_received, 4);
  assert_int_equal(after.msgs_sent_sampled, before.msgs_sent_sampled);
  assert_true(after.bytes_sent > before.bytes_sent);
}

/* Two messengers naming spans of one operation from one thread: each
 * span carries its own messenger's service (the traced messenger keeps
 * the names it looked up last per thread, traced_names.c), and an
 * operation sharing a memo slot with another ("fan", "no_such_op") gets
 * its own name. */
static void test_names_per_messenger(void **state) {
  cluster *c = *state;
  ht_messenger *other = traced("client2");
  ht_peer *to_a = NULL;
  assert_int_equal(ht_messenger_connect(other, c->url_a, &to_a), 0);
  reset_events();
  ht_peer *order[] = {c->to_a, to_a, c->to_a};
  for (int i = 0; i < 3; i++) {
    waiter *w = waiter_new();
    ht_message_sample(HT_SAMPLE_YES);
    assert_int_equal(ht_peer_request(order[i], "fan", NULL, NULL, waiter_reply, w), 0);
    waiter_wait(w, 1);
    assert_int_equal(w->status, 0);
    waiter_free(w);
  }
  assert_int_equal(call(c, "no_such_op", HT_SAMPLE_YES), HT_EPEERERROR);
  usleep(50 * 1000);
  const char *want[] = {"client", "client2", "client"};
  for (int i = 0; i < 3; i++) {
    const ev *cl = find_start("fan", HT_SPAN_CLIENT, i);
    assert_non_null(cl);
    assert_string_equal(cl->service, want[i]);
  }
  assert_non_null(find_start("no_such_op", HT_SPAN_CLIENT, 0));
  assert_non_null(find_start("no_such_op", HT_SPAN_SERVER, 0));
  assert_int_equal(ht_messenger_close(other, 1000), 0);
}

/* Operations that share a prefix ("osd_write", "osd_read", ...), as a
 * storage cluster's do: each name is looked up in the recorder once per
 * messenger and side, then remembered (the per-thread memo once kept
 * one slot for every name beginning alike, and looked them up again at
 * every request), and every span still carries its own name. */
static void on_any_ok(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  ht_request_reply(req, 0, NULL);
}

/* srv listening on loopback, fn handling op (NULL: any), and cli's peer
 * for it; url (128 bytes) gets srv's address. */
static ht_peer *pair_up(ht_messenger *srv, ht_messenger *cli, const char *op,
                        ht_handler_fn fn, char *url) {
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, 128), 0);
  assert_int_equal(ht_messenger_handle(srv, op, fn, NULL), 0);
  ht_peer *p = NULL;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  return p;
}

/* A sampled request of `op` that is answered ok. */
static void sampled_request_ok(ht_peer *p, const char *op) {
  waiter *w = waiter_new();
  ht_message_sample(HT_SAMPLE_YES);
  assert_int_equal(ht_peer_request(p, op, NULL, NULL, waiter_reply, w), 0);
  waiter_wait(w, 1);
  assert_int_equal(w->status, 0);
  waiter_free(w);
}

static void test_names_sharing_a_prefix_are_looked_up_once(void **state) {
  (void)state;
  ht_messenger *srv = traced("S"), *cli = traced("C");
  char url[128];
  ht_peer *p = pair_up(srv, cli, NULL, on_any_ok, url);
  static const char *const ops[] = {"osd_write", "osd_read", "osd_stat",
                                    "osd_delete", "osd_pull", "osd_peer_check"};
  enum { N_OPS = sizeof(ops) / sizeof(ops[0]), ROUNDS = 4 };
  reset_events();
  size_t descs_after_first = 0;
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < N_OPS; i++)
      sampled_request_ok(p, ops[i]);
    usleep(20 * 1000); /* the server sides end after their replies */
    pthread_mutex_lock(&ev_lock);
    size_t descs = n_descs;
    pthread_mutex_unlock(&ev_lock);
    if (r == 0)
      descs_after_first = descs;
    else /* no lookup after the first round */
      assert_int_equal(descs, descs_after_first);
  }
  for (int i = 0; i < N_OPS; i++)
    for (int r = 0; r < ROUNDS; r++) {
      const ev *cl = find_start(ops[i], HT_SPAN_CLIENT, r);
      const ev *sv = find_start(ops[i], HT_SPAN_SERVER, r);
      assert_non_null(cl);
      assert_non_null(sv);
      assert_string_equal(cl->service, "C");
      assert_string_equal(sv->service, "S");
      assert_int_equal(sv->ctx.parent_span_id, cl->ctx.span_id);
    }
  assert_int_equal(ht_messenger_close(cli, 1000), 0);
  assert_int_equal(ht_messenger_close(srv, 1000), 0);
}

static void on_long_op(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  if (req != NULL)
    ht_request_reply(req, 0, NULL);
}

/* Descs of this kind and name looked up since desc `from`. */
static size_t desc_lookups(size_t from, ht_span_kind kind, const char *name) {
  pthread_mutex_lock(&ev_lock);
  size_t n = 0;
  for (size_t i = from; i < n_descs; i++)
    n += descs[i].kind == kind && strcmp(descs[i].name, name) == 0;
  pthread_mutex_unlock(&ev_lock);
  return n;
}

/* How often the peer `text` was looked up; with `other`, the peers that
 * are not it: how many, and (in *other) the lookups of the last. */
static size_t peer_lookups(const char *text, size_t *n_other, size_t *other) {
  pthread_mutex_lock(&ev_lock);
  size_t n = 0;
  *n_other = 0;
  for (size_t i = 0; i < n_peers; i++) {
    if (strcmp(peers[i].text, text) == 0) {
      n = peers[i].lookups;
    } else {
      ++*n_other;
      *other = peers[i].lookups;
    }
  }
  pthread_mutex_unlock(&ev_lock);
  return n;
}

/* Requests and one-ways to a registered handler: sampled, ROUNDS times. */
static void long_op_rounds(ht_peer *p, const char *op, int rounds) {
  for (int r = 0; r < rounds; r++) {
    sampled_request_ok(p, op);
    ht_message_sample(HT_SAMPLE_YES);
    assert_int_equal(ht_peer_send(p, op, NULL), 0);
  }
  usleep(50 * 1000); /* the server sides end after their replies */
}

/* A server span's names stay with its handler, its peer with the
 * connection (traced_hooks.c h_handler_init, h_conn_init): looked up
 * once each, whatever their length (the per-thread memos keep none of 40
 * bytes or more), and again once for another recorder. */
static void test_a_handlers_names_stay_with_it(void **state) {
  (void)state;
  static const char op[] = "a_long_operation_name_of_more_than_forty_bytes_x";
  _Static_assert(sizeof(op) > 41, "longer than the per-thread memos keep");
  enum { ROUNDS = 5 };
  ht_messenger *srv = traced("S"), *cli = traced("C");
  char url[128];
  ht_peer *p = pair_up(srv, cli, op, on_long_op, url);
  reset_events();
  pthread_mutex_lock(&ev_lock);
  size_t from = n_descs;
  n_peers = 0;
  pthread_mutex_unlock(&ev_lock);
  long_op_rounds(p, op, ROUNDS);
  assert_int_equal(desc_lookups(from, HT_SPAN_SERVER, op), 1);
  assert_int_equal(desc_lookups(from, HT_SPAN_CONSUMER, op), 1);
  /* the client's: looked up each time (a long name, no handler) */
  assert_int_equal(desc_lookups(from, HT_SPAN_CLIENT, op), ROUNDS);
  pthread_mutex_lock(&ev_lock);
  bool named = true; /* in full, every one */
  for (int r = 0; r < ROUNDS; r++)
    named &= find_start(op, HT_SPAN_SERVER, r) != NULL &&
             find_start(op, HT_SPAN_CONSUMER, r) != NULL;
  from = n_descs;
  pthread_mutex_unlock(&ev_lock);
  assert_true(named);
  /* the client's address, as the server's connection names it: once;
   * the server's url (client sides, per-thread memos): once a thread */
  size_t n_other = 0, conn = 0;
  size_t to_server = peer_lookups(url, &n_other, &conn);
  assert_int_equal(n_other, 1);
  assert_int_equal(conn, 1);
  assert_true(to_server >= 1 && to_server <= 2);
  ht_events_install(&capture_ops_2);
  long_op_rounds(p, op, 2);
  ht_events_install(&capture_ops);
  long_op_rounds(p, op, 2);
  assert_int_equal(desc_lookups(from, HT_SPAN_SERVER, op), 2);
  assert_int_equal(desc_lookups(from, HT_SPAN_CONSUMER, op), 2);
  peer_lookups(url, &n_other, &conn);
  assert_int_equal(conn, 3);
  assert_int_equal(ht_messenger_close(cli, 1000), 0);
  assert_int_equal(ht_messenger_close(srv, 1000), 0);
}

/* A one-way: PRODUCER span at the sender, CONSUMER child at the receiver
 * (ended once the handler returned, here the no-handler path). */
static void test_oneway_spans(void **state) {
  cluster *c = *state;
  reset_events();
  ht_message_sample(HT_SAMPLE_YES);
  assert_int_equal(ht_peer_send(c->to_a, "note", NULL), 0);
  const ev *prod = NULL, *cons = NULL;
  int ended = 0;
  for (int i = 0; i < 200 && !ended; i++) {
    usleep(10 * 1000);
    pthread_mutex_lock(&ev_lock);
    prod = find_start("note", HT_SPAN_PRODUCER, 0);
    cons = find_start("note", HT_SPAN_CONSUMER, 0);
    ended = cons != NULL && count(EV_END, cons->ctx.span_id, NULL) == 1;
    pthread_mutex_unlock(&ev_lock);
  }
  assert_non_null(prod);
  assert_non_null(cons);
  assert_int_equal(cons->ctx.parent_span_id, prod->ctx.span_id);
  assert_int_equal(count(EV_ANN, prod->ctx.span_id, "cs"), 1);
  assert_int_equal(count(EV_END, prod->ctx.span_id, NULL), 1);
  assert_int_equal(count(EV_ANN, cons->ctx.span_id, "sr"), 1);
  assert_int_equal(count(EV_END, cons->ctx.span_id, NULL), 1);
}

/* The context API on its own and with a plain messenger. */
static int plain_ctx_rc = 1;
static void on_plain(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  ht_trace_context ctx;
  plain_ctx_rc = ht_request_context(req, &ctx);
  ht_request_reply(req, 0, NULL);
}

static void test_context_api(void **state) {
  (void)state;
  ht_trace_context none = ht_context_capture();
  assert_int_equal(ht_context_validate(&none), HT_EBADCONTEXT);
  ht_trace_context bad = {0, 0, 0, 0, HT_FLAG_SAMPLED};
  ht_trace_context prev = ht_context_restore(&bad); /* invalid: clears */
  assert_int_equal(ht_context_validate(&prev), HT_EBADCONTEXT);
  ht_trace_context good = {1, 2, 3, 0, HT_FLAG_SAMPLED};
  ht_context_restore(&good);
  ht_trace_context got = ht_context_capture();
  assert_true(ht_context_equal(&got, &good));
  prev = ht_context_restore(NULL);
  assert_true(ht_context_equal(&prev, &good));
  assert_int_equal(ht_request_context(NULL, &got), HT_EINVAL);
  ht_message_sample((ht_sample_hint)77); /* out of range: default */

  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_PLAIN;
  ht_messenger *srv, *cli;
  assert_int_equal(ht_messenger_new(&o, &srv), 0);
  assert_int_equal(ht_messenger_new(&o, &cli), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url,
                                       sizeof(url)), 0);
  assert_int_equal(ht_messenger_handle(srv, NULL, on_plain, NULL), 0);
  ht_peer *p;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  waiter *w = waiter_new();
  assert_int_equal(ht_peer_request(p, "x", NULL, NULL, waiter_reply, w), 0);
  waiter_wait(w, 1);
  assert_int_equal(w->status, 0);
  waiter_free(w);
  assert_int_equal(plain_ctx_rc, HT_ENOENT);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fanout_in_handler),
      cmocka_unit_test(test_worker_with_captured_context),
      cmocka_unit_test(test_unsampled_propagates_ids),
      cmocka_unit_test(test_errors_recorded),
      cmocka_unit_test(test_debug_flag_and_sampler_off),
      cmocka_unit_test(test_stats_count_every_hop),
      cmocka_unit_test(test_names_per_messenger),
      cmocka_unit_test(test_names_sharing_a_prefix_are_looked_up_once),
      cmocka_unit_test(test_a_handlers_names_stay_with_it),
      cmocka_unit_test(test_oneway_spans),
      cmocka_unit_test(test_context_api),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
