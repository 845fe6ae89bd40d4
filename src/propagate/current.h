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
#include "propagate/flight.h"

/* current.c's thread state, in one block so that a function using
 * several of its fields finds the block once: the context is read only
 * while has. */
typedef struct ht_current_state {
  ht_trace_context ctx;
  bool has;
  bool writes;   /* ctx's span is written: what is added to it is recorded */
  unsigned hint; /* an ht_sample_hint, | HT_HINT_KVS */
} ht_current_state;

/* In the hint word: key-values wait for the next call (ht_next_call_kv_*),
 * so that a send finds out with the one load it makes for the hint. */
#define HT_HINT_KVS 0x100u
#define HT_HINT_SAMPLE(word) ((ht_sample_hint)((word) & 0xffu))

extern HT_TLS_HOT ht_current_state ht_current_;

/* The thread's current context; false when there is none. */
static inline bool ht_current_get(ht_trace_context *out) {
  if (ht_current_.has)
    *out = ht_current_.ctx;
  return ht_current_.has;
}

/* Sets (ctx valid) or clears (ctx NULL) the current context, and whether
 * its span is written (a span decides at its start: a key-value added
 * through the context of a span that is not must not be recorded). */
static inline void ht_current_set_span(const ht_trace_context *ctx, bool writes) {
  if (ctx != NULL)
    ht_current_.ctx = *ctx;
  ht_current_.has = ctx != NULL;
  ht_current_.writes = writes;
}

/* An application's context (ht_context_restore): its span is not known
 * here, so its sampled flag says whether it is written. */
static inline void ht_current_set(const ht_trace_context *ctx) {
  ht_current_set_span(ctx, ctx != NULL && (ctx->flags & HT_FLAG_RECORDS));
}

/* Whether the current context's span is written. */
static inline bool ht_current_writes(void) {
  return ht_current_.has && ht_current_.writes;
}

/* Takes the pending per-message hint word (and resets it to DEFAULT). */
static inline unsigned ht_current_take_hint(void) {
  unsigned h = ht_current_.hint;
  ht_current_.hint = HT_SAMPLE_DEFAULT;
  return h;
}

#endif /* HT_PROPAGATE_CURRENT_H */
