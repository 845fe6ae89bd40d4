/* A capture spread across processes (DESIGN.md "Flight recorder"): when
 * a trigger fires here, or another process tells us its capture, the
 * traced messenger passes it on once, within the notice rate: down to
 * the peers it called for the trace (a notice each) and up to its callers
 * (HT_FLAG_CAPTURE on the replies of the trace's open server spans). The
 * breadcrumbs that remember the peers: traced_crumbs.c. Off the hot
 * path: runs only for a captured trace.
 *
 * Must never: send more notices than the rate allows, or honour a notice
 * for a trace this messenger took no part in.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hoptrace/context.h"
#include "common/clock.h"
#include "common/counters.h"
#include "common/spin.h"
#include "messenger/traced_capture.h"
#include "messenger/traced_crumbs.h"
#include "messenger/traced_state.h"
#include "transport/hooks.h"

/* Marks the open server spans of ctx's trace: their replies carry
 * HT_FLAG_CAPTURE up to the caller. Not in the span's context: the thread
 * that answers copies that without the lock (h_before_reply sets the
 * flag there); each mark opens the before_reply gate until its slot goes. */
static void flag_open_servers(ts_state *st, const ht_trace_context *ctx) {
  ht_spin_lock(&st->lock);
  for (ts_slot *s = st->live.next; s != &st->live; s = s->next)
    if (!s->owned && s->span.ctx.trace_id_lo == ctx->trace_id_lo &&
        s->span.ctx.trace_id_hi == ctx->trace_id_hi &&
        !atomic_load_explicit(&s->capture, memory_order_relaxed)) {
      atomic_store_explicit(&s->capture, true, memory_order_relaxed);
      atomic_fetch_add_explicit(&ht_shim_reply_gate_, HT_SHIM_GATE_FLAGGED,
                                memory_order_relaxed);
    }
  ht_spin_unlock(&st->lock);
}

/* ctx's trace was captured here (hops from the process that fired it):
 * the first time, a notice to each peer called for it, and the flag on
 * the replies of its open server spans. */
static void spread_capture(ts_state *st, const ht_trace_context *ctx, int rc,
                           const char **urls, int n, unsigned hops) {
  ht_messenger *m = atomic_load_explicit(&st->m, memory_order_acquire);
  if (rc != 1 || m == NULL)
    return;
  ht_trace_context notice = *ctx;
  notice.flags &= ~HT_FLAG_CAPTURE;
  uint64_t now = n > 0 ? ht_clock_now() : 0;
  for (int i = 0; i < n; i++) {
    /* hops <= TS_NOTICE_HOPS_MAX (ht_shim_on_notice): no overflow. The
     * transport counts a notice it was given, sent or not (queued from
     * another thread, only the loop knows): here, those never given. */
    if (hops < TS_NOTICE_HOPS_MAX && ht_shim_crumbs_rate(st->crumbs, 0, now))
      (void)ht_transport_notice(m, urls[i], &notice, (int32_t)(hops + 1));
    else
      ht_counter_add(HT_CTR_NOTICES_DROPPED, 1);
  }
  flag_open_servers(st, ctx);
}

/* A trigger fired here for ctx's trace (traced_state.h). */
void ht_shim_captured_here(ts_state *st, const ht_trace_context *ctx) {
  const char *urls[TS_CRUMB_PEERS];
  int n = 0;
  int rc = st->crumbs != NULL ? ht_shim_crumbs_claim(st->crumbs, ctx, false, urls, &n) : -1;
  spread_capture(st, ctx, rc, urls, n, 0);
}

/* Another process captured ctx's trace and told us (a notice from a
 * caller, hops away; or a reply's flag, known_only false: we called it):
 * captured here too, once, if it is ours and within the rates (the
 * notices', then the process's captures'). Only a first claim spends a
 * notice token, the work the rate bounds: a notice for a trace not ours
 * or told already spends none (else any connected peer sending made-up
 * trace ids would starve the real notices). */
void ht_shim_captured_there(ts_state *st, const ht_trace_context *ctx, unsigned hops,
                            bool known_only) {
  const char *urls[TS_CRUMB_PEERS];
  int n = 0;
  int rc = st->crumbs != NULL ? ht_shim_crumbs_claim(st->crumbs, ctx, known_only, urls, &n) : -1;
  if (rc == 1 && (!ht_shim_crumbs_rate(st->crumbs, 1, ht_clock_now()) ||
                  !ht_shim_capture_noticed(ctx, hops, st->service))) {
    /* past the notices' rate, or the process's capture rate (counted):
     * not captured, so not claimed either */
    ht_shim_crumbs_unclaim(st->crumbs, ctx);
    rc = -1;
  }
  ht_counter_add(rc < 0 ? HT_CTR_NOTICES_REFUSED : HT_CTR_NOTICES_RECEIVED, 1);
  spread_capture(st, ctx, rc, urls, n, hops); /* rc 0: captured here already, no loop */
}

/* A capture notice from a process that called this one: its trace, and
 * the hops it came (the envelope's status, any int32 a peer sends: bound
 * before it is forwarded as hops + 1). Honoured only for a trace this
 * messenger took part in, within the rate. */
void ht_shim_on_notice(void *arg, const ht_envelope *env, const ht_hook_origin *from) {
  (void)from;
  if (!env->has_trace || env->status < 1 || env->status > TS_NOTICE_HOPS_MAX) {
    ht_counter_add(HT_CTR_NOTICES_REFUSED, 1);
    return;
  }
  ht_shim_captured_there(arg, &env->trace, (unsigned)env->status, true);
}
