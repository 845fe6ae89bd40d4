/* Trace context validation and comparison. Pure. */
#include "hoptrace/context.h"
#include "hoptrace/error.h"
#include "common/context_check.h"

int ht_context_validate(const ht_trace_context *ctx) {
  return ht_context_check(ctx);
}

int ht_context_equal(const ht_trace_context *a, const ht_trace_context *b) {
  if (a == NULL || b == NULL) /* no context equals only no context */
    return a == b;
  return a->trace_id_hi == b->trace_id_hi &&
         a->trace_id_lo == b->trace_id_lo && a->span_id == b->span_id &&
         a->parent_span_id == b->parent_span_id && a->flags == b->flags;
}
