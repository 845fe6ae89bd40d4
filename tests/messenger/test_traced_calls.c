/* Every call the traced messenger is asked to make leaves a span, and a
 * handler's key-values land on its own span: a capture
 * recorder keeps each span side (kind, status, frames, peer) and each
 * key-value and annotation with the ids it was recorded with. Real
 * messengers over loopback TCP. */
#include <pthread.h>
#include <stdatomic.h>
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

typedef struct side {
  ht_trace_context ctx;
  ht_span_kind kind;
  char name[64];
  int32_t status;
  uint8_t frames;
  char peer[128];
} side;

typedef struct kv {
  ht_trace_context ctx;
  char key[80];
  char str[400];
  int64_t i64;
  int is_int, is_note;
} kv;

#define MAX 512
static side sides[MAX];
static kv kvs[MAX];
static size_t n_sides, n_kvs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct named {
  ht_span_kind kind;
  char name[64];
} named;
static named names[64];
static size_t n_names;
static char peer_texts[16][128];
static size_t n_peer_texts;

static kv *add_kv(const ht_trace_context *ctx, const char *key) {
  pthread_mutex_lock(&lock);
  kv *k = n_kvs < MAX ? &kvs[n_kvs++] : NULL;
  if (k != NULL) {
    memset(k, 0, sizeof(*k));
    k->ctx = *ctx;
    snprintf(k->key, sizeof(k->key), "%s", key);
  }
  pthread_mutex_unlock(&lock);
  return k;
}
static void c_span_start(const ht_trace_context *c, const ht_span_info *i, const void *d) {
  (void)c, (void)i, (void)d;
}
static void c_annotate(const ht_trace_context *ctx, const char *name, int in_span) {
  (void)in_span;
  kv *k = add_kv(ctx, name);
  if (k)
    k->is_note = 1;
}
static void c_kv_str(const ht_trace_context *ctx, const char *key, const char *v) {
  kv *k = add_kv(ctx, key);
  if (k)
    snprintf(k->str, sizeof(k->str), "%s", v);
}
static void c_kv_int(const ht_trace_context *ctx, const char *key, int64_t v) {
  kv *k = add_kv(ctx, key);
  if (k) {
    k->i64 = v;
    k->is_int = 1;
  }
}
static void c_kvs(const ht_trace_context *c, const ht_kv *k, size_t n) { (void)c, (void)k, (void)n; }
static void c_status(const ht_trace_context *c, int32_t code, const char *m) {
  (void)c, (void)code, (void)m;
}
static void c_msg(const ht_trace_context *c, int dir, const char *a, uint32_t t, uint64_t s,
                  uint64_t z, const char *p) {
  (void)c, (void)dir, (void)a, (void)t, (void)s, (void)z, (void)p;
}
static void c_side(const ht_span_side *s) {
  pthread_mutex_lock(&lock);
  side *d = n_sides < MAX ? &sides[n_sides++] : NULL;
  if (d != NULL) {
    memset(d, 0, sizeof(*d));
    d->ctx = *s->ctx;
    const named *nm = s->desc;
    d->kind = nm != NULL ? nm->kind : s->info.kind;
    snprintf(d->name, sizeof(d->name), "%s", nm != NULL ? nm->name : s->info.name);
    d->status = s->status;
    d->frames = s->frames;
    snprintf(d->peer, sizeof(d->peer), "%s", s->peer != NULL ? (const char *)s->peer : "");
  }
  pthread_mutex_unlock(&lock);
  if (s->kv_key != NULL) /* the span's key-value its own event carries */
    c_kv_int(s->ctx, s->kv_key, s->kv_value);
}
static const void *c_desc_ref(const ht_span_info *info) {
  pthread_mutex_lock(&lock);
  named *n = n_names < 64 ? &names[n_names++] : NULL;
  if (n != NULL) {
    n->kind = info->kind;
    snprintf(n->name, sizeof(n->name), "%s", info->name);
  }
  pthread_mutex_unlock(&lock);
  return n;
}
static const void *c_peer_ref(const char *peer) {
  pthread_mutex_lock(&lock);
  char *p = n_peer_texts < 16 ? peer_texts[n_peer_texts++] : NULL;
  if (p != NULL)
    snprintf(p, 128, "%s", peer);
  pthread_mutex_unlock(&lock);
  return p;
}
static const ht_event_ops capture = {c_span_start, c_annotate, c_kv_str, c_kv_int, c_kvs,
                                     c_status,     c_msg,      c_side,   c_desc_ref, c_peer_ref, NULL, NULL, NULL};

/* The same recorder behind a session that starts while a span runs:
 * spans starting before the gate opens are not written. */
static atomic_int gate_open;
static int c_recording(void) { return atomic_load(&gate_open); }
static const ht_event_ops gated = {c_span_start, c_annotate, c_kv_str, c_kv_int, c_kvs,
                                   c_status,     c_msg,      c_side,   c_desc_ref, c_peer_ref,
                                   NULL,         c_recording, NULL};

static void reset(void) {
  pthread_mutex_lock(&lock);
  n_sides = n_kvs = 0;
  pthread_mutex_unlock(&lock);
}

static const side *find_side(const char *name, ht_span_kind kind) {
  for (size_t i = 0; i < n_sides; i++)
    if (sides[i].kind == kind && strcmp(sides[i].name, name) == 0)
      return &sides[i];
  return NULL;
}

static const kv *find_kv(uint64_t span_id, const char *key) {
  for (size_t i = 0; i < n_kvs; i++)
    if (kvs[i].ctx.span_id == span_id && strcmp(kvs[i].key, key) == 0)
      return &kvs[i];
  return NULL;
}

/* Waits (at most 5 s) until a side named so of that kind is recorded. */
static const side *wait_side(const char *name, ht_span_kind kind) {
  const side *s = NULL;
  for (int i = 0; i < 500 && s == NULL; i++) {
    pthread_mutex_lock(&lock);
    s = find_side(name, kind);
    pthread_mutex_unlock(&lock);
    if (s == NULL)
      usleep(10000);
  }
  return s;
}

/* --- a client and a server */

typedef struct pair {
  ht_messenger *client, *server;
  ht_peer *to_server, *to_nowhere;
  char url[128], nowhere[128];
} pair;

static ht_messenger *traced(const char *name) {
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_TRACED;
  o.name = name;
  o.request_timeout_ms = 2000;
  o.reconnect_min_ms = 5000; /* the dead peer stays refused while a test runs */
  ht_messenger *m = NULL;
  assert_int_equal(ht_messenger_new(&o, &m), 0);
  return m;
}

static char long_value[600];
static int rc_long_key, rc_33rd, rc_null;

static void on_tagged(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  assert_int_equal(ht_request_kv_str(req, "object", "rbd_data.42"), 0);
  assert_int_equal(ht_request_kv_int(req, "size", 4096), 0);
  assert_int_equal(ht_request_annotate(req, "applied"), 0);
  assert_int_equal(ht_current_kv_str("pg", "1.2f"), 0);
  assert_int_equal(ht_request_kv_str(req, "long", long_value), 0);
  char key[HT_KV_KEY_MAX + 2];
  memset(key, 'k', sizeof(key) - 1);
  key[sizeof(key) - 1] = '\0';
  rc_long_key = ht_request_kv_int(req, key, 1);
  rc_null = ht_request_kv_str(req, "x", NULL);
  for (int i = 4; i < HT_SPAN_KVS_MAX; i++)
    ht_request_kv_int(req, "fill", i);
  rc_33rd = ht_request_kv_int(req, "one_too_many", 1);
  ht_request_reply(req, 0, NULL);
}

/* A session starts while the handler runs: its span started unwritten. */
static int rc_late;
static void on_late(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)arg, (void)msg;
  atomic_store(&gate_open, 1);
  rc_late = ht_current_kv_int("late", 1);
  ht_request_reply(req, 0, NULL);
}

static int setup(void **state) {
  ht_tracing_init();
  ht_events_install(&capture);
  ht_sampling_config cfg;
  ht_sampling_config_default(&cfg); /* parent-based, roots always */
  assert_int_equal(ht_sampling_set(&cfg), 0);
  pair *p = calloc(1, sizeof(*p));
  p->client = traced("client");
  p->server = traced("server");
  assert_int_equal(ht_messenger_listen(p->server, "tcp://127.0.0.1:0", p->url, sizeof(p->url)), 0);
  assert_int_equal(ht_messenger_handle(p->server, "tagged", on_tagged, NULL), 0);
  assert_int_equal(ht_messenger_handle(p->server, "late", on_late, NULL), 0);
  assert_int_equal(ht_messenger_connect(p->client, p->url, &p->to_server), 0);
  /* a port nobody listens on: a listener opened and closed */
  ht_messenger *gone = traced("gone");
  assert_int_equal(ht_messenger_listen(gone, "tcp://127.0.0.1:0", p->nowhere, sizeof(p->nowhere)), 0);
  assert_int_equal(ht_messenger_close(gone, 0), 0);
  assert_int_equal(ht_messenger_connect(p->client, p->nowhere, &p->to_nowhere), 0);
  for (int i = 0; i < 300 && !ht_peer_connected(p->to_server); i++)
    usleep(10000);
  usleep(200000); /* the dead peer's connect has failed: it backs off */
  *state = p;
  return 0;
}

static int teardown(void **state) {
  pair *p = *state;
  assert_int_equal(ht_messenger_close(p->client, 1000), 0);
  assert_int_equal(ht_messenger_close(p->server, 1000), 0);
  free(p);
  ht_events_install(NULL);
  return 0;
}

static void never_called(void *arg, int status, const ht_envelope *reply) {
  (void)arg, (void)status, (void)reply;
  fail_msg("a refused call's callback ran");
}

/* A call refused at once (the peer backs off) is a client span: ERROR
 * with the error's name, its peer, no frame; an unsampled one records
 * nothing. */
static void test_a_refused_call_is_a_span(void **state) {
  pair *p = *state;
  reset();
  assert_int_equal(ht_next_call_kv_str("client.op_id", "c0.17"), 0);
  int rc = ht_peer_request(p->to_nowhere, "refused_op", NULL, NULL, never_called, NULL);
  assert_int_equal(rc, HT_ENOTCONN);
  const side *s = find_side("refused_op", HT_SPAN_CLIENT);
  assert_non_null(s);
  assert_int_equal(s->status, HT_ENOTCONN);
  assert_int_equal(s->frames, 0);
  assert_string_equal(s->peer, p->nowhere);
  const kv *e = find_kv(s->ctx.span_id, "error");
  assert_non_null(e);
  assert_string_equal(e->str, "HT_ENOTCONN");
  const kv *id = find_kv(s->ctx.span_id, "client.op_id");
  assert_non_null(id);
  assert_string_equal(id->str, "c0.17");

  reset();
  ht_message_sample(HT_SAMPLE_NO);
  assert_int_equal(ht_next_call_kv_int("ignored", 1), 0);
  assert_int_equal(ht_peer_request(p->to_nowhere, "quiet_op", NULL, NULL, never_called, NULL),
                   HT_ENOTCONN);
  assert_int_equal(n_sides, 0);
  assert_int_equal(n_kvs, 0);
}

static void test_a_refused_oneway_is_a_span(void **state) {
  pair *p = *state;
  reset();
  assert_int_equal(ht_peer_send(p->to_nowhere, "refused_note", NULL), HT_ENOTCONN);
  const side *s = find_side("refused_note", HT_SPAN_PRODUCER);
  assert_non_null(s);
  assert_int_equal(s->status, HT_ENOTCONN);
  assert_int_equal(s->frames, 0);
  assert_string_equal(s->peer, p->nowhere);
  /* and one that goes out: its span once its frame is encoded */
  reset();
  assert_int_equal(ht_peer_send(p->to_server, "sent_note", NULL), 0);
  s = find_side("sent_note", HT_SPAN_PRODUCER);
  assert_non_null(s);
  assert_int_equal(s->status, 0);
  assert_int_equal(s->frames, HT_SIDE_START_FRAME);
}

static int waited;
static void count_reply(void *arg, int status, const ht_envelope *reply) {
  (void)arg, (void)reply;
  assert_int_equal(status, 0);
  __atomic_add_fetch(&waited, 1, __ATOMIC_SEQ_CST);
}

/* The handler's key-values on its own server span, exact; the bounds. */
static void test_a_handlers_kvs_on_its_span(void **state) {
  pair *p = *state;
  reset();
  memset(long_value, 'v', sizeof(long_value) - 1);
  /* a 3-byte character across the 256-byte bound: cut before it */
  memcpy(long_value + HT_KV_VALUE_MAX - 1, "\xe2\x82\xac", 3);
  ht_traced_stats before = {.size = sizeof(before)}, after = {.size = sizeof(after)};
  assert_int_equal(ht_traced_get_stats(&before), 0);
  waited = 0;
  assert_int_equal(ht_peer_request(p->to_server, "tagged", NULL, NULL, count_reply, NULL), 0);
  for (int i = 0; i < 500 && !__atomic_load_n(&waited, __ATOMIC_SEQ_CST); i++)
    usleep(10000);
  const side *srv = wait_side("tagged", HT_SPAN_SERVER);
  assert_non_null(srv);
  uint64_t id = srv->ctx.span_id;
  assert_string_equal(find_kv(id, "object")->str, "rbd_data.42");
  assert_int_equal(find_kv(id, "size")->i64, 4096);
  assert_true(find_kv(id, "size")->is_int);
  assert_true(find_kv(id, "applied")->is_note);
  assert_string_equal(find_kv(id, "pg")->str, "1.2f"); /* ht_current_*: the same span */
  assert_int_equal(strlen(find_kv(id, "long")->str), HT_KV_VALUE_MAX - 1);
  assert_int_equal(rc_long_key, HT_EINVAL);
  assert_int_equal(rc_null, HT_EINVAL);
  /* the request path's own count: 3 + "long" + the fills = 32 */
  assert_int_equal(rc_33rd, HT_ENOSPC);
  assert_null(find_kv(id, "one_too_many"));
  assert_int_equal(ht_traced_get_stats(&after), 0);
  assert_int_equal(after.kvs_dropped - before.kvs_dropped, 1);
  assert_int_equal(after.kvs_truncated - before.kvs_truncated, 1);
  /* the next call's key-values went with one call only */
  assert_int_equal(ht_next_call_kv_int("attempt", 1), 0);
  waited = 0;
  assert_int_equal(ht_peer_request(p->to_server, "tagged", NULL, NULL, count_reply, NULL), 0);
  assert_int_equal(ht_peer_request(p->to_server, "tagged", NULL, NULL, count_reply, NULL), 0);
  for (int i = 0; i < 500 && __atomic_load_n(&waited, __ATOMIC_SEQ_CST) < 2; i++)
    usleep(10000);
  size_t attempts = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n_kvs; i++)
    attempts += strcmp(kvs[i].key, "attempt") == 0;
  pthread_mutex_unlock(&lock);
  assert_int_equal(attempts, 1);
}

/* Unsampled: every call returns 0 and nothing is recorded. */
static void test_kvs_are_free_unsampled(void **state) {
  pair *p = *state;
  reset();
  waited = 0;
  ht_message_sample(HT_SAMPLE_NO);
  assert_int_equal(ht_peer_request(p->to_server, "tagged", NULL, NULL, count_reply, NULL), 0);
  for (int i = 0; i < 500 && !__atomic_load_n(&waited, __ATOMIC_SEQ_CST); i++)
    usleep(10000);
  usleep(50000);
  assert_int_equal(n_kvs, 0);
  assert_int_equal(n_sides, 0);
  assert_int_equal(ht_request_kv_int(NULL, "k", 1), HT_EINVAL);
  assert_int_equal(ht_current_kv_int("no_current_span", 1), 0);
}

/* A span that started unwritten gets nothing through the thread's
 * current context either, even once a session records: never a tag
 * without its span. */
static void test_current_kv_follows_the_span_written(void **state) {
  pair *p = *state;
  reset();
  atomic_store(&gate_open, 0);
  ht_events_install(&gated);
  waited = 0;
  rc_late = -1;
  assert_int_equal(ht_peer_request(p->to_server, "late", NULL, NULL, count_reply, NULL), 0);
  for (int i = 0; i < 500 && !__atomic_load_n(&waited, __ATOMIC_SEQ_CST); i++)
    usleep(10000);
  usleep(50000);
  ht_events_install(&capture);
  assert_int_equal(__atomic_load_n(&waited, __ATOMIC_SEQ_CST), 1);
  assert_int_equal(rc_late, 0);
  pthread_mutex_lock(&lock);
  size_t late = 0;
  for (size_t i = 0; i < n_kvs; i++)
    late += strcmp(kvs[i].key, "late") == 0;
  assert_int_equal(late, 0);
  assert_null(find_side("late", HT_SPAN_SERVER));
  pthread_mutex_unlock(&lock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_refused_call_is_a_span),
      cmocka_unit_test(test_a_refused_oneway_is_a_span),
      cmocka_unit_test(test_a_handlers_kvs_on_its_span),
      cmocka_unit_test(test_kvs_are_free_unsampled),
      cmocka_unit_test(test_current_kv_follows_the_span_written),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
