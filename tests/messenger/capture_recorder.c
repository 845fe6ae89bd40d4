/* The capture tests' recorder (capture_recorder.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture_recorder.h"

side sides[CAPTURES_MAX];
capture captures[CAPTURES_MAX];
size_t n_sides, n_captures;
int captures_recorded = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void r_span_start(const ht_trace_context *c, const ht_span_info *i, const void *d) {
  (void)c, (void)i, (void)d;
}
static void r_annotate(const ht_trace_context *c, const char *n, int in) { (void)c, (void)n, (void)in; }
static void r_kv_str(const ht_trace_context *c, const char *k, const char *v) { (void)c, (void)k, (void)v; }
static void r_kv_int(const ht_trace_context *c, const char *k, int64_t v) { (void)c, (void)k, (void)v; }
static void r_kvs(const ht_trace_context *c, const ht_kv *k, size_t n) { (void)c, (void)k, (void)n; }
static void r_status(const ht_trace_context *c, int32_t s, const char *m) { (void)c, (void)s, (void)m; }
static void r_msg(const ht_trace_context *c, int d, const char *a, uint32_t t, uint64_t s,
                  uint64_t z, const char *p) {
  (void)c, (void)d, (void)a, (void)t, (void)s, (void)z, (void)p;
}
static void r_side(const ht_span_side *s) {
  pthread_mutex_lock(&lock);
  if (n_sides < CAPTURES_MAX) {
    side *d = &sides[n_sides++];
    d->ctx = *s->ctx;
    d->kind = s->info.kind;
    snprintf(d->name, sizeof(d->name), "%s", s->info.service);
  }
  pthread_mutex_unlock(&lock);
}
/* A reference a name: what an adaptive threshold follows its operation by. */
static char names[32][64];
static size_t n_names;
static const void *r_desc_ref(const ht_span_info *i) {
  pthread_mutex_lock(&lock);
  const void *ref = NULL;
  for (size_t k = 0; k < n_names && ref == NULL; k++)
    if (strcmp(names[k], i->name) == 0)
      ref = names[k];
  if (ref == NULL && n_names < 32) {
    snprintf(names[n_names], sizeof(names[0]), "%s", i->name);
    ref = names[n_names++];
  }
  pthread_mutex_unlock(&lock);
  return ref;
}
static const void *r_peer_ref(const char *p) { (void)p; return NULL; }
static int r_capture(const ht_trace_context *c, const ht_capture_note *n) {
  pthread_mutex_lock(&lock);
  if (n_captures < CAPTURES_MAX) {
    capture *d = &captures[n_captures++];
    d->ctx = *c;
    d->note = *n;
    snprintf(d->origin, sizeof(d->origin), "%s", n->origin);
  }
  pthread_mutex_unlock(&lock);
  return captures_recorded;
}
const ht_event_ops capture_recorder = {r_span_start, r_annotate, r_kv_str, r_kv_int,
                                       r_kvs,        r_status,   r_msg,    r_side,
                                       r_desc_ref,   r_peer_ref, r_capture, NULL, NULL};

void recorder_reset(void) {
  pthread_mutex_lock(&lock);
  n_sides = n_captures = 0;
  pthread_mutex_unlock(&lock);
}

size_t recorder_count(size_t *n) {
  pthread_mutex_lock(&lock);
  size_t v = *n;
  pthread_mutex_unlock(&lock);
  return v;
}

void recorder_wait(size_t *counter, size_t n) {
  for (int i = 0; i < 500 && recorder_count(counter) < n; i++)
    usleep(10000);
}
