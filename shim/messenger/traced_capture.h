/* The flight recorder's triggers, as the traced messenger fires them
 * (traced_capture.c; the policy: include/hoptrace/capture.h). Internal to
 * libhoptrace. */
#ifndef HT_SHIM_TRACED_CAPTURE_H
#define HT_SHIM_TRACED_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "hoptrace/context.h"

/* A recorded span of ctx ended (client: a call; else a server span),
 * started at start_ns (tracer clock; 0: never started, e.g. a call
 * refused before it was sent: only its status can fire), with status
 * (0: ok): fires a capture when the policy says so. service: the
 * messenger's, named as the capture's origin. */
void ht_shim_capture_check(const ht_trace_context *ctx, bool client, uint64_t start_ns,
                      int32_t status, const char *service);

/* Fires a capture of ctx's trace: the event, and the counters. */
void ht_shim_capture_fire(const ht_trace_context *ctx, uint8_t why, uint64_t threshold,
                     uint64_t value, const char *origin);

#endif /* HT_SHIM_TRACED_CAPTURE_H */
