/* Trace context: the ids and flags that ride in every traced envelope, and
 * text bridges to the HTTP world (W3C traceparent, B3 single header).
 *
 * An ht_trace_context is a plain value: copy it freely, no handle, nothing
 * to free. All functions here are safe to call from any thread and do no
 * I/O and no allocation; all but ht_context_capture/restore (which read
 * and set the calling thread's current context) are pure.
 */
#ifndef HOPTRACE_CONTEXT_H
#define HOPTRACE_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "hoptrace/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record this trace and keep it (head-based sampling decision): recorded
 * to every session and exported. Same bit as W3C's "sampled" trace flag. */
#define HT_FLAG_SAMPLED 0x1u
/* Force recording (Dapper/B3 "debug"). Implies SAMPLED when recorded. */
#define HT_FLAG_DEBUG 0x2u
/* W3C Trace Context Level 2 "random" (its traceparent flag 0x02): the
 * trace id's rightmost 7 bytes are random. Not a sampling decision: kept
 * from a received traceparent, carried by the envelope (flags bit 2; a
 * peer that predates it carries it as a reserved bit), inherited by child
 * spans, written back to traceparent; B3 neither carries nor invents it. */
#define HT_FLAG_RANDOM 0x4u
/* Recorded in memory by the flight recorder (capture.h), not kept: the
 * span's events go to the overwrite rings and are exported only when a
 * trigger captures the trace. Set on every span a process in flight mode
 * starts; cleared from a remote context by a process not in flight mode
 * (no peer makes a server record). Never written to traceparent or B3. */
#define HT_FLAG_RECORDED 0x8u
/* Flight recorder: on a reply, the server (or a process below it)
 * captured the trace: the caller captures its part too; on a request,
 * the caller had captured the trace before this call (a failover's next
 * attempt, a replica sent after a failed one): the server captures its
 * part too. Honoured within the capture rate, once a trace. A span
 * started from a remote context does not inherit it (the traced messenger
 * reads it from the envelope and sets it on the calls and replies of a
 * trace this process captured). */
#define HT_FLAG_CAPTURE 0x10u
/* Every other bit is reserved: carried and preserved unchanged by the
 * binary envelope codec and by child spans, dropped by the text bridges. */
#define HT_FLAG_KNOWN_MASK                                                     \
  (HT_FLAG_SAMPLED | HT_FLAG_DEBUG | HT_FLAG_RANDOM | HT_FLAG_RECORDED |           \
   HT_FLAG_CAPTURE)

typedef struct ht_trace_context {
  uint64_t trace_id_hi;    /* upper 64 bits of the 128-bit trace id; 0 for
                              64-bit trace ids */
  uint64_t trace_id_lo;    /* lower 64 bits */
  uint64_t span_id;        /* the sender's span; never 0 */
  uint64_t parent_span_id; /* the sender's parent span; 0 for a root */
  uint32_t flags;          /* HT_FLAG_* and reserved bits */
} ht_trace_context;

/* 0 when the context is valid: trace id (hi|lo) and span id non-zero.
 * HT_EBADCONTEXT otherwise, HT_EINVAL for NULL. */
HT_API int ht_context_validate(const ht_trace_context *ctx);

/* 1 when both contexts have the same ids and flags, else 0. NULL equals
 * only NULL. */
HT_API int ht_context_equal(const ht_trace_context *a,
                            const ht_trace_context *b);

/* The calling thread's current context: the span of the traced handler
 * running on it, or what ht_context_restore set; zero ids
 * (ht_context_validate fails) when there is none. Carry it to another
 * thread to send from there as a child (traced.h). */
HT_API ht_trace_context ht_context_capture(void);

/* Makes ctx the calling thread's current context (NULL or zero ids:
 * none) and returns the previous one, to be restored when done. Sends
 * from this thread through a traced messenger then become children of
 * ctx. ctx is only read. */
HT_API ht_trace_context ht_context_restore(const ht_trace_context *ctx);

/* --- W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/)
 *
 * "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>". The W3C
 * parent-id is the sender's span, so it maps to ctx->span_id; our
 * parent_span_id is not carried (parsed as 0). Its flags 0x01 (sampled)
 * and 0x02 (random) map to SAMPLED and RANDOM, the others are dropped;
 * DEBUG is formatted as sampled. */
#define HT_TRACEPARENT_LEN 55

/* Parses `len` bytes of `text` (need not be NUL-terminated), ignoring
 * leading and trailing spaces and tabs (HTTP's optional whitespace around
 * a field value; none is allowed inside). Version 00 must then be exactly
 * 55 characters. A higher version (01..fe) may be longer,
 * provided character 55 is '-'; its first four fields are read as version
 * 00's. Rejects upper-case hex, version ff, all-zero trace or parent id,
 * and any length or delimiter error with HT_EBADHEADER (zero ids:
 * HT_EBADCONTEXT). On error *out is left unchanged. */
HT_API int ht_traceparent_parse(const char *text, size_t len,
                                ht_trace_context *out);

/* Writes a version-00 traceparent and a terminating NUL into buf, which
 * must hold HT_TRACEPARENT_LEN + 1 bytes (else HT_ENOSPC). Invalid
 * contexts are refused with HT_EBADCONTEXT. */
HT_API int ht_traceparent_format(const ht_trace_context *ctx, char *buf,
                                 size_t cap);

/* --- B3 single header (https://github.com/openzipkin/b3-propagation)
 *
 * "{TraceId}-{SpanId}[-{SamplingState}[-{ParentSpanId}]]" or a lone
 * "{SamplingState}". Trace id is 16 or 32 lower-hex characters, span and
 * parent ids 16. */
typedef enum ht_b3_sampling {
  HT_B3_SAMPLING_ABSENT = 0, /* decision deferred to the receiver */
  HT_B3_SAMPLING_DENY,       /* "0" */
  HT_B3_SAMPLING_ACCEPT,     /* "1" */
  HT_B3_SAMPLING_DEBUG       /* "d" */
} ht_b3_sampling;

/* Longest B3 single header: 32 + 1 + 16 + 1 + 1 + 1 + 16. */
#define HT_B3_MAX_LEN 68

/* Parses `len` bytes of `text`. Sets *out (flags: ACCEPT -> SAMPLED,
 * DEBUG -> SAMPLED|DEBUG) and, if `sampling` is not NULL, the sampling
 * state as written. A lone sampling state yields zero ids (check with
 * ht_context_validate before propagating). Errors: HT_EBADHEADER,
 * HT_EBADCONTEXT for zero trace or span id. On error nothing is written. */
HT_API int ht_b3_parse(const char *text, size_t len, ht_trace_context *out,
                       ht_b3_sampling *sampling);

/* Writes the header and a NUL into buf (HT_B3_MAX_LEN + 1 bytes always
 * suffice, else HT_ENOSPC). A trace id with hi == 0 is written as 16 hex
 * characters. The parent is written when non-zero and a sampling state is
 * present (B3 puts the state before the parent). If `len` is not NULL it
 * receives the length without the NUL. */
HT_API int ht_b3_format(const ht_trace_context *ctx, ht_b3_sampling sampling,
                        char *buf, size_t cap, size_t *len);

/* The sampling state a context's flags say: DEBUG, ACCEPT or DENY;
 * ABSENT for NULL (no context, no decision). */
HT_API ht_b3_sampling ht_b3_sampling_of(const ht_trace_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_CONTEXT_H */
