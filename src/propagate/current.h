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

/* current.c's thread state, in one block so that a function using
 * several of its fields finds the block once: the context is read only
 * while has. */
typedef struct ht_current_state {
  ht_trace_context ctx;
  bool has;
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

/* Sets (ctx valid) or clears (ctx NULL) the current context. */
static inline void ht_current_set(const ht_trace_context *ctx) {
  if (ctx != NULL)
    ht_current_.ctx = *ctx;
  ht_current_.has = ctx != NULL;
}

/* Takes the pending per-message hint word (and resets it to DEFAULT). */
static inline unsigned ht_current_take_hint(void) {
  unsigned h = ht_current_.hint;
  ht_current_.hint = HT_SAMPLE_DEFAULT;
  return h;
}

#endif /* HT_PROPAGATE_CURRENT_H */
