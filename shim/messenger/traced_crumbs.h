/* Breadcrumbs of the flight recorder (DESIGN.md "Flight recorder"): a
 * traced messenger remembers, for its recent recorded traces, the
 * outgoing peers it called for them, and whether it took part at all, so
 * that a capture fired anywhere in a trace reaches every process of it:
 * down the calls by notices (ht_transport_notice), up by the reply's
 * HT_FLAG_CAPTURE. Bounded: a direct-mapped table (a newer trace takes an
 * older one's place), at most TS_CRUMB_PEERS peers a trace and
 * TS_CRUMB_URLS a messenger (a call past either counted:
 * crumb_peers_dropped), and notices sent or honoured within a rate.
 * Internal to libhoptrace. */
#ifndef HT_SHIM_TRACED_CRUMBS_H
#define HT_SHIM_TRACED_CRUMBS_H

#include <stdbool.h>
#include <stdint.h>

#include "hoptrace/context.h"
#include "transport/hooks.h"

#define TS_CRUMB_PEERS 4
#define TS_CRUMB_SLOTS 16384u /* a power of two; 24 bytes each */
#define TS_CRUMB_URLS 64      /* distinct outgoing peers remembered */
#define TS_NOTICE_RATE 500    /* notices sent, and honoured, a second ... */
#define TS_NOTICE_BURST 100   /* ... with bursts up to this */
#define TS_NOTICE_HOPS_MAX 32 /* a notice's hops: more are refused, not forwarded */

typedef struct ts_crumbs ts_crumbs;

/* NULL: no memory. */
ts_crumbs *ht_shim_crumbs_new(void);
void ht_shim_crumbs_free(ts_crumbs *c);

/* ctx's trace passed here: called `to` (an outgoing call; its URL is
 * copied when new), or, with to NULL, served here. true when the trace
 * was captured here already (claimed): the call then carries the
 * capture to its server. */
bool ht_shim_crumbs_note(ts_crumbs *c, const ht_trace_context *ctx, const ht_hook_peer *to);

/* Claims ctx's trace for capture: 1 the first time (the peers it called
 * copied into urls, as many as *n), 0 when it was claimed before (a loop,
 * or a second trigger), -1 when known_only and the trace is not one this
 * messenger took part in (still remembered). The URLs stay valid as long
 * as c. */
int ht_shim_crumbs_claim(ts_crumbs *c, const ht_trace_context *ctx, bool known_only,
                    const char *urls[TS_CRUMB_PEERS], int *n);

/* Undoes a claim (1 above) whose capture did not fire, so that a later
 * notice or flag may still capture the trace; meanwhile one counts as a
 * repeat. */
void ht_shim_crumbs_unclaim(ts_crumbs *c, const ht_trace_context *ctx);

/* A token of the notice rate (sent: 0, honoured: 1, taken by a first
 * claim only): true when one is left at now_ns (a reading older than one
 * used before refills nothing). */
bool ht_shim_crumbs_rate(ts_crumbs *c, int which, uint64_t now_ns);

#endif /* HT_SHIM_TRACED_CRUMBS_H */
