/* The trace headers of an HTTP request into the parent of its server
 * span. W3C traceparent first (the W3C spec: it wins over vendor
 * headers), else B3's single `b3` header. A B3 header without a sampling
 * state ("deferred") carries no SAMPLED flag, so a PARENT sampler does
 * not record it, as OpenTelemetry's B3 propagator reads it; a lone
 * sampling state ("0", "1", "d") starts a new root with that decision.
 *
 * Never: continue a header that failed to parse, or let one fail
 * silently (each is counted, and the request still gets a span). */
#include <string.h>

#include "gateway.h"
#include "hoptrace/context.h"

static ht_sample_hint hint_of(ht_b3_sampling s) {
  return s == HT_B3_SAMPLING_DENY     ? HT_SAMPLE_NO
         : s == HT_B3_SAMPLING_ACCEPT ? HT_SAMPLE_YES
         : s == HT_B3_SAMPLING_DEBUG  ? HT_SAMPLE_DEBUG
                                      : HT_SAMPLE_DEFAULT;
}

gw_parent gw_span_start(ht_span *span, const ht_span_info *info, const char *traceparent,
                        unsigned n_traceparent, const char *b3, gw_stats *st) {
  ht_span_init(span);
  ht_trace_context ctx;
  if (n_traceparent > 0) {
    /* several traceparent fields: W3C says the value is then invalid */
    if (n_traceparent == 1 && ht_traceparent_parse(traceparent, strlen(traceparent), &ctx) == 0 &&
        ht_span_start_remote(span, &ctx, info) == 0) {
      atomic_fetch_add(&st->from_traceparent, 1);
      return GW_TRACEPARENT;
    }
    atomic_fetch_add(&st->bad_traceparent, 1);
  } else if (b3 != NULL) {
    ht_b3_sampling s = HT_B3_SAMPLING_ABSENT;
    if (ht_b3_parse(b3, strlen(b3), &ctx, &s) == 0) {
      if (ht_context_validate(&ctx) != 0) { /* a lone sampling state */
        atomic_fetch_add(&st->roots, 1);
        ht_span_start_root(span, info, hint_of(s));
        return GW_ROOT;
      }
      if (ht_span_start_remote(span, &ctx, info) == 0) {
        atomic_fetch_add(&st->from_b3, 1);
        return GW_B3;
      }
    }
    atomic_fetch_add(&st->bad_b3, 1);
  }
  atomic_fetch_add(&st->roots, 1);
  ht_span_start_root(span, info, HT_SAMPLE_DEFAULT);
  return GW_ROOT;
}
