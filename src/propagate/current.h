/* The calling thread's current trace context and its pending per-message
 * sampling hint (ht_context_capture/restore, ht_message_sample in
 * hoptrace/traced.h). Internal to libhoptrace. */
#ifndef HT_PROPAGATE_CURRENT_H
#define HT_PROPAGATE_CURRENT_H

#include <stdbool.h>

#include "hoptrace/context.h"
#include "hoptrace/sampler.h"

/* The thread's current context; false when there is none. */
bool ht_current_get(ht_trace_context *out);
/* Sets (ctx valid) or clears (ctx NULL) the current context. */
void ht_current_set(const ht_trace_context *ctx);
/* Takes the pending per-message hint (and resets it to DEFAULT). */
ht_sample_hint ht_current_take_hint(void);

#endif /* HT_PROPAGATE_CURRENT_H */
