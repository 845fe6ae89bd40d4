/* The calling thread's current trace context (the dispatch context while
 * a traced handler runs, or what ht_context_restore set) and the pending
 * per-message sampling hint.
 * Must never: keep anything but plain values in a context (a context
 * outlives every span and messenger it came from), lock or allocate. */
#include "propagate/span_path.h"

#include <string.h>

#include "hoptrace/traced.h"
#include "common/tls_hot.h"

HT_TLS_HOT ht_current_state ht_current_;

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
  ht_current_.hint = (ht_current_.hint & HT_HINT_KVS) |
                     ((unsigned)hint <= HT_SAMPLE_DEBUG ? hint : HT_SAMPLE_DEFAULT);
}
