/* The traced messenger: the plain messenger's API, with every hop traced.
 *
 * Build it with opts.flavour = HT_MESSENGER_TRACED, or leave the flavour
 * at HT_MESSENGER_DEFAULT and set HT_MESSENGER=traced in the environment.
 * Handlers, send calls and replies do not change. What it adds:
 *
 *  - an outgoing request or one-way with no current context starts a new
 *    trace (the sampler decides at the root); with a current context it
 *    becomes a child span. "cs" is recorded and the span's context is
 *    stamped into the envelope;
 *  - an incoming request or one-way continues the sender's trace in a
 *    server span ("sr"); while its handler runs, that span is the calling
 *    thread's current context, so whatever the handler sends is its child;
 *  - the reply records "ss" (server) and "cr" (client) and finishes both
 *    spans; timeouts, resets and error statuses are recorded on the span;
 *  - message events (send/receive, size, peer) on every sampled hop, and
 *    counters for all of them (ht_traced_get_stats).
 *
 * The functions below work on plain messengers too (they only touch the
 * calling thread's state or read a request); they matter only to traced
 * ones. All are lock-free and never allocate.
 *
 * Replying or sending later (timer, worker thread): the current context
 * belongs to the thread, so carry it (ht_context_capture/restore,
 * context.h). In the handler:
 *     ht_trace_context ctx = ht_context_capture();
 * and on the thread that later sends:
 *     ht_trace_context prev = ht_context_restore(&ctx);
 *     ht_peer_request(...);            // a child of the handler's span
 *     ht_context_restore(&prev);       // put the thread back as it was
 * Replying needs no capture: ht_request_reply records "ss" on the
 * request's own span from whichever thread answers.
 */
#ifndef HOPTRACE_TRACED_H
#define HOPTRACE_TRACED_H

#include <stdint.h>

#include "hoptrace/api.h"
#include "hoptrace/context.h"
#include "hoptrace/messenger.h"
#include "hoptrace/sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The context of an open request's server span (what its handler had as
 * current context), for code that holds only the ht_request. Any thread,
 * while req is open and its messenger is not closed. HT_EINVAL for NULL,
 * HT_ENOENT when req does not come from a traced messenger. */
HT_API int ht_request_context(const ht_request *req, ht_trace_context *out);

/* Per-message sampling: the next request or one-way sent from the
 * calling thread (through a traced messenger) is recorded (HT_SAMPLE_YES),
 * not recorded (HT_SAMPLE_NO) or recorded and marked DEBUG for downstream
 * peers (HT_SAMPLE_DEBUG), whatever the sampler or the current context
 * says; HT_SAMPLE_DEFAULT cancels. The flag is used up by that one send.
 * Downstream processes decide by their own policy (a remote DEBUG flag is
 * honoured only by servers that trust it, within their rate limit). */
HT_API void ht_message_sample(ht_sample_hint hint);

/* What a handler knows, on its own span. Key-values (string or integer)
 * and annotations (a name at the current time) recorded on:
 *  - ht_request_*: the server span of an open request (any thread, while
 *    req is open: before ht_request_reply or ht_request_drop);
 *  - ht_current_*: the calling thread's current span (while a handler
 *    runs, its request's span; or what ht_context_restore set);
 *  - ht_next_call_*: the client span of the next request or one-way sent
 *    from the calling thread (through a traced messenger), whatever
 *    becomes of it; used up by that send.
 * Strings are copied (or written) before the call returns: the caller
 * keeps ownership. Free when the span is not sampled, or not written (no
 * session recorded when it started: a span is written whole or not at
 * all): 0 is returned and nothing is recorded (ht_next_call_* copies its values only when the
 * next call may be sampled: no current context, or a sampled one). Bounds:
 * a key is 1 to HT_KV_KEY_MAX bytes (else HT_EINVAL, nothing recorded); a
 * string value longer than HT_KV_VALUE_MAX bytes is cut there (at a UTF-8
 * character boundary) and counted (kvs_truncated); a span takes at most
 * HT_SPAN_KVS_MAX key-values and annotations through these functions (the
 * next call: HT_NEXT_CALL_KVS_MAX), past that HT_ENOSPC, nothing recorded,
 * counted (kvs_dropped). HT_EINVAL for a NULL key, value or name. On a
 * plain messenger's request they record nothing and return 0. */
#define HT_KV_KEY_MAX 64
#define HT_KV_VALUE_MAX 256
#define HT_SPAN_KVS_MAX 32
#define HT_NEXT_CALL_KVS_MAX 8
HT_API int ht_request_kv_str(ht_request *req, const char *key, const char *value);
HT_API int ht_request_kv_int(ht_request *req, const char *key, int64_t value);
HT_API int ht_request_annotate(ht_request *req, const char *name);
HT_API int ht_current_kv_str(const char *key, const char *value);
HT_API int ht_current_kv_int(const char *key, int64_t value);
HT_API int ht_current_annotate(const char *name);
HT_API int ht_next_call_kv_str(const char *key, const char *value);
HT_API int ht_next_call_kv_int(const char *key, int64_t value);

/* Process-wide message counters of traced messengers (a snapshot).
 * Sampled counts are the hops whose events were recorded. Grows at the
 * end: set `size` before the call, as for ht_sampling_stats. */
typedef struct ht_traced_stats {
  size_t size; /* set by the caller: sizeof(ht_traced_stats) */
  uint64_t msgs_sent, msgs_received;
  uint64_t bytes_sent, bytes_received; /* frame bytes, prefix included */
  uint64_t msgs_sent_sampled, msgs_received_sampled;
  uint64_t requests_failed; /* client spans ended by an error */
  uint64_t kvs_dropped;     /* key-values past HT_SPAN_KVS_MAX (ht_request_kv_*, ...) */
  uint64_t kvs_truncated;   /* string values cut at HT_KV_VALUE_MAX */
  uint64_t captures_fired;  /* flight-recorder triggers fired here (capture.h) */
  uint64_t captures_unrecorded; /* ... while no session recorded hoptrace:capture */
  /* Capture notices (capture.h): sent down to peers this process called
   * for the trace (accepted on the connection), or not (past the rate or
   * the hop bound, queue full, peer gone): each counted once, when its
   * messenger's loop knows which; received (a notice, or a reply's HT_FLAG_CAPTURE) and
   * honoured (captured here, or a repeat of a capture here), or refused
   * (a trace this process took no part in, past the notices' rate or the
   * capture rate (also in captures_limited), a notice's hops out of
   * range). */
  uint64_t notices_sent, notices_dropped, notices_received, notices_refused;
  /* Automatic triggers (slow, error, a notice) past the process's capture
   * rate (HT_CAPTURE_RATE, capture.h): no capture event, no notices. */
  uint64_t captures_limited;
  /* Recorded calls whose peer the breadcrumbs could not keep (more than
   * 4 peers called for one trace, or more than 64 peer URLs a messenger):
   * a capture of their trace is not passed down to that peer. */
  uint64_t crumb_peers_dropped;
} ht_traced_stats;

/* Fills the fields of *out that out->size covers. HT_EINVAL for NULL or
 * a size below the first counter's end. */
HT_API int ht_traced_get_stats(ht_traced_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_TRACED_H */
