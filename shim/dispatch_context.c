/* The calling thread's current trace context (the dispatch context while
 * a handler runs, or what ht_context_restore set), the pending
 * per-message sampling hint, and the message counters.
 * Must never: lock or allocate on the hot path (a thread's counter block
 * is allocated once), or keep anything but plain values in a context (a
 * context outlives every span and messenger it came from). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/traced.h"
#include "traced_internal.h"

static _Thread_local ht_trace_context tl_current;
static _Thread_local bool tl_has_current;
static _Thread_local ht_sample_hint tl_hint;

bool ht_shim_current(ht_trace_context *out) {
  if (tl_has_current)
    *out = tl_current;
  return tl_has_current;
}

void ht_shim_set_current(const ht_trace_context *ctx) {
  /* ht_shim_current reads tl_current only while tl_has_current */
  if (ctx != NULL)
    tl_current = *ctx;
  tl_has_current = ctx != NULL;
}

ht_trace_context ht_context_capture(void) {
  ht_trace_context ctx;
  memset(&ctx, 0, sizeof(ctx));
  ht_shim_current(&ctx);
  return ctx;
}

ht_trace_context ht_context_restore(const ht_trace_context *ctx) {
  ht_trace_context prev = ht_context_capture();
  /* an application's context: an invalid one clears, never stays current */
  bool valid = ctx != NULL && ht_context_validate(ctx) == 0;
  ht_shim_set_current(valid ? ctx : NULL);
  return prev;
}

void ht_message_sample(ht_sample_hint hint) {
  tl_hint = (unsigned)hint <= HT_SAMPLE_DEBUG ? hint : HT_SAMPLE_DEFAULT;
}

ht_sample_hint ht_shim_take_hint(void) {
  ht_sample_hint h = tl_hint;
  tl_hint = HT_SAMPLE_DEFAULT;
  return h;
}

/* --- counters: per thread (no shared cache line on the hot path),
 * summed on read; a thread's counts are folded into `retired` when it
 * exits. */

enum { C_SENT, C_RECV, C_BSENT, C_BRECV, C_SSENT, C_SRECV, C_FAILED, C_N };

typedef struct tcounters {
  /* written by the owner, read by anyone; on lines of their own */
  _Alignas(64) atomic_uint_fast64_t v[C_N];
  struct tcounters *prev, *next;
} tcounters;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static tcounters reg = {.prev = &reg, .next = &reg};
static uint64_t retired[C_N];
static pthread_key_t reg_key;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static _Thread_local tcounters *tl_counters;
static tcounters fallback; /* when a block cannot be allocated */

static void retire(void *arg) {
  tcounters *c = arg;
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < C_N; i++)
    retired[i] += atomic_load_explicit(&c->v[i], memory_order_relaxed);
  c->prev->next = c->next;
  c->next->prev = c->prev;
  pthread_mutex_unlock(&reg_lock);
  free(c);
}

static void make_key(void) { pthread_key_create(&reg_key, retire); }

static tcounters *mine(void) {
  tcounters *c = tl_counters;
  if (__builtin_expect(c != NULL, 1))
    return c;
  pthread_once(&reg_once, make_key);
  c = aligned_alloc(_Alignof(tcounters), sizeof(*c));
  if (c == NULL)
    return &fallback; /* counts still go somewhere (racy, never lost) */
  memset(c, 0, sizeof(*c));
  pthread_mutex_lock(&reg_lock);
  c->next = reg.next;
  c->prev = &reg;
  reg.next->prev = c;
  reg.next = c;
  pthread_mutex_unlock(&reg_lock);
  pthread_setspecific(reg_key, c);
  tl_counters = c;
  return c;
}

static void add(tcounters *c, int i, uint64_t n) {
  atomic_store_explicit(
      &c->v[i], atomic_load_explicit(&c->v[i], memory_order_relaxed) + n,
      memory_order_relaxed);
}

void ht_shim_count_send(size_t bytes, bool sampled) {
  tcounters *c = mine();
  add(c, C_SENT, 1);
  add(c, C_BSENT, bytes);
  if (sampled)
    add(c, C_SSENT, 1);
}

void ht_shim_count_recv(size_t bytes) {
  tcounters *c = mine();
  add(c, C_RECV, 1);
  add(c, C_BRECV, bytes);
}

void ht_shim_count_recv_sampled(void) { add(mine(), C_SRECV, 1); }

void ht_shim_count_failed(void) { add(mine(), C_FAILED, 1); }

void ht_traced_get_stats(ht_traced_stats *out) {
  if (out == NULL)
    return;
  uint64_t sum[C_N];
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < C_N; i++) {
    sum[i] = retired[i] +
             atomic_load_explicit(&fallback.v[i], memory_order_relaxed);
    for (tcounters *c = reg.next; c != &reg; c = c->next)
      sum[i] += atomic_load_explicit(&c->v[i], memory_order_relaxed);
  }
  pthread_mutex_unlock(&reg_lock);
  out->msgs_sent = sum[C_SENT];
  out->msgs_received = sum[C_RECV];
  out->bytes_sent = sum[C_BSENT];
  out->bytes_received = sum[C_BRECV];
  out->msgs_sent_sampled = sum[C_SSENT];
  out->msgs_received_sampled = sum[C_SRECV];
  out->requests_failed = sum[C_FAILED];
}
