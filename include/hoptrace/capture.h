/* The flight recorder: record every request in memory, keep the ones
 * that went wrong (DESIGN.md "Flight recorder").
 *
 * Flight mode: every span this process starts records its events, marked
 * HT_FLAG_RECORDED, whatever the head sampler decided (HT_FLAG_SAMPLED
 * still says which traces are kept). The events go to the sessions that
 * enable them: `hoptrace record --flight` keeps them in LTTng overwrite
 * rings in memory (a snapshot session) and writes nothing until a
 * trigger fires. HT_FLIGHT=1 in the environment starts a traced process
 * in flight mode; the control socket turns it on and off (`flight on`).
 * HT_FLIGHT=memory does too, and keeps the unsampled span sides (and
 * their key-values) in rings
 * of the process's own memory (HT_FLIGHT_SLOTS records a thread, a power
 * of two, default 16384: 2 MiB), written to the session (span_r, tag_i,
 * tag_s events) only when their trace is captured (README "Flight recorder").
 *
 * Triggers: a traced messenger's span that ends slower than a threshold
 * (a client call; a server span) or in error (any span, including a call
 * refused before it was sent), or a person (ht_capture_trace, control
 * `capture`), emits an LTTng-UST event hoptrace:capture for the trace;
 * the host's recorder snapshots its rings on it. Set from the environment
 * (HT_CAPTURE, ht_capture_policy_parse's text: read once, when the first
 * traced messenger is made or the policy first set or read, so that a
 * policy the application sets wins), by ht_capture_policy_set, or at run
 * time (control `capture-policy TEXT`). Triggers fire only for spans
 * that record. Automatic triggers (slow, error, a peer's notice) fire at
 * most HT_CAPTURE_RATE a second per process (default 1000; 0: no
 * limit; read with HT_CAPTURE): past it nothing fires and
 * ht_traced_stats.captures_limited counts it; ht_capture_trace is never
 * limited.
 *
 * All functions are thread-safe and never block; none allocates.
 */
#ifndef HOPTRACE_CAPTURE_H
#define HOPTRACE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "hoptrace/api.h"
#include "hoptrace/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flight mode on (non-zero) or off, for spans started from now on (a
 * span keeps the flags it started with). Returns 0. */
HT_API int ht_flight_set(int on);

/* 1 in flight mode, else 0. */
HT_API int ht_flight_enabled(void);

/* What fires a capture. Grows at the end: set `size` (as
 * ht_traced_stats). A threshold of 0 is off. */
typedef struct ht_capture_policy {
  size_t size;             /* sizeof(ht_capture_policy) */
  uint64_t slow_client_ns; /* a client call slower than this (cs to cr,
                              or to its failure) */
  uint64_t slow_server_ns; /* a server span slower than this (sr to ss) */
  int errors;              /* non-zero: any span that ends in error */
  /* Non-zero: a client call (a server span) slower than the last
   * minute's 99.9th percentile of its operation, once 1,000 of them ended
   * in that minute (the fixed threshold of that side is then unused). */
  int adaptive_client, adaptive_server;
} ht_capture_policy;

/* Makes *policy the process's (read, not kept). HT_EINVAL for NULL or a
 * size below the last field's end. */
HT_API int ht_capture_policy_set(const ht_capture_policy *policy);

/* Fills the fields of *out that out->size covers. HT_EINVAL as above. */
HT_API int ht_capture_policy_get(ht_capture_policy *out);

/* Parses "off", or comma-separated words: slow-client=DURATION,
 * slow-server=DURATION (DURATION: an integer with ns, us, ms or s, or
 * p99.9: adaptive), error; into *out, whose size is set to the caller's
 * sizeof (the macro passes it; only that many bytes are written).
 * HT_EINVAL for NULL, an unknown word, a bad duration, a size below the
 * `errors` field's end, or p99.9 with a size that has no room for it:
 * *out is then untouched. text is only read. */
HT_API int ht_capture_policy_parse_sized(const char *text,
                                         ht_capture_policy *out, size_t size);
#define ht_capture_policy_parse(text, out)                                     \
  ht_capture_policy_parse_sized((text), (out), sizeof *(out))

/* Writes the policy as ht_capture_policy_parse reads it ("off" when
 * nothing fires) into buf (cap bytes, NUL-terminated). HT_ENOSPC when it
 * does not fit, HT_EINVAL for NULL. */
HT_API int ht_capture_policy_format(const ht_capture_policy *policy, char *buf,
                                    size_t cap);

/* Captures by hand: a hoptrace:capture event for ctx's trace (its span id
 * names the span, 0 for none), or with ctx NULL for no trace in
 * particular (the recorder snapshots all it holds). ctx is only read.
 * HT_EBADCONTEXT for a ctx whose trace id is 0. Returns 0 also when no
 * session records the event (nothing to capture into). */
HT_API int ht_capture_trace(const ht_trace_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_CAPTURE_H */
