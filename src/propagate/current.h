/* The calling thread's current trace context and its pending per-message
 * sampling hint (ht_context_capture/restore, ht_message_sample in
 * hoptrace/traced.h). Inline: the traced messenger reads and sets them
 * for every message. Internal to libhoptrace. */
#ifndef HT_PROPAGATE_CURRENT_H
#define HT_PROPAGATE_CURRENT_H

#include <stdbool.h>

#include "hoptrace/context.h"
#include "hoptrace/sampler.h"
#include "common/tls_hot.h"

/* current.c's thread state: the context is read only while has_. */
extern HT_TLS_HOT ht_trace_context ht_current_ctx_;
extern HT_TLS_HOT bool ht_current_has_;
extern HT_TLS_HOT ht_sample_hint ht_current_hint_;

/* The thread's current context; false when there is none. */
static inline bool ht_current_get(ht_trace_context *out) {
  if (ht_current_has_)
    *out = ht_current_ctx_;
  return ht_current_has_;
}

/* Sets (ctx valid) or clears (ctx NULL) the current context. */
static inline void ht_current_set(const ht_trace_context *ctx) {
  if (ctx != NULL)
    ht_current_ctx_ = *ctx;
  ht_current_has_ = ctx != NULL;
}

/* Takes the pending per-message hint (and resets it to DEFAULT). */
static inline ht_sample_hint ht_current_take_hint(void) {
  ht_sample_hint h = ht_current_hint_;
  ht_current_hint_ = HT_SAMPLE_DEFAULT;
  return h;
}

#endif /* HT_PROPAGATE_CURRENT_H */
