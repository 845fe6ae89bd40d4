/* ht_context_validate's rule, inline for the span starts (one per
 * message in the traced messenger). Internal to libhoptrace. */
#ifndef HT_COMMON_CONTEXT_CHECK_H
#define HT_COMMON_CONTEXT_CHECK_H

#include "hoptrace/context.h"
#include "hoptrace/error.h"

static inline int ht_context_check(const ht_trace_context *ctx) {
  if (ctx == NULL)
    return HT_EINVAL;
  if ((ctx->trace_id_hi | ctx->trace_id_lo) == 0 || ctx->span_id == 0)
    return HT_EBADCONTEXT;
  return 0;
}

#endif /* HT_COMMON_CONTEXT_CHECK_H */
