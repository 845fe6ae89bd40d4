/* Span starts and ends that record no event of their own: for the traced
 * messenger (shim/), which records a span's first and last hop in the
 * span's start and end events (span_start_send/recv, span_end_send/recv),
 * one event where there were two. Same decisions and ids as the
 * ht_span_start_* functions of span.h. Internal to libhoptrace. */
#ifndef HT_PROPAGATE_SPAN_QUIET_H
#define HT_PROPAGATE_SPAN_QUIET_H

#include <stdbool.h>
#include <stdint.h>

#include "hoptrace/span.h"

int ht_span_start_root_quiet(ht_span *span, const ht_span_info *info,
                             ht_sample_hint hint);
int ht_span_start_local_quiet(ht_span *span, const ht_trace_context *ctx,
                              const ht_span_info *info);
int ht_span_start_remote_quiet(ht_span *span, const ht_trace_context *remote,
                               const ht_span_info *info);

/* Ends the span like ht_span_finish but records nothing: true when
 * ht_span_finish would have recorded span_end (live and sampled, with a
 * recorder installed); *status is the status it would have carried. */
bool ht_span_finish_quiet(ht_span *span, int32_t *status);

#endif
