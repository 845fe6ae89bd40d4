/* The flight recorder's triggers, as the traced messenger fires them
 * (traced_capture.c; the policy: include/hoptrace/capture.h). Internal to
 * libhoptrace. */
#ifndef HT_SHIM_TRACED_CAPTURE_H
#define HT_SHIM_TRACED_CAPTURE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hoptrace/context.h"

/* Applies HT_CAPTURE once, the first time a traced messenger is made or
 * the policy is set or read (whichever comes first): an application's
 * own ht_capture_policy_set then wins over the variable. */
void ht_shim_capture_env(void);

/* The policy has a trigger set (any of them): what the common case, none,
 * tests inline (a call to the full check, its arguments and loads cost
 * about 50 instructions a span side). */
extern atomic_bool ht_shim_capture_armed_;

/* The traced messenger's before_reply gate (hooks.h): bit 0 while the
 * policy is armed, plus 2 for each open server span whose reply is to
 * carry HT_FLAG_CAPTURE (ts_slot.capture, traced_spread.c). */
extern atomic_uint ht_shim_reply_gate_;
#define HT_SHIM_GATE_ARMED 1u
#define HT_SHIM_GATE_FLAGGED 2u

bool ht_shim_capture_check_(const ht_trace_context *ctx, bool client, uint64_t start_ns,
                            int32_t status, const char *service, const void *desc);

/* A recorded span of ctx ends (client: a call; else a server span),
 * started at start_ns (tracer clock; 0: never started), with status (0:
 * ok): fires a capture when the policy says so, and says whether it
 * did. service: the messenger's, named as the capture's origin; desc:
 * its names' reference (the operation an adaptive threshold follows;
 * NULL: none). */
static inline bool ht_shim_capture_check(const ht_trace_context *ctx, bool client,
                                         uint64_t start_ns, int32_t status,
                                         const char *service, const void *desc) {
  return atomic_load_explicit(&ht_shim_capture_armed_, memory_order_relaxed) &&
         ht_shim_capture_check_(ctx, client, start_ns, status, service, desc);
}

/* Fires a capture of ctx's trace (hops: 0 here, else how far from the
 * process that fired it a notice came): the event, and the counters. */
void ht_shim_capture_fire(const ht_trace_context *ctx, uint8_t why, uint8_t hops,
                          uint64_t threshold, uint64_t value, const char *origin);

/* A capture notice (or a reply's HT_FLAG_CAPTURE) reached this process
 * for ctx's trace, hops from the one that fired: its capture event, its
 * origin the service the notice reached (never empty: babeltrace2 2.0.4
 * can read an empty string as an earlier event's). false: past the
 * process's capture rate (counted), nothing fired: spread it no further. */
bool ht_shim_capture_noticed(const ht_trace_context *ctx, unsigned hops, const char *service);

#endif /* HT_SHIM_TRACED_CAPTURE_H */
