/* Span starts that record no event of their own, and the end that records
 * the whole span side in one event: for the traced messenger (shim/),
 * which records a request's span as one event when it finishes (schema 3,
 * src/provider/hoptrace_schema.h). Same decisions and ids as the
 * ht_span_start_* functions of span.h; no names (they go with the end).
 * Internal to libhoptrace. */
#ifndef HT_PROPAGATE_SPAN_QUIET_H
#define HT_PROPAGATE_SPAN_QUIET_H

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

#include "hoptrace/span.h"
#include "common/context_check.h"
#include "propagate/span_start.h"

/* Inline: the traced messenger starts one per message, and a call costs
 * about what the start does. Return 0, or (a context that is not valid)
 * HT_EBADCONTEXT with the span zeroed; span must not be NULL. An unsampled
 * quiet span gets its ids only (span_start.h): read its ctx, ask
 * ht_span_is_sampled, and give it to no other ht_span_* function. */
HT_SPAN_INLINE int ht_span_start_root_quiet(ht_span *span,
                                           ht_sample_hint hint) {
  ht_span_root_(span, hint);
  return 0;
}

HT_SPAN_INLINE int ht_span_start_local_quiet(ht_span *span,
                                            const ht_trace_context *ctx) {
  int rc = ht_context_check(ctx);
  if (__builtin_expect(rc != 0, 0)) {
    memset(span, 0, sizeof(*span));
    return rc;
  }
  ht_span_child_(span, ctx, ctx->flags);
  return 0;
}

HT_SPAN_INLINE int ht_span_start_remote_quiet(ht_span *span,
                                             const ht_trace_context *remote) {
  int rc = ht_context_check(remote);
  if (__builtin_expect(rc != 0, 0)) {
    memset(span, 0, sizeof(*span));
    return rc;
  }
  ht_span_remote_(span, remote);
  return 0;
}

/* Ends the span like ht_span_finish, recording it as one span side
 * (events.h): started at start (ht_clock_now), named by desc (from
 * ht_span_desc_ref) or, when that is NULL, by info (strings may be NULL),
 * with the peer from ht_span_peer_ref (may be NULL); frames: which of
 * its ends were a frame (events.h HT_SIDE_*_FRAME); kv_key (a valid
 * key, or NULL) and kv_value: one integer key-value written in the same
 * event. */
void ht_span_finish_side_kv(ht_span *span, const void *desc,
                            const ht_span_info *info, uint64_t start,
                            const void *peer, uint8_t frames,
                            const char *kv_key, int64_t kv_value);

static inline void ht_span_finish_side(ht_span *span, const void *desc,
                                       const ht_span_info *info, uint64_t start,
                                       const void *peer, uint8_t frames) {
  ht_span_finish_side_kv(span, desc, info, start, peer, frames, NULL, 0);
}

/* References to the span's names and to a peer's name, valid for the rest
 * of the process, for ht_span_finish_side; NULL when the span records
 * nothing or no reference can be kept (then keep the strings). */
const void *ht_span_desc_ref(const ht_span *span, const ht_span_info *info);
const void *ht_span_peer_ref(const ht_span *span, const char *peer);

/* A message sent (dir 0) or received (1) on behalf of ctx when no span is
 * at hand, and the annotation it makes ("cs", "sr", "ss", "cr"): recorded
 * when ctx is sampled. Strings may be NULL. */
void ht_context_record_frame(const ht_trace_context *ctx, int dir,
                             const char *annotation, uint32_t type,
                             uint64_t seq, uint64_t size, const char *peer);

#endif
