/* The calling thread's current trace context (the dispatch context while
 * a handler runs, or what ht_context_restore set), the pending
 * per-message sampling hint, and the message counters.
 * Must never: allocate, lock, or keep anything but plain values (a
 * context outlives every span and messenger it came from). */
#include <stdatomic.h>
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/traced.h"
#include "traced_internal.h"

static _Thread_local ht_trace_context tl_current;
static _Thread_local bool tl_has_current;
static _Thread_local ht_sample_hint tl_hint;

bool ts_current(ht_trace_context *out) {
  if (tl_has_current)
    *out = tl_current;
  return tl_has_current;
}

void ts_set_current(const ht_trace_context *ctx) {
  if (ctx != NULL && ht_context_validate(ctx) == 0) {
    tl_current = *ctx;
    tl_has_current = true;
  } else {
    memset(&tl_current, 0, sizeof(tl_current));
    tl_has_current = false;
  }
}

ht_trace_context ht_context_capture(void) {
  ht_trace_context ctx;
  memset(&ctx, 0, sizeof(ctx));
  ts_current(&ctx);
  return ctx;
}

ht_trace_context ht_context_restore(const ht_trace_context *ctx) {
  ht_trace_context prev = ht_context_capture();
  ts_set_current(ctx);
  return prev;
}

void ht_message_sample(ht_sample_hint hint) {
  tl_hint = (unsigned)hint <= HT_SAMPLE_DEBUG ? hint : HT_SAMPLE_DEFAULT;
}

ht_sample_hint ts_take_hint(void) {
  ht_sample_hint h = tl_hint;
  tl_hint = HT_SAMPLE_DEFAULT;
  return h;
}

/* --- counters */

static atomic_uint_fast64_t n_sent, n_recv, b_sent, b_recv, s_sent, s_recv,
    n_failed;

static void add(atomic_uint_fast64_t *c, uint64_t v) {
  atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

void ts_count_send(size_t bytes, bool sampled) {
  add(&n_sent, 1);
  add(&b_sent, bytes);
  if (sampled)
    add(&s_sent, 1);
}

void ts_count_recv(size_t bytes) {
  add(&n_recv, 1);
  add(&b_recv, bytes);
}

void ts_count_recv_sampled(void) { add(&s_recv, 1); }

void ts_count_failed(void) { add(&n_failed, 1); }

static uint64_t get(atomic_uint_fast64_t *c) {
  return atomic_load_explicit(c, memory_order_relaxed);
}

void ht_traced_get_stats(ht_traced_stats *out) {
  if (out == NULL)
    return;
  out->msgs_sent = get(&n_sent);
  out->msgs_received = get(&n_recv);
  out->bytes_sent = get(&b_sent);
  out->bytes_received = get(&b_recv);
  out->msgs_sent_sampled = get(&s_sent);
  out->msgs_received_sampled = get(&s_recv);
  out->requests_failed = get(&n_failed);
}
