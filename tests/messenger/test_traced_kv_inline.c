/* A server span's first integer key-value (ht_request_kv_int) reaches the
 * recorder inside the span's own side, not as an event of its own: a
 * recorded hop with one handler key-value is two events. Later ones, one
 * whose key span_k cannot hold (over HT_SCHEMA_KV_KEY_MAX bytes), and
 * string ones, stay events apart. Real messengers over loopback TCP. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hoptrace/error.h"
#include "hoptrace/messenger.h"
#include "hoptrace/sampler.h"
#include "hoptrace/tracing.h"
#include "hoptrace/traced.h"
#include "hoptrace_schema.h"
#include "propagate/events.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned sides, kv_ints, kv_strs, server_sides_with_kv;
static char kv_key[64];
static int64_t kv_value;

static void r_start(const ht_trace_context *c, const ht_span_info *i, const void *d) {
  (void)c, (void)i, (void)d;
}
static void r_ann(const ht_trace_context *c, const char *n, int in) { (void)c, (void)n, (void)in; }
static void r_kv_str(const ht_trace_context *c, const char *k, const char *v) {
  (void)c, (void)k, (void)v;
  pthread_mutex_lock(&lock);
  kv_strs++;
  pthread_mutex_unlock(&lock);
}
static void r_kv_int(const ht_trace_context *c, const char *k, int64_t v) {
  (void)c, (void)k, (void)v;
  pthread_mutex_lock(&lock);
  kv_ints++;
  pthread_mutex_unlock(&lock);
}
static void r_kvs(const ht_trace_context *c, const ht_kv *k, size_t n) { (void)c, (void)k, (void)n; }
static void r_status(const ht_trace_context *c, int32_t s, const char *m) { (void)c, (void)s, (void)m; }
static void r_msg(const ht_trace_context *c, int d, const char *a, uint32_t t, uint64_t s,
                  uint64_t z, const char *p) {
  (void)c, (void)d, (void)a, (void)t, (void)s, (void)z, (void)p;
}
static void r_side(const ht_span_side *s) {
  pthread_mutex_lock(&lock);
  sides++;
  if (s->kv_key != NULL) {
    /* the reference is the text itself: r_text_ref's copy */
    snprintf(kv_key, sizeof(kv_key), "%s", (const char *)s->kv_key);
    kv_value = s->kv_value;
    server_sides_with_kv += s->info.kind == HT_SPAN_SERVER;
  }
  pthread_mutex_unlock(&lock);
}
static const void *r_desc_ref(const ht_span_info *i) { return i->name[0] ? "desc" : NULL; }
/* Texts kept for the life of the process, as the recorder's are. */
static char texts[16][64];
static const void *r_text_ref(const char *text) {
  pthread_mutex_lock(&lock);
  const char *ref = NULL;
  for (int i = 0; i < 16 && ref == NULL; i++)
    if (texts[i][0] == '\0' || strcmp(texts[i], text) == 0) {
      snprintf(texts[i], sizeof(texts[i]), "%s", text);
      ref = texts[i];
    }
  pthread_mutex_unlock(&lock);
  return ref;
}

static const ht_event_ops recorder = {r_start, r_ann,    r_kv_str, r_kv_int,   r_kvs,
                                      r_status, r_msg,   r_side,   r_desc_ref, r_text_ref,
                                      NULL,     NULL, NULL};

/* keys of span_k's longest plus one ("kkk...k") and of its longest */
static char long_key[HT_SCHEMA_KV_KEY_MAX + 2], longest_key[HT_SCHEMA_KV_KEY_MAX + 1];

static void on_op(void *arg, ht_request *req, const ht_envelope *msg) {
  (void)msg, (void)arg;
  assert_int_equal(ht_request_kv_int(req, long_key, 1), 0); /* apart */
  assert_int_equal(ht_request_kv_int(req, longest_key, 4096), 0);
  assert_int_equal(ht_request_kv_int(req, "later", 2), 0);
  assert_int_equal(ht_request_kv_str(req, "s", "v"), 0);
  ht_request_reply(req, 0, NULL);
}

static int replied;
static void on_reply(void *arg, int status, const ht_envelope *reply) {
  (void)arg, (void)reply;
  pthread_mutex_lock(&lock);
  replied = status == 0 ? 1 : -1;
  pthread_mutex_unlock(&lock);
}

/* Waits up to 10 s for *v to reach want (under lock). */
static unsigned wait_for(const unsigned *v, unsigned want) {
  for (int i = 0; i < 1000; i++) {
    pthread_mutex_lock(&lock);
    unsigned now = *v;
    pthread_mutex_unlock(&lock);
    if (now >= want)
      return now;
    usleep(10 * 1000);
  }
  return *v;
}

static void first_integer_kv_rides_in_the_server_side(void **state) {
  (void)state;
  memset(long_key, 'k', sizeof(long_key) - 1);
  memset(longest_key, 'k', sizeof(longest_key) - 1);
  ht_tracing_init();
  ht_events_install(&recorder);
  ht_messenger_options o;
  ht_messenger_options_init(&o);
  o.flavour = HT_MESSENGER_TRACED;
  ht_messenger *srv, *cli;
  assert_int_equal(ht_messenger_new(&o, &srv), 0);
  assert_int_equal(ht_messenger_new(&o, &cli), 0);
  char url[128];
  assert_int_equal(ht_messenger_listen(srv, "tcp://127.0.0.1:0", url, sizeof(url)), 0);
  assert_int_equal(ht_messenger_handle(srv, "op", on_op, NULL), 0);
  ht_peer *p = NULL;
  assert_int_equal(ht_messenger_connect(cli, url, &p), 0);
  ht_message_sample(HT_SAMPLE_YES);
  assert_int_equal(ht_peer_request(p, "op", NULL, NULL, on_reply, NULL), 0);
  assert_int_equal(wait_for(&sides, 2), 2); /* client and server */
  assert_int_equal(replied, 1);
  assert_int_equal(server_sides_with_kv, 1);
  assert_string_equal(kv_key, longest_key);
  assert_int_equal(kv_value, 4096);
  assert_int_equal(kv_ints, 2); /* the long key and "later": apart */
  assert_int_equal(kv_strs, 1);
  assert_int_equal(ht_messenger_close(cli, 0), 0);
  assert_int_equal(ht_messenger_close(srv, 0), 0);
  ht_events_install(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(first_integer_kv_rides_in_the_server_side),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
