/* The calling thread's current trace context (the dispatch context while
 * a traced handler runs, or what ht_context_restore set) and the pending
 * per-message sampling hint.
 * Must never: keep anything but plain values in a context (a context
 * outlives every span and messenger it came from), lock or allocate. */
#include "propagate/current.h"

#include <string.h>

#include "hoptrace/traced.h"

static _Thread_local ht_trace_context tl_current;
static _Thread_local bool tl_has_current;
static _Thread_local ht_sample_hint tl_hint;

bool ht_current_get(ht_trace_context *out) {
  if (tl_has_current)
    *out = tl_current;
  return tl_has_current;
}

void ht_current_set(const ht_trace_context *ctx) {
  /* ht_current_get reads tl_current only while tl_has_current */
  if (ctx != NULL)
    tl_current = *ctx;
  tl_has_current = ctx != NULL;
}

ht_trace_context ht_context_capture(void) {
  ht_trace_context ctx;
  memset(&ctx, 0, sizeof(ctx));
  ht_current_get(&ctx);
  return ctx;
}

ht_trace_context ht_context_restore(const ht_trace_context *ctx) {
  ht_trace_context prev = ht_context_capture();
  /* an application's context: an invalid one clears, never stays current */
  bool valid = ctx != NULL && ht_context_validate(ctx) == 0;
  ht_current_set(valid ? ctx : NULL);
  return prev;
}

void ht_message_sample(ht_sample_hint hint) {
  tl_hint = (unsigned)hint <= HT_SAMPLE_DEBUG ? hint : HT_SAMPLE_DEFAULT;
}

ht_sample_hint ht_current_take_hint(void) {
  ht_sample_hint h = tl_hint;
  tl_hint = HT_SAMPLE_DEFAULT;
  return h;
}
